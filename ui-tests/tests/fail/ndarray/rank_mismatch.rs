#![allow(dead_code)]
use oxla::ndarray::{Array1, ArrayView2};

// The result is declared a vector, but the function computes a matrix.
#[oxla::jit]
fn f(x: ArrayView2<f32>) -> Array1<f32> {
    x * 2.0
}

fn main() {}
