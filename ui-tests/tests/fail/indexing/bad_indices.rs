#![allow(dead_code)]
use oxla::ndarray::ArrayView1;

#[oxla::jit]
fn out_of_range(x: [f32; 3]) -> f32 {
    x[3]
}

#[oxla::jit]
fn runtime_size(x: ArrayView1<f32>) -> f32 {
    x[0]
}

#[oxla::jit]
fn not_a_literal(x: [f32; 3]) -> f32 {
    x[1..].sum()
}

fn main() {}
