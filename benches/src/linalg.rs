//! `cholesky` and `solve` for the `linalg` bench: each a host step of a
//! program compiled by `build.rs`.

use oxla::ndarray::{Array1, Array2, ArrayView1, ArrayView2};

#[oxla::jit]
pub fn factor(a: ArrayView2<f64>) -> Array2<f64> {
    cholesky(a)
}

#[oxla::jit]
pub fn solve_vector(a: ArrayView2<f64>, b: ArrayView1<f64>) -> Array1<f64> {
    solve(a, b)
}
