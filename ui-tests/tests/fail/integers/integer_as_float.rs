#![allow(dead_code)]
use oxla::ndarray::ArrayView1;

#[oxla::jit]
fn f(x: ArrayView1<f32>, labels: ArrayView1<i32>) -> f32 {
    (x * labels).sum()
}

#[oxla::jit]
fn g(x: ArrayView1<f32>, idx: ArrayView1<f32>) -> f32 {
    take_along_axis(x.insert_axis(oxla::ndarray::Axis(1)), &idx, oxla::ndarray::Axis(1)).sum()
}

fn main() {}
