#![allow(dead_code)]
use oxla::ndarray::{Array1, ArrayView1};

#[oxla::jit]
fn f(x: ArrayView1<f64>) -> Array1<f64> {
    arange(2.5) + x.sum()
}

fn main() {}
