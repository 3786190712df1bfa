#![allow(dead_code)]
use oxla::ndarray::{Array1, ArrayView2, Axis};

#[oxla::jit]
fn f(x: ArrayView2<f32>) -> Array1<f32> {
    x.sum_axis(Axis(2))
}

fn main() {}
