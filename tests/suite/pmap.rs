//! `#[pmap]` and the collectives against JAX's values
//! (`tests/reference/pmap_jax.py`, run with 4 host devices; its output
//! `pmap_jax.txt` is read here): every collective's value on 4 CPU devices,
//! the gradient of a weighted sum of the pmap's results (JAX's transposes,
//! run on the devices), vmap inside pmap with a collective over either axis
//! and its gradient, and the data-parallel step (`value_and_grad` inside
//! the pmap, the loss `pmean`'d, parameters replicated). The inputs are the
//! script's closed forms.

use ndarray::{Array1, Array2, Array3, ArrayD, ArrayView1, ArrayView2, ArrayView3};
use oxla::{grad, pmap, value_and_grad, vmap};

const N: usize = 4;

/// JAX's values: `name` → its array.
fn jax(name: &str) -> ArrayD<f64> {
    let text = include_str!("../reference/pmap_jax.txt");
    crate::reference::reference_array(text, "pmap_jax.txt", name)
}

/// An array whose element at flat index `q` is `f(q)`, as the script's `grid`.
fn grid<D: ndarray::Dimension>(shape: D, f: impl Fn(f64) -> f64) -> ndarray::Array<f64, D> {
    let n = shape.size();
    ndarray::Array::from_shape_vec(shape, (0..n).map(|q| f(q as f64)).collect()).unwrap()
}

fn x() -> Array2<f64> {
    grid(ndarray::Ix2(N, 4), |q| (0.7 * q + 0.3).sin())
}

/// The weights of the script's weighted sum, shaped like a result.
fn w<D: ndarray::Dimension>(shape: D) -> ndarray::Array<f64, D> {
    grid(shape, |q| (0.3 * q).cos())
}

#[track_caller]
fn assert_jax<D: ndarray::Dimension>(name: &str, got: &ndarray::Array<f64, D>, rtol: f64) {
    let want = jax(name);
    assert_eq!(got.shape(), want.shape(), "{name}: shape");
    for (k, (g, e)) in got.iter().zip(want.iter()).enumerate() {
        assert!(
            (g - e).abs() <= rtol * e.abs().max(1.0),
            "{name}: element {k}: oxla {g:e}, JAX {e:e}"
        );
    }
}

// ---- each collective on the devices' rows, and a weighted sum of the
// ---- pmap's results (its gradient goes back through the collective)

#[pmap(psum_p, axis_name = i)]
fn psum_d(x: ArrayView1<f64>) -> Array1<f64> {
    psum(x.sin(), i)
}
#[grad(psum_g, wrt = x)]
fn psum_l(x: ArrayView2<f64>, w: ArrayView2<f64>) -> f64 {
    sum(psum_p(x) * w)
}

#[pmap(pmean_p, axis_name = i)]
fn pmean_d(x: ArrayView1<f64>) -> Array1<f64> {
    pmean(x.sin(), i)
}
#[grad(pmean_g, wrt = x)]
fn pmean_l(x: ArrayView2<f64>, w: ArrayView2<f64>) -> f64 {
    sum(pmean_p(x) * w)
}

#[pmap(pmax_p, axis_name = i)]
fn pmax_d(x: ArrayView1<f64>) -> Array1<f64> {
    pmax(x.sin(), i)
}

#[pmap(pmin_p, axis_name = i)]
fn pmin_d(x: ArrayView1<f64>) -> Array1<f64> {
    pmin(x.sin(), i)
}

#[pmap(gather0_p, axis_name = i)]
fn gather0_d(x: ArrayView1<f64>) -> Array2<f64> {
    all_gather(x.sin(), i, 0)
}
#[grad(gather0_g, wrt = x)]
fn gather0_l(x: ArrayView2<f64>, w: ArrayView3<f64>) -> f64 {
    sum(gather0_p(x) * w)
}

#[pmap(gather1_p, axis_name = i)]
fn gather1_d(x: ArrayView1<f64>) -> Array2<f64> {
    all_gather(x.sin(), i, 1)
}
#[grad(gather1_g, wrt = x)]
fn gather1_l(x: ArrayView2<f64>, w: ArrayView3<f64>) -> f64 {
    sum(gather1_p(x) * w)
}

#[pmap(scatter_p, axis_name = i)]
fn scatter_d(x: ArrayView1<f64>) -> f64 {
    psum_scatter(x.sin(), i, 0)
}
#[grad(scatter_g, wrt = x)]
fn scatter_l(x: ArrayView2<f64>, w: ArrayView1<f64>) -> f64 {
    sum(scatter_p(x) * w)
}

#[pmap(ring_p, axis_name = i)]
fn ring_d(x: ArrayView1<f64>) -> Array1<f64> {
    ppermute(x.sin(), i, [(0, 1), (1, 2), (2, 3), (3, 0)])
}
#[grad(ring_g, wrt = x)]
fn ring_l(x: ArrayView2<f64>, w: ArrayView2<f64>) -> f64 {
    sum(ring_p(x) * w)
}

#[pmap(partial_p, axis_name = i)]
fn partial_d(x: ArrayView1<f64>) -> Array1<f64> {
    ppermute(x.sin(), i, [(0, 2), (1, 3)])
}
#[grad(partial_g, wrt = x)]
fn partial_l(x: ArrayView2<f64>, w: ArrayView2<f64>) -> f64 {
    sum(partial_p(x) * w)
}

#[pmap(a2a_p, axis_name = i)]
fn a2a_d(x: ArrayView1<f64>) -> Array1<f64> {
    all_to_all(x.sin(), i, 0, 0)
}
#[grad(a2a_g, wrt = x)]
fn a2a_l(x: ArrayView2<f64>, w: ArrayView2<f64>) -> f64 {
    sum(a2a_p(x) * w)
}

#[pmap(index_p, axis_name = i)]
fn index_d(x: ArrayView1<f64>) -> Array1<f64> {
    x * 0.0 + axis_index(i) as f64
}

#[test]
fn every_collective_gives_jaxs_values_and_gradients_on_four_devices() {
    oxla::set_cpu_device_count(N);
    let x = x();
    let xv = x.view();
    let w2 = w(ndarray::Ix2(N, 4));
    let w3 = w(ndarray::Ix3(N, N, 4));
    let w3t = w(ndarray::Ix3(N, 4, N));
    let w1 = w(ndarray::Ix1(N));
    // The kernels' `sin` is within an ulp of XLA's, and sums (psum, pmean,
    // psum_scatter, the gradients' transposes) add in XLA's order or
    // another: a few ulp.
    let tol = 1e-15;
    assert_jax("psum.value", &psum_p(xv), tol);
    assert_jax("psum.grad", &psum_g(xv, w2.view()), tol);
    assert_jax("pmean.value", &pmean_p(xv), tol);
    assert_jax("pmean.grad", &pmean_g(xv, w2.view()), tol);
    assert_jax("pmax.value", &pmax_p(xv), tol);
    assert_jax("pmin.value", &pmin_p(xv), tol);
    assert_jax("all_gather0.value", &gather0_p(xv), tol);
    assert_jax("all_gather0.grad", &gather0_g(xv, w3.view()), tol);
    assert_jax("all_gather1.value", &gather1_p(xv), tol);
    assert_jax("all_gather1.grad", &gather1_g(xv, w3t.view()), tol);
    assert_jax("psum_scatter.value", &scatter_p(xv), tol);
    assert_jax("psum_scatter.grad", &scatter_g(xv, w1.view()), tol);
    assert_jax("ppermute_ring.value", &ring_p(xv), tol);
    assert_jax("ppermute_ring.grad", &ring_g(xv, w2.view()), tol);
    assert_jax("ppermute_partial.value", &partial_p(xv), tol);
    assert_jax("ppermute_partial.grad", &partial_g(xv, w2.view()), tol);
    assert_jax("all_to_all.value", &a2a_p(xv), tol);
    assert_jax("all_to_all.grad", &a2a_g(xv, w2.view()), tol);
    assert_jax("axis_index.value", &index_p(xv), tol);
}

// ---- vmap inside pmap, a collective over either axis

#[pmap(both_p, axis_name = i)]
#[vmap(both_v, axis_name = j)]
fn both(x: ArrayView1<f64>) -> Array1<f64> {
    psum(x.sin(), j) * psum(x, i)
}
#[grad(both_g, wrt = x)]
fn both_l(x: ArrayView3<f64>, w: ArrayView3<f64>) -> f64 {
    sum(both_p(x) * w)
}

#[test]
fn vmap_inside_pmap_with_collectives_over_both_axes_gives_jaxs_values() {
    oxla::set_cpu_device_count(N);
    let x3: Array3<f64> = grid(ndarray::Ix3(N, 3, 2), |q| (0.4 * q - 0.2).cos());
    let w3: Array3<f64> = grid(ndarray::Ix3(N, 3, 2), |q| (0.5 * q).sin());
    assert_jax("vmap_in_pmap.value", &both_p(x3.view()), 1e-15);
    assert_jax("vmap_in_pmap.grad", &both_g(x3.view(), w3.view()), 1e-14);
}

// ---- the data-parallel step: value_and_grad inside the pmap, the loss
// ---- pmean'd, the parameters replicated

#[pmap(dp_step, axis_name = i, in_axes = (None, 0, 0), of = shard_vg)]
#[value_and_grad(shard_vg, wrt = w)]
fn shard_loss(w: ArrayView1<f64>, x: ArrayView2<f64>, y: ArrayView1<f64>) -> f64 {
    let r = x.dot(&w).tanh() - y;
    pmean(mean(&r * &r), i)
}

#[test]
fn the_data_parallel_gradient_of_a_pmeaned_loss_is_jaxs() {
    oxla::set_cpu_device_count(N);
    let (k, m) = (5, 3);
    let w0: Array1<f64> = grid(ndarray::Ix1(k), |q| 0.2 * (q + 0.5).cos());
    let xs: Array3<f64> = grid(ndarray::Ix3(N, m, k), |q| (0.37 * q).sin());
    let ys: Array2<f64> = grid(ndarray::Ix2(N, m), |q| (0.21 * q).cos());
    let (loss, g) = dp_step(w0.view(), xs.view(), ys.view());
    assert_jax("data_parallel.loss", &loss, 1e-15);
    assert_jax("data_parallel.grad", &g, 1e-14);
}

#[test]
fn a_mapped_axis_longer_than_the_devices_panics_naming_the_argument() {
    oxla::set_cpu_device_count(N);
    let long: Array2<f64> = Array2::zeros((N + 1, 4));
    let err = std::panic::catch_unwind(|| psum_p(long.view())).unwrap_err();
    let msg = err
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(
        msg.contains("argument `x`") && msg.contains("OXLA_CPU_DEVICES"),
        "{msg}"
    );
}
