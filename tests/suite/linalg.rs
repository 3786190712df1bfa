//! The linear algebra vocabulary against JAX (`tests/reference/linalg_jax.py`,
//! its output read here): `cholesky`, `solve` (matrix and vector
//! right-hand sides), `solve_triangular`, `triangular_solve`, `cho_solve`,
//! `inv`, `det`, `slogdet`; a loss through all of them with its gradient
//! (JAX's, and central differences); `vmap` over a batch of matrices;
//! `f32`; the NaN factor of a matrix that is not positive definite.

use oxla::ndarray::{Array1, Array2, Array3, ArrayD, ArrayView1, ArrayView2, ArrayView3};
use oxla::{grad, jit, vmap};

/// JAX's values: `name` → its array.
fn jax(name: &str) -> ArrayD<f64> {
    let text = include_str!("../reference/linalg_jax.txt");
    crate::reference::reference_array(text, "linalg_jax.txt", name)
}

fn jax2(name: &str) -> Array2<f64> {
    jax(name).into_dimensionality().unwrap()
}

#[track_caller]
fn close<'a>(got: impl IntoIterator<Item = &'a f64>, want: &ArrayD<f64>, tol: f64) {
    let got: Vec<f64> = got.into_iter().copied().collect();
    let want: Vec<f64> = want.iter().copied().collect();
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let ok = (g.is_nan() && w.is_nan()) || (g - w).abs() <= tol * w.abs().max(1.0);
        assert!(ok, "element {i}: {g:?}, JAX {w:?} (got {got:?})");
    }
}

#[jit]
fn factor(s: ArrayView2<f64>) -> Array2<f64> {
    cholesky(s)
}

#[jit]
fn solves(
    a: ArrayView2<f64>,
    b: ArrayView2<f64>,
    bv: ArrayView1<f64>,
    br: ArrayView2<f64>,
) -> (
    Array2<f64>,
    Array1<f64>,
    Array2<f64>,
    Array2<f64>,
    Array2<f64>,
) {
    let l = cholesky(a.dot(&a.t()));
    (
        solve(a, b),
        solve(a, bv),
        solve_triangular(l, b, true),
        solve_triangular(a, b, false),
        triangular_solve(a, br, false, true, true, true),
    )
}

#[jit]
fn inverses(a: ArrayView2<f64>, b: ArrayView2<f64>) -> (Array2<f64>, Array2<f64>, f64, f64, f64) {
    let l = cholesky(a.dot(&a.t()));
    let (sign, logabsdet) = slogdet(-a);
    (cho_solve(l, b), inv(a), det(a), sign, logabsdet)
}

#[grad(loss_grad, wrt = (a, b))]
fn loss(a: ArrayView2<f64>, b: ArrayView2<f64>) -> f64 {
    let l = cholesky(a.dot(&a.t()));
    let (sign, logabsdet) = slogdet(a);
    let x = solve(a, b);
    l.sum()
        + cho_solve(l, b).sum()
        + solve_triangular(l, b, true).sum()
        + (x.clone() * x).sum()
        + inv(a).sum()
        + det(a)
        + sign * logabsdet
}

#[vmap(factor_each, in_axes = (0))]
fn factor_one(s: ArrayView2<f64>) -> Array2<f64> {
    cholesky(s)
}

#[vmap(solve_each, in_axes = (0, None))]
fn solve_one(a: ArrayView2<f64>, b: ArrayView2<f64>) -> (Array2<f64>, f64, f64) {
    let (sign, logabsdet) = slogdet(a);
    (solve(a, b), sign, logabsdet)
}

#[jit]
fn factor_and_solve_f32(a: ArrayView2<f32>, b: ArrayView2<f32>) -> (Array2<f32>, Array2<f32>) {
    (cholesky(a.dot(&a.t())), solve(a, b))
}

#[test]
fn factors_and_solves_are_jaxs() {
    let (a, b) = (jax2("a"), jax2("b"));
    let bv: Array1<f64> = jax("bv").into_dimensionality().unwrap();
    close(&factor(jax2("spd").view()), &jax("cholesky_spd"), 1e-13);
    let (x, xv, lower, upper, right) = solves(a.view(), b.view(), bv.view(), jax2("br").view());
    close(&x, &jax("solve_a_b"), 1e-13);
    close(&xv, &jax("solve_a_bv"), 1e-13);
    close(&lower, &jax("solve_triangular_lower"), 1e-13);
    close(&upper, &jax("solve_triangular_upper"), 1e-13);
    close(&right, &jax("triangular_solve_right_transposed"), 1e-13);
    let (cho, inverse, d, sign, log) = inverses(a.view(), b.view());
    close(&cho, &jax("cho_solve"), 1e-13);
    close(&inverse, &jax("inv_a"), 1e-13);
    close(&[d], &jax("det_a"), 1e-13);
    close(&[sign], &jax("slogdet_neg_a_sign"), 0.0);
    close(&[log], &jax("slogdet_neg_a_log"), 1e-13);
}

#[test]
fn gradient_through_every_op_is_jaxs_and_central_differences() {
    let (a, b) = (jax2("a"), jax2("b"));
    close(&[loss(a.view(), b.view())], &jax("loss"), 1e-13);
    let (ga, gb) = loss_grad(a.view(), b.view());
    close(&ga, &jax("loss_grad_a"), 1e-12);
    close(&gb, &jax("loss_grad_b"), 1e-12);
    let h = 1e-6;
    for idx in [(0, 0), (1, 2), (2, 1)] {
        let (mut p, mut m) = (a.clone(), a.clone());
        p[idx] += h;
        m[idx] -= h;
        let fd = (loss(p.view(), b.view()) - loss(m.view(), b.view())) / (2.0 * h);
        assert!(
            (fd - ga[idx]).abs() <= 1e-6,
            "at {idx:?}: {fd} vs {}",
            ga[idx]
        );
    }
}

#[test]
fn vmap_over_a_batch_of_matrices_is_jaxs() {
    let batch: Array3<f64> = jax("batch").into_dimensionality().unwrap();
    let spds = Array3::from_shape_fn((4, 3, 3), |(k, i, j)| {
        (0..3).map(|p| batch[[k, i, p]] * batch[[k, j, p]]).sum()
    });
    let factors = factor_each(spds.view());
    close(&factors, &jax("vmap_cholesky"), 1e-13);
    let b = jax2("b");
    let (x, sign, log) = solve_each(batch.view(), b.view());
    close(&x, &jax("vmap_solve"), 1e-13);
    close(&sign, &jax("vmap_slogdet_sign"), 0.0);
    close(&log, &jax("vmap_slogdet_log"), 1e-13);
    let one = factor_one(spds.index_axis(oxla::ndarray::Axis(0), 2));
    assert_eq!(one, factors.index_axis(oxla::ndarray::Axis(0), 2));
}

#[test]
fn float32_factor_and_solve_are_jaxs_to_single_precision() {
    let a = jax2("a").mapv(|v| v as f32);
    let b = jax2("b").mapv(|v| v as f32);
    let (l, x) = factor_and_solve_f32(a.view(), b.view());
    let l: Vec<f64> = l.iter().map(|&v| f64::from(v)).collect();
    let x: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    close(&l, &jax("cholesky_f32"), 1e-5);
    close(&x, &jax("solve_f32"), 1e-5);
}

#[test]
fn cholesky_of_a_matrix_that_is_not_positive_definite_is_jaxs_nan() {
    let got = factor(jax2("not_pd").view());
    close(&got, &jax("cholesky_not_pd"), 0.0);
}

#[test]
fn a_batch_axis_is_taken_directly() {
    #[jit]
    fn batched(a: ArrayView3<f64>) -> Array1<f64> {
        det(a)
    }
    let batch: Array3<f64> = jax("batch").into_dimensionality().unwrap();
    let d = batched(batch.view());
    let want = jax("vmap_slogdet_log").mapv(f64::exp);
    close(&d, &want, 1e-12);
}
