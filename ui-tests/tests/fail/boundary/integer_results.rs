#![allow(dead_code)]
use oxla::ndarray::{Array1, ArrayView1};

#[oxla::jit]
fn f(x: f32) -> usize {
    x as i64
}

#[oxla::jit]
fn g(x: ArrayView1<f32>) -> Array1<i32> {
    x < 1.0
}

fn main() {}
