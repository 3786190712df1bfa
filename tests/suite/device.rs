//! Generated functions on device arrays (`<name>_device`): on every device
//! this process has (the CPU devices; a GPU when present), each result equals
//! the plain call's on host arrays, and the dispatch errors name arguments.

use oxla::ndarray::{array, Array1, Array2, ArrayView1, ArrayView2};
use oxla::{device_put, grad, jit, value_and_grad, vmap, Device, DeviceArray};

#[jit]
fn fused(x: &[f32], y: &[f32], s: f32) -> (Vec<f32>, f32) {
    let z = x * s + y.tanh();
    (z, sum(z * z))
}

#[grad(loss_grad, wrt = w)]
fn loss(w: &[f64], x: &[f64], y: f64) -> f64 {
    (1.0 + (-y * dot(w, x)).exp()).ln()
}

#[vmap(per_example, in_axes = (None, 0, 0))]
#[grad(example_grad, wrt = w)]
fn example_loss(w: &[f64], x: &[f64], y: f64) -> f64 {
    (1.0 + (-y * dot(w, x)).exp()).ln()
}

#[value_and_grad(layer_vg, wrt = (w, b))]
fn layer(w: ArrayView2<f32>, b: ArrayView1<f32>, x: ArrayView2<f32>) -> f32 {
    ((x.dot(&w) + b).tanh()).mean()
}

/// Every device to run on: the CPU devices, then the GPUs.
fn all_devices() -> Vec<Device> {
    let mut d = oxla::cpu_devices();
    d.extend(oxla::gpu_devices());
    d
}

fn close(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= tol * (1.0 + y.abs()),
            "element {i}: {x} vs {y}"
        );
    }
}

fn f64s<T: Copy + Into<f64>>(v: impl IntoIterator<Item = T>) -> Vec<f64> {
    v.into_iter().map(Into::into).collect()
}

#[test]
fn devices_list_the_default_platform_first() {
    let d = oxla::devices();
    assert!(!d.is_empty());
    let gpus = oxla::gpu_devices();
    if gpus.is_empty() {
        assert_eq!(d, oxla::cpu_devices());
        assert!(oxla::gpu(0).is_err());
    } else {
        assert_eq!(d, gpus);
        assert_eq!(oxla::gpu(0).unwrap(), gpus[0]);
    }
    assert_eq!(oxla::cpu().to_string(), "cpu:0");
    assert!(oxla::gpu(gpus.len())
        .unwrap_err()
        .to_string()
        .contains("no GPU"));
}

/// The GPU half of these tests runs only where a GPU is: without one it
/// records a skip, and fails under `OXLA_REQUIRE_GPU=1` (runs on GPU machines).
#[test]
fn the_gpu_tests_ran_on_a_gpu_or_say_so() {
    if oxla::gpu_devices().is_empty() {
        assert!(
            !oxla_ptx::ptxas::env_flag("OXLA_REQUIRE_GPU"),
            "no GPU found ({}), and OXLA_REQUIRE_GPU is set",
            oxla::gpu(0).unwrap_err()
        );
        oxla_ptx::ptxas::record_skip("no GPU found");
    }
}

#[test]
fn arrays_round_trip_through_every_device() {
    let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
    for dev in all_devices() {
        let d = device_put(&a, &dev).unwrap();
        assert_eq!(d.shape(), &[2, 3]);
        assert_eq!(d.device(), dev);
        assert_eq!(d.dtype(), oxla::DType::F32);
        assert_eq!(d.to_host(), a);
        // A transposed view goes over in row-major order of the view.
        let t = device_put(a.t(), &dev).unwrap();
        assert_eq!(t.to_host(), a.t().to_owned());
        let s = DeviceArray::scalar(2.5f64, &dev).unwrap();
        assert_eq!(s.item(), 2.5);
        let v = device_put(&[1i64, -2, 3][..], &dev).unwrap();
        assert_eq!(v.to_vec(), vec![1, -2, 3]);
        let e = device_put(&Array1::<f32>::zeros(0), &dev).unwrap();
        assert!(e.is_empty());
        assert_eq!(e.to_vec(), Vec::<f32>::new());
    }
}

#[test]
fn a_jit_function_on_every_device_equals_the_host_call() {
    for n in [0usize, 1, 5, 1000] {
        let x: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
        let y: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
        let (z, s) = fused(&x, &y, 1.5);
        for dev in all_devices() {
            let (dx, dy) = (
                device_put(&x[..], &dev).unwrap(),
                device_put(&y[..], &dev).unwrap(),
            );
            let (dz, ds) = fused_device(&dx, &dy, 1.5);
            assert_eq!(dz.device(), dev);
            close(&f64s(dz.to_vec()), &f64s(z.clone()), 1e-5);
            close(&[ds.item() as f64], &[s as f64], 1e-5);
            // A scalar argument may be a device scalar too.
            let s_dev = DeviceArray::scalar(1.5f32, &dev).unwrap();
            let (_, ds2) = fused_device(&dx, dy, &s_dev);
            close(&[ds2.item() as f64], &[s as f64], 1e-5);
        }
    }
}

#[test]
fn gradients_and_vmap_on_every_device_equal_the_host_call() {
    let w = vec![0.3, -0.2, 0.5];
    let xs = array![
        [1.0, 2.0, -1.0],
        [0.5, -0.5, 2.0],
        [3.0, 0.0, 1.0],
        [-1.0, 1.0, 1.0]
    ];
    let ys = array![1.0, -1.0, 1.0, -1.0];
    let g = loss_grad(&w, xs.row(0).as_slice().unwrap(), 1.0);
    let pe = per_example(&w, &xs, ys.as_slice().unwrap());
    for dev in all_devices() {
        let dw = device_put(&w[..], &dev).unwrap();
        let dx0 = device_put(xs.row(0), &dev).unwrap();
        close(&loss_grad_device(&dw, &dx0, 1.0).to_vec(), &g, 1e-12);
        let (dxs, dys) = (
            device_put(&xs, &dev).unwrap(),
            device_put(&ys, &dev).unwrap(),
        );
        let got = per_example_device(&dw, &dxs, &dys);
        assert_eq!(got.shape(), pe.shape());
        close(
            got.to_host().as_slice().unwrap(),
            pe.as_slice().unwrap(),
            1e-12,
        );
    }
}

#[test]
fn chained_calls_stay_on_the_device() {
    let w = array![[0.1f32, -0.2], [0.3, 0.4], [-0.5, 0.6]];
    let b = array![0.05f32, -0.05];
    let x = Array2::from_shape_fn((8, 3), |(i, j)| ((i * 3 + j) as f32 * 0.7).sin());
    let (v, gw, gb) = layer_vg(&w, &b, &x);
    for dev in all_devices() {
        let (dw, db, dx) = (
            device_put(&w, &dev).unwrap(),
            device_put(&b, &dev).unwrap(),
            device_put(&x, &dev).unwrap(),
        );
        // A few steps of gradient descent, every value kept on the device.
        let (mut cw, mut cb) = (dw.clone(), db.clone());
        let (dv, dgw, dgb) = layer_vg_device(&cw, &cb, &dx);
        close(&[dv.item() as f64], &[v as f64], 1e-5);
        close(&f64s(dgw.to_vec()), &f64s(gw.iter().copied()), 1e-5);
        close(&f64s(dgb.to_vec()), &f64s(gb.iter().copied()), 1e-5);
        let (mut hw, mut hb) = (w.clone(), b.clone());
        for _ in 0..3 {
            let (_, gw, gb) = layer_vg_device(&cw, &cb, &dx);
            cw = step_device(&cw, &gw, 0.5);
            cb = step1_device(&cb, &gb, 0.5);
            let (_, hgw, hgb) = layer_vg(&hw, &hb, &x);
            hw = step(hw.view(), hgw.view(), 0.5);
            hb = Array1::from(step1(hb.as_slice().unwrap(), hgb.as_slice().unwrap(), 0.5));
        }
        assert_eq!(cw.device(), dev);
        close(&f64s(cw.to_vec()), &f64s(hw.iter().copied()), 1e-5);
        close(&f64s(cb.to_vec()), &f64s(hb.iter().copied()), 1e-5);
    }
}

#[jit]
fn step(p: ArrayView2<f32>, g: ArrayView2<f32>, lr: f32) -> Array2<f32> {
    p - g * lr
}

#[jit]
fn step1(p: &[f32], g: &[f32], lr: f32) -> Vec<f32> {
    p - g * lr
}

#[test]
fn arguments_on_two_devices_are_an_error_naming_both() {
    let cpus = oxla::cpu_devices();
    let other = match oxla::gpu_devices().first() {
        Some(g) => *g,
        None if cpus.len() > 1 => cpus[1],
        None => {
            oxla_ptx::ptxas::record_skip("one device only");
            return;
        }
    };
    let x = device_put(&[1.0f32, 2.0][..], &cpus[0]).unwrap();
    let y = device_put(&[1.0f32, 2.0][..], &other).unwrap();
    let err = std::panic::catch_unwind(|| fused_device(&x, &y, 1.0)).unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("argument `y`") && msg.contains("argument `x`"),
        "{msg}"
    );
    assert!(msg.contains(&other.to_string()), "{msg}");
}

#[test]
fn a_length_mismatch_on_a_device_names_the_argument() {
    for dev in all_devices() {
        let x = device_put(&[1.0f32, 2.0][..], &dev).unwrap();
        let y = device_put(&[1.0f32, 2.0, 3.0][..], &dev).unwrap();
        let err = std::panic::catch_unwind(|| fused_device(&x, &y, 1.0)).unwrap_err();
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("`y`"), "{dev}: {msg}");
    }
}
