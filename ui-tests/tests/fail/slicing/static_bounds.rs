#![allow(dead_code)]
use oxla::ndarray::{s, ArrayView1, ArrayView2};

// A slice past the end of an axis of static size.
#[oxla::jit]
fn past_the_end(x: [f32; 3]) -> f32 {
    x.slice(s![1..5]).sum()
}

// One item per axis.
#[oxla::jit]
fn too_few_items(x: ArrayView2<f32>) -> f32 {
    x.slice(s![1..]).sum()
}

// Steps must be literals >= 1 (ndarray's negative steps reverse).
#[oxla::jit]
fn negative_step(x: ArrayView1<f32>) -> f32 {
    x.slice(s![..;-1]).sum()
}

// Bounds are integer literals.
#[oxla::jit]
fn runtime_bound(x: ArrayView1<f32>, k: f32) -> f32 {
    x.slice(s![..k]).sum()
}

fn main() {}
