#![allow(dead_code)]
use oxla::ndarray::{Array1, ArrayView1};

#[oxla::jit]
fn f(x: ArrayView1<f64>, y: ArrayView1<f64>) -> Array1<f64> {
    where_(x, x, y) + zeros(x.shape())
}

fn main() {}
