//! Functional updates (issue 23): `x[i] = v`, `x[[i, j]] += v`,
//! `x.slice_mut(s![..]).assign(&y)`, windows at a run-time start
//! (`lax.dynamic_slice` / `lax.dynamic_update_slice`, their starts wrapped
//! and clamped as JAX places them) and a loop that writes `hs[t] = h`
//! (`lax.scan` with stacked outputs). Values and gradients against JAX
//! (`tests/reference/updates_jax.py`, whose output `updates_jax.txt` is
//! read here), against central differences, JVP against VJP, and `vmap`
//! against a loop over the examples.

use oxla::ndarray::{s, Array1, Array2, ArrayView1, ArrayView2};
use oxla::{grad, jit, transforms, value_and_grad, vmap};

/// JAX's values for `name`, flattened row-major.
fn jax(name: &str) -> Vec<f64> {
    let text = include_str!("../reference/updates_jax.txt");
    crate::reference::reference_array(text, "updates_jax.txt", name)
        .into_raw_vec_and_offset()
        .0
}

fn assert_close(name: &str, got: &[f64], want: &[f64], rtol: f64) {
    assert_eq!(got.len(), want.len(), "{name}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= rtol * (1.0 + w.abs()),
            "{name}[{k}]: {g} vs JAX {w}"
        );
    }
}

fn assert_jax(name: &str, got: &[f64]) {
    assert_close(name, got, &jax(name), 1e-12);
}

/// The inputs of the reference script: element q of `grid` is `f(q)`.
fn grid<const N: usize>(f: impl Fn(f64) -> f64) -> [f64; N] {
    std::array::from_fn(|q| f(q as f64))
}

fn x6() -> [f64; 6] {
    grid(|q| (0.9 * q + 0.4).sin())
}

/// Central differences of a scalar function of a flat vector.
fn central(f: impl Fn(&[f64]) -> f64, x: &[f64]) -> Vec<f64> {
    let h = 1e-6;
    (0..x.len())
        .map(|k| {
            let (mut p, mut m) = (x.to_vec(), x.to_vec());
            p[k] += h;
            m[k] -= h;
            (f(&p) - f(&m)) / (2.0 * h)
        })
        .collect()
}

// ---- elements ---------------------------------------------------------------

#[transforms(value_and_grad(elements_vg, wrt = x), jvp(elements_jvp, wrt = x))]
fn elements(x: [f64; 6], i: usize) -> f64 {
    let mut y = x;
    y[i] = x[0] * 3.0;
    y[[2]] += x[1].sin();
    y[0] *= x[3];
    y[5] -= x[2];
    y[i] = y[i].max(x[4]);
    (y * y.sin()).sum()
}

#[test]
fn element_writes_give_jaxs_values_and_gradients() {
    let x = x6();
    for i in [1, 3] {
        let (v, g) = elements_vg(&x, i);
        assert_jax(&format!("elements.{i}.value"), &[v]);
        assert_jax(&format!("elements.{i}.grad"), &g.to_vec());
        let fd = central(|p| elements(p.try_into().unwrap(), i), &x);
        assert_close("elements fd", &g.to_vec(), &fd, 1e-6);
        // JVP against VJP: ⟨g, d⟩ for a direction d.
        let d: [f64; 6] = grid(|q| 0.3 * q - 0.7);
        let (_, t) = elements_jvp(&x, i, &d);
        let dot: f64 = g.iter().zip(&d).map(|(a, b)| a * b).sum();
        assert!((t - dot).abs() <= 1e-12 * (1.0 + dot.abs()), "{t} vs {dot}");
    }
}

#[value_and_grad(matrix_vg, wrt = (m, r))]
fn matrix(m: [[f64; 3]; 4], r: [f64; 3], i: usize, j: usize) -> f64 {
    let mut a = m;
    a[i] = r.sin();
    a[[j, i]] -= m[[i, j]] * 2.0;
    a[[0, 1]] = 5.0;
    a[j] *= r;
    (a * a).sum() + a[[i, j]] * a[[j, 0]]
}

#[test]
fn row_and_element_writes_into_a_matrix_give_jaxs_values_and_gradients() {
    let mf: [f64; 12] = grid(|q| (0.7 * q - 0.3).cos());
    let m: [[f64; 3]; 4] = std::array::from_fn(|i| std::array::from_fn(|j| mf[3 * i + j]));
    let r: [f64; 3] = grid(|q| 0.5 - 0.3 * q);
    for (i, j) in [(2, 1), (0, 2)] {
        let (v, gm, gr) = matrix_vg(&m, &r, i, j);
        assert_jax(&format!("matrix.{i}{j}.value"), &[v]);
        assert_jax(
            &format!("matrix.{i}{j}.grad_m"),
            &gm.iter().copied().collect::<Vec<_>>(),
        );
        assert_jax(&format!("matrix.{i}{j}.grad_r"), &gr.to_vec());
    }
}

#[value_and_grad(computed_vg, wrt = x)]
fn computed(x: [f64; 6], i: i64, wts: [f64; 6]) -> f64 {
    let mut y = x;
    y[i + 5] = 100.0;
    y[i - 3] = x[0] * x[1];
    (y * y * wts).sum()
}

/// A computed index past the end writes nothing; a negative one is wrapped
/// once (JAX's scatter rules).
#[test]
fn computed_indices_are_wrapped_or_dropped_as_jax_does() {
    let wts: [f64; 6] = grid(|q| q + 1.0);
    let (v, g) = computed_vg(&x6(), 1, &wts);
    assert_jax("computed.value", &[v]);
    assert_jax("computed.grad", &g.to_vec());
}

#[jit]
fn write_at(x: ArrayView1<f64>, i: usize) -> Array1<f64> {
    let mut y = x.to_owned();
    y[i] = -1.0;
    y
}

#[test]
fn an_index_parameter_out_of_range_is_a_panic_naming_it() {
    let x = Array1::from(vec![1.0, 2.0, 3.0]);
    assert_eq!(write_at(x.view(), 1).to_vec(), vec![1.0, -1.0, 3.0]);
    let err = std::panic::catch_unwind(|| write_at(x.view(), 3)).unwrap_err();
    let msg = err
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(msg.contains("`i`"), "{msg}");
}

// ---- slices -----------------------------------------------------------------

#[value_and_grad(slices_vg, wrt = (z, y))]
fn slices(z: [f64; 8], y: [f64; 3]) -> f64 {
    let mut w = z;
    w.slice_mut(s![1..4]).assign(&(y * 2.0));
    w.slice_mut(s![4..;2]).assign(&y.slice(s![..2]).exp());
    (w * w.cos()).sum()
}

fn z8() -> [f64; 8] {
    grid(|q| (0.6 * q + 0.1).cos())
}

fn y3() -> [f64; 3] {
    grid(|q| (1.3 * q + 0.2).sin())
}

#[test]
fn slice_writes_give_jaxs_values_and_gradients() {
    let (v, gz, gy) = slices_vg(&z8(), &y3());
    assert_jax("slices.value", &[v]);
    assert_jax("slices.grad_z", &gz.to_vec());
    assert_jax("slices.grad_y", &gy.to_vec());
}

#[value_and_grad(update_window_vg, wrt = (z, y))]
fn update_window(z: [f64; 8], y: [f64; 3], k: i64, wts: [f64; 8]) -> f64 {
    let mut w = z;
    w.slice_mut(s![k..k + 3]).assign(&y.sin());
    (w * w * wts).sum()
}

#[value_and_grad(read_window_vg, wrt = z)]
fn read_window(z: [f64; 8], k: i64, c: [f64; 3]) -> f64 {
    (z.slice(s![k..k + 3]) * c).sum()
}

/// A window's start is wrapped once when negative, then clamped so the
/// window fits: `-2` starts at 5 of 8, as `7` does.
#[test]
fn windows_at_run_time_starts_give_jaxs_values_and_gradients() {
    let wts: [f64; 8] = grid(|q| q + 1.0);
    let c = [1.0, -2.0, 0.5];
    for k in [2, -2, 7] {
        let (v, gz, gy) = update_window_vg(&z8(), &y3(), k, &wts);
        assert_jax(&format!("update_window.{k}.value"), &[v]);
        assert_jax(&format!("update_window.{k}.grad_z"), &gz.to_vec());
        assert_jax(&format!("update_window.{k}.grad_y"), &gy.to_vec());
        let fd = central(
            |p| update_window(p.try_into().unwrap(), y3(), k, wts),
            &z8(),
        );
        assert_close("update_window fd", &gz.to_vec(), &fd, 1e-6);
        let (v, g) = read_window_vg(&z8(), k, &c);
        assert_jax(&format!("read_window.{k}.value"), &[v]);
        assert_jax(&format!("read_window.{k}.grad"), &g.to_vec());
    }
}

// ---- `hs[t] = h` in a loop: scan with stacked outputs --------------------------

#[transforms(
    value_and_grad(rnn_vg, wrt = (w, u)),
    vmap(rnn_grads, of = grad(wrt = w), in_axes = (None, None, 0)),
)]
fn rnn(w: ArrayView2<f64>, u: ArrayView2<f64>, xs: ArrayView2<f64>) -> f64 {
    let mut h = zeros(w.nrows());
    let mut hs = zeros((xs.nrows(), w.nrows()));
    for t in 0..xs.nrows() {
        h = (w.dot(&h) + u.dot(&xs.row(t))).tanh();
        hs[t] = h;
    }
    (hs.clone() * hs.sin()).sum() + h.sum()
}

fn rnn_inputs() -> (Array2<f64>, Array2<f64>, Array2<f64>) {
    let w = Array2::from_shape_fn((3, 3), |(i, j)| {
        0.4 * (1.1 * (3 * i + j) as f64 + 0.5).sin()
    });
    let u = Array2::from_shape_fn((3, 2), |(i, j)| {
        0.6 * (0.8 * (2 * i + j) as f64 - 0.2).cos()
    });
    let xs = Array2::from_shape_fn((5, 2), |(i, j)| {
        let q = (2 * i + j) as f64;
        (0.5 * q).sin() + 0.1 * q
    });
    (w, u, xs)
}

#[test]
fn a_loop_writing_its_states_gives_jaxs_scan_value_and_gradient() {
    let (w, u, xs) = rnn_inputs();
    let (v, gw, gu) = rnn_vg(w.view(), u.view(), xs.view());
    assert_jax("rnn.value", &[v]);
    assert_jax("rnn.grad_w", &gw.iter().copied().collect::<Vec<_>>());
    assert_jax("rnn.grad_u", &gu.iter().copied().collect::<Vec<_>>());
}

/// Per-example gradients by `vmap` of the gradient: each is the gradient
/// of that example alone.
#[test]
fn per_example_gradients_through_the_loop_match_one_example_at_a_time() {
    let (w, u, xs) = rnn_inputs();
    let batch = ndarray_stack(&[xs.clone(), xs.mapv(|v| 0.5 * v - 0.2), xs.mapv(f64::cos)]);
    let gs = rnn_grads(w.view(), u.view(), batch.view());
    for b in 0..3 {
        let (_, gw, _) = rnn_vg(w.view(), u.view(), batch.slice(s![b, .., ..]));
        let got: Vec<f64> = gs.slice(s![b, .., ..]).iter().copied().collect();
        assert_close(
            "per-example",
            &got,
            &gw.iter().copied().collect::<Vec<_>>(),
            1e-12,
        );
    }
}

#[value_and_grad(rnn_every_vg, wrt = (w, u))]
fn rnn_every(w: ArrayView2<f64>, u: ArrayView2<f64>, xs: ArrayView2<f64>) -> f64 {
    let mut h = zeros(w.nrows());
    let mut hs = zeros((xs.nrows(), w.nrows()));
    for t in oxla::checkpoint_every(2, 0..xs.nrows()) {
        h = (w.dot(&h) + u.dot(&xs.row(t))).tanh();
        hs[t] = h;
    }
    (hs.clone() * hs.sin()).sum() + h.sum()
}

/// `hs` is a carry only written (`hs[t] = h`): the backward body never
/// reads its value, so the tape keeps `h` alone per step, as JAX's scan
/// keeps one row per step (it kept all of `hs` per step: steps² memory).
/// A checkpoint keeps every carry; both give the same gradient bit for bit.
#[test]
fn a_loop_filling_an_array_keeps_one_row_per_step_on_its_tape() {
    let (w, u, xs) = rnn_inputs();
    let (steps, hidden) = (xs.nrows(), w.nrows());
    oxla::reset_loop_tape_peak();
    let (v, gw, gu) = rnn_vg(w.view(), u.view(), xs.view());
    assert_eq!(oxla::loop_tape_peak_bytes(), steps * hidden * 8);
    oxla::reset_loop_tape_peak();
    let (ve, gwe, gue) = rnn_every_vg(w.view(), u.view(), xs.view());
    // Three checkpoints of h and hs, and a segment of two steps' carries.
    let carries = hidden * 8 + steps * hidden * 8;
    assert_eq!(oxla::loop_tape_peak_bytes(), (3 + 2) * carries);
    assert_eq!((v, &gw, &gu), (ve, &gwe, &gue));
}

fn ndarray_stack(xs: &[Array2<f64>]) -> oxla::ndarray::Array3<f64> {
    let views: Vec<_> = xs.iter().map(|x| x.view()).collect();
    oxla::ndarray::stack(oxla::ndarray::Axis(0), &views).unwrap()
}

// ---- vmap and grad of a write ---------------------------------------------------

#[vmap(set_rows, in_axes = (0, 0, None))]
fn set_row(m: ArrayView2<f64>, v: ArrayView1<f64>, i: usize) -> Array2<f64> {
    let mut a = m.to_owned();
    a[i] = v * 2.0;
    a
}

#[test]
fn a_write_is_batched_by_vmap() {
    let ms =
        oxla::ndarray::Array3::from_shape_fn((2, 3, 4), |(b, i, j)| (b * 12 + i * 4 + j) as f64);
    let vs = Array2::from_shape_fn((2, 4), |(b, j)| -((b * 4 + j) as f64));
    let got = set_rows(ms.view(), vs.view(), 1);
    for b in 0..2 {
        let mut want = ms.slice(s![b, .., ..]).to_owned();
        want.row_mut(1).assign(&(vs.row(b).to_owned() * 2.0));
        assert_eq!(got.slice(s![b, .., ..]), want);
    }
}

#[grad(set_in_loop_grad, wrt = x)]
fn set_in_loop(x: ArrayView1<f64>) -> f64 {
    let mut y = x.to_owned();
    for i in 1..x.len() {
        y[i] = y[i - 1] * x[i];
    }
    y.sum()
}

/// A write whose value reads the array it writes (a running product):
/// the gradient against central differences.
#[test]
fn a_write_reading_the_array_in_a_loop_differentiates() {
    let x = Array1::from(vec![0.9, -1.2, 0.7, 1.5, -0.4]);
    let g = set_in_loop_grad(x.view());
    let f = |p: &[f64]| {
        let mut y = p.to_vec();
        for i in 1..p.len() {
            y[i] = y[i - 1] * p[i];
        }
        y.iter().sum::<f64>()
    };
    assert_close(
        "running product fd",
        &g.to_vec(),
        &central(f, x.as_slice().unwrap()),
        1e-6,
    );
}
