//! Generated functions on device arrays: a fused sum, an MLP trained for
//! 200 steps with every array kept on the device, an ODE's gradient through
//! a 2 000-step loop over a batch of trajectories and Newton's method in a
//! `while` loop. Each runs on `oxla::devices()[0]` (the first GPU when there is one,
//! else a CPU device) and is compared with the plain call on host arrays;
//! the program exits with an error on any mismatch.
//!
//! Run with `cargo run --release -p devices`.

use oxla::ndarray::{Array1, Array2, ArrayView1, ArrayView2, Ix0, Ix1, Ix2};
use oxla::{device_put, grad, jit, value_and_grad, Device, DeviceArray};
use std::time::{Duration, Instant};

#[jit]
fn fused_sum(x: &[f32], y: &[f32], z: &[f32]) -> f32 {
    sum(x * 2.0 * y + z)
}

#[jit]
fn plus_one(x: &[f32]) -> Vec<f32> {
    x + 1.0
}

#[value_and_grad(loss_and_grad, wrt = (w1, b1, w2, b2))]
fn loss(
    w1: ArrayView2<f32>,
    b1: ArrayView1<f32>,
    w2: ArrayView2<f32>,
    b2: ArrayView1<f32>,
    x: ArrayView2<f32>,
    y: ArrayView2<f32>,
) -> f32 {
    let h = (x.dot(&w1) + b1).tanh();
    let pred = h.dot(&w2) + b2;
    let err = pred - y;
    (err * err).mean()
}

#[jit]
fn sgd2(p: ArrayView2<f32>, g: ArrayView2<f32>, lr: f32) -> Array2<f32> {
    p - g * lr
}

#[jit]
fn sgd1(p: ArrayView1<f32>, g: ArrayView1<f32>, lr: f32) -> Array1<f32> {
    p - g * lr
}

/// An MLP's weights on the host.
struct HostMlp {
    w1: Array2<f32>,
    b1: Array1<f32>,
    w2: Array2<f32>,
    b2: Array1<f32>,
}

impl HostMlp {
    /// Uniform weights in `[-scale, scale)` from `seed`, zero biases.
    fn new(d_in: usize, d_hidden: usize, d_out: usize, scale: f32, seed: u64) -> HostMlp {
        HostMlp {
            w1: uniform((d_in, d_hidden), scale, seed),
            b1: Array1::zeros(d_hidden),
            w2: uniform((d_hidden, d_out), scale, seed + 1),
            b2: Array1::zeros(d_out),
        }
    }

    /// One step of gradient descent on `(x, y)`; the loss before it.
    fn step(&mut self, x: &Array2<f32>, y: &Array2<f32>, lr: f32) -> f32 {
        let (l, g1, gb1, g2, gb2) = loss_and_grad(&self.w1, &self.b1, &self.w2, &self.b2, x, y);
        self.w1 = sgd2(self.w1.view(), g1.view(), lr);
        self.b1 = sgd1(self.b1.view(), gb1.view(), lr);
        self.w2 = sgd2(self.w2.view(), g2.view(), lr);
        self.b2 = sgd1(self.b2.view(), gb2.view(), lr);
        l
    }
}

/// The same weights on a device.
struct DeviceMlp {
    w1: DeviceArray<f32, Ix2>,
    b1: DeviceArray<f32, Ix1>,
    w2: DeviceArray<f32, Ix2>,
    b2: DeviceArray<f32, Ix1>,
}

impl DeviceMlp {
    fn put(m: &HostMlp, dev: &Device) -> DeviceMlp {
        DeviceMlp {
            w1: device_put(&m.w1, dev).unwrap(),
            b1: device_put(&m.b1, dev).unwrap(),
            w2: device_put(&m.w2, dev).unwrap(),
            b2: device_put(&m.b2, dev).unwrap(),
        }
    }

    /// One step of gradient descent, every array staying on the device: it
    /// returns once the step is queued. The loss before it.
    fn step(
        &mut self,
        x: &DeviceArray<f32, Ix2>,
        y: &DeviceArray<f32, Ix2>,
        lr: f32,
    ) -> DeviceArray<f32, Ix0> {
        let (l, g1, gb1, g2, gb2) =
            loss_and_grad_device(&self.w1, &self.b1, &self.w2, &self.b2, x, y);
        self.w1 = sgd2_device(&self.w1, &g1, lr);
        self.b1 = sgd1_device(&self.b1, &gb1, lr);
        self.w2 = sgd2_device(&self.w2, &g2, lr);
        self.b2 = sgd1_device(&self.b2, &gb2, lr);
        l
    }
}

/// Lotka–Volterra for a batch of initial populations, `n` classical RK4
/// steps of `u' = αu − βuv`, `v' = δuv − γv`, the populations carried as
/// arrays through the loop; the loss is `Σ u(t) + 2 v(t)`.
#[grad(trajectories_grad, wrt = (alpha, beta, delta, gamma))]
fn trajectories(
    u0: &[f64],
    v0: &[f64],
    alpha: f64,
    beta: f64,
    delta: f64,
    gamma: f64,
    n: usize,
) -> f64 {
    let dt = 1e-3;
    let mut u = u0 * 1.0;
    let mut v = v0 * 1.0;
    for _ in 0..n {
        let k1u = u * alpha - u * v * beta;
        let k1v = u * v * delta - v * gamma;
        let (u2, v2) = (u + k1u * (0.5 * dt), v + k1v * (0.5 * dt));
        let k2u = u2 * alpha - u2 * v2 * beta;
        let k2v = u2 * v2 * delta - v2 * gamma;
        let (u3, v3) = (u + k2u * (0.5 * dt), v + k2v * (0.5 * dt));
        let k3u = u3 * alpha - u3 * v3 * beta;
        let k3v = u3 * v3 * delta - v3 * gamma;
        let (u4, v4) = (u + k3u * dt, v + k3v * dt);
        let k4u = u4 * alpha - u4 * v4 * beta;
        let k4v = u4 * v4 * delta - v4 * gamma;
        u = u + (k1u + k2u * 2.0 + k3u * 2.0 + k4u) * (dt / 6.0);
        v = v + (k1v + k2v * 2.0 + k3v * 2.0 + k4v) * (dt / 6.0);
    }
    sum(u + v * 2.0)
}

/// Kepler's equation `E − e·sin E = M` for a batch of mean anomalies,
/// by Newton's method in a `while` loop until every step is small.
#[value_and_grad(kepler_vg, wrt = e)]
fn kepler(m: &[f64], e: f64) -> f64 {
    let mut ecc = m * 1.0;
    let mut worst = 1.0;
    while worst > 1e-28 {
        let step = (ecc - e * ecc.sin() - m) / (1.0 - e * ecc.cos());
        ecc = ecc - step;
        worst = max(step * step);
    }
    sum(ecc)
}

/// Values in [-scale, scale) from a fixed seed (a 64-bit LCG).
fn uniform(shape: (usize, usize), scale: f32, seed: u64) -> Array2<f32> {
    let mut s = seed;
    Array2::from_shape_fn(shape, |_| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0) * scale
    })
}

/// Wait for the device's queued work (every call is on the device's one
/// stream, so waiting for one array waits for all before it).
fn oxla_sync<T: oxla::Element, D: oxla::ndarray::Dimension>(a: &DeviceArray<T, D>) {
    a.block_until_ready();
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// `|got - want| <= tol·(1 + |want|)`, else report and count a failure.
fn check(what: &str, got: f64, want: f64, tol: f64, failures: &mut usize) {
    let ok = (got - want).abs() <= tol * (1.0 + want.abs());
    *failures += usize::from(!ok);
    println!(
        "{}  {what}: device {got:.9}, host {want:.9}",
        if ok { "PASS" } else { "FAIL" }
    );
}

fn main() {
    let dev: Device = oxla::devices()[0];
    println!("devices: {:?}; running on {dev}", oxla::devices());
    let mut failures = 0;

    // A fused sum over 10^7 elements: the inputs go over once, the call
    // returns as soon as the kernel is queued, `item` waits.
    let n = 10_000_000;
    let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32 * 0.25).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 5) as f32 * 0.5).collect();
    let z: Vec<f32> = (0..n).map(|i| (i % 3) as f32).collect();
    let (dx, dy, dz) = (
        device_put(&x[..], &dev).unwrap(),
        device_put(&y[..], &dev).unwrap(),
        device_put(&z[..], &dev).unwrap(),
    );
    let host = fused_sum(&x, &y, &z);
    // The first call on a device fuses the function and loads its kernels
    // there (on a GPU: emits the PTX, which the driver compiles).
    let first = Instant::now();
    let got = fused_sum_device(&dx, &dy, &dz).item();
    println!(
        "INFO  first call on {dev} (compile, load, run): {:.1} ms",
        first.elapsed().as_secs_f64() * 1e3
    );
    check(
        "sum(x*2*y+z), 10^7 f32",
        got as f64,
        host as f64,
        1e-5,
        &mut failures,
    );
    let times: Vec<Duration> = (0..20)
        .map(|_| {
            let t = Instant::now();
            fused_sum_device(&dx, &dy, &dz).block_until_ready();
            t.elapsed()
        })
        .collect();
    let t = median(times).as_secs_f64();
    println!(
        "      {:.1} us per call (call + wait) = {:.0} GB/s read",
        t * 1e6,
        12.0 * n as f64 / t / 1e9
    );

    // Launch latency: a one-element call and its wait.
    let one = device_put(&[1.0f32][..], &dev).unwrap();
    plus_one_device(&one).block_until_ready();
    let times: Vec<Duration> = (0..200)
        .map(|_| {
            let t = Instant::now();
            plus_one_device(&one).block_until_ready();
            t.elapsed()
        })
        .collect();
    println!(
        "INFO  call + wait on one element: median {:.1} us",
        median(times).as_secs_f64() * 1e6
    );

    // An MLP trained with every weight, gradient and batch on the device.
    let (batch, d_in, d_out) = (256, 8, 2);
    let xb = uniform((batch, d_in), 1.0, 1);
    let yb = (xb.dot(&uniform((d_in, 16), 1.0, 2)))
        .mapv(f32::tanh)
        .dot(&uniform((16, d_out), 1.0, 3));
    let mut host = HostMlp::new(d_in, 32, d_out, 0.5, 4);
    let mut on_dev = DeviceMlp::put(&host, &dev);
    let put2 = |a: &Array2<f32>| device_put(a, &dev).unwrap();
    let (dxb, dyb) = (put2(&xb), put2(&yb));
    let (steps, lr) = (200, 0.5f32);
    // The first step compiles the step's functions for the device: timed
    // apart from the others.
    let start = Instant::now();
    let mut device_loss = on_dev.step(&dxb, &dyb, lr);
    on_dev.b2.block_until_ready();
    println!(
        "INFO  first training step on {dev} (compiles 3 functions): {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    let start = Instant::now();
    for _ in 1..steps {
        device_loss = on_dev.step(&dxb, &dyb, lr);
    }
    let device_final = device_loss.item();
    let per_step = start.elapsed().as_secs_f64() / (steps - 1) as f64;
    let host_final = (0..steps).map(|_| host.step(&xb, &yb, lr)).last().unwrap();
    check(
        &format!("MLP 8-32-2, batch 256, loss after {steps} steps"),
        device_final as f64,
        host_final as f64,
        1e-3,
        &mut failures,
    );
    println!(
        "      {:.1} us per training step (5 calls, no host copy)",
        per_step * 1e6
    );
    let w1_gap = (&on_dev.w1.to_host() - &host.w1)
        .iter()
        .fold(0f32, |m, v| m.max(v.abs()));
    check(
        "MLP: largest |w1 device - w1 host|",
        w1_gap as f64,
        0.0,
        1e-3,
        &mut failures,
    );

    // The MNIST-sized MLP of the benchmarks (784-512-10, batch 256): its
    // products run on cuBLAS on a GPU. Five steps checked against the host,
    // then the step time.
    let (batch, d_in, d_out) = (256, 784, 10);
    let xb = uniform((batch, d_in), 1.0, 11);
    let yb = uniform((batch, d_out), 1.0, 12);
    let mut host = HostMlp::new(d_in, 512, d_out, 0.05, 13);
    let mut on_dev = DeviceMlp::put(&host, &dev);
    let (dxb, dyb) = (put2(&xb), put2(&yb));
    let lr = 0.1f32;
    let (mut device_l, mut host_l) = (0.0, 0.0);
    for _ in 0..5 {
        device_l = on_dev.step(&dxb, &dyb, lr).item();
        host_l = host.step(&xb, &yb, lr);
    }
    check(
        "MLP 784-512-10, batch 256, loss at step 5",
        device_l as f64,
        host_l as f64,
        1e-4,
        &mut failures,
    );
    let steps = 50;
    let start = Instant::now();
    for _ in 0..steps {
        on_dev.step(&dxb, &dyb, lr);
    }
    // Queuing returns before the device finishes: the host's share of a
    // step is the time to queue it.
    let queued = start.elapsed();
    on_dev.b2.block_until_ready();
    println!(
        "      {:.1} us per training step over {steps} steps ({:.1} us of it to queue the step)",
        start.elapsed().as_secs_f64() / steps as f64 * 1e6,
        queued.as_secs_f64() / steps as f64 * 1e6
    );

    // Where the host time of a step goes: each function's queue time alone.
    let m = &on_dev;
    let queue = |f: &mut dyn FnMut()| {
        f();
        oxla_sync(&m.b2);
        let t = Instant::now();
        for _ in 0..50 {
            f();
        }
        let q = t.elapsed().as_secs_f64() / 50.0 * 1e6;
        oxla_sync(&m.b2);
        q
    };
    let q_loss = queue(&mut || {
        loss_and_grad_device(&m.w1, &m.b1, &m.w2, &m.b2, &dxb, &dyb);
    });
    let q_sgd2 = queue(&mut || {
        sgd2_device(&m.w1, &m.w1, lr);
    });
    let q_sgd1 = queue(&mut || {
        sgd1_device(&m.b1, &m.b1, lr);
    });
    println!(
        "INFO  queue time per call: loss_and_grad {q_loss:.1} us, sgd2 {q_sgd2:.1} us, sgd1 {q_sgd1:.1} us"
    );

    // A gradient through a 2 000-step loop over 4096 trajectories: the
    // carries stay on the device, the reverse sweep's tape too.
    let m = 4096;
    let u0: Vec<f64> = (0..m).map(|i| 0.5 + (i % 17) as f64 * 0.05).collect();
    let v0: Vec<f64> = (0..m).map(|i| 0.3 + (i % 13) as f64 * 0.04).collect();
    let (du0, dv0) = (
        device_put(&u0[..], &dev).unwrap(),
        device_put(&v0[..], &dev).unwrap(),
    );
    let p = [1.1, 0.4, 0.1, 0.4];
    let start = Instant::now();
    trajectories_grad_device(&du0, &dv0, p[0], p[1], p[2], p[3], 1)
        .0
        .item();
    println!(
        "INFO  first call of the loop's gradient on {dev} (compile, load, 1 step): {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    let steps = 2_000;
    let start = Instant::now();
    let g = trajectories_grad_device(&du0, &dv0, p[0], p[1], p[2], p[3], steps);
    let g = [g.0.item(), g.1.item(), g.2.item(), g.3.item()];
    let t_dev = start.elapsed();
    let h = trajectories_grad(&u0, &v0, p[0], p[1], p[2], p[3], steps);
    for (k, (got, want)) in g.iter().zip([h.0, h.1, h.2, h.3]).enumerate() {
        check(
            &format!("Lotka–Volterra RK4 gradient, rate {k}"),
            *got,
            want,
            1e-9,
            &mut failures,
        );
    }
    println!(
        "      {:.1} ms on {dev} for {steps} steps forward and back",
        t_dev.as_secs_f64() * 1e3
    );

    // Newton's method in a `while` loop: the predicate is read each trip.
    let ms: Vec<f64> = (0..1000).map(|i| i as f64 * 0.006).collect();
    let dms = device_put(&ms[..], &dev).unwrap();
    for e in [0.1, 0.9] {
        let (v, de) = kepler_vg_device(&dms, e);
        let (hv, hde) = kepler_vg(&ms, e);
        check(
            &format!("Kepler: sum of E over 1000 M, e = {e}"),
            v.item(),
            hv,
            1e-12,
            &mut failures,
        );
        check("  d/de", de.item(), hde, 1e-10, &mut failures);
    }

    if failures > 0 {
        eprintln!("devices: {failures} FAILED");
        std::process::exit(1);
    }
    println!("devices: ALL PASS on {dev}");
}
