#![allow(dead_code)]
use oxla::ndarray::{Array2, ArrayView1, ArrayView2, Axis};

#[oxla::jit]
fn embed(table: ArrayView2<f32>, ids: ArrayView1<f32>) -> Array2<f32> {
    table.select(Axis(0), &ids)
}

#[oxla::jit]
fn take_past_the_rank(x: ArrayView1<f32>, ids: ArrayView1<i64>) -> f32 {
    take(x, &ids, Axis(1)).sum()
}

#[oxla::jit]
fn select_without_an_axis(x: ArrayView1<f32>, ids: ArrayView1<i64>) -> f32 {
    x.select(&ids).sum()
}

fn main() {}
