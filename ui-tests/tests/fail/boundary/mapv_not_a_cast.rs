#![allow(dead_code)]
use oxla::ndarray::{Array1, ArrayView1};

#[oxla::jit]
fn f(x: ArrayView1<f32>) -> Array1<f32> {
    x.mapv(|v| v.exp())
}

#[oxla::jit]
fn g(x: ArrayView1<f32>) -> Array1<i32> {
    x as i32
}

fn main() {}
