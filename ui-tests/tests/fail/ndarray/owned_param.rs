#![allow(dead_code)]
use oxla::ndarray::{Array2, ArrayViewD};

#[oxla::jit]
fn f(x: Array2<f32>, y: ArrayViewD<f32>) -> f32 {
    x.sum() + y.sum()
}

fn main() {}
