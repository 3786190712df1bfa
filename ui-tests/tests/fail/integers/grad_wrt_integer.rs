#![allow(dead_code)]
use oxla::ndarray::{ArrayView1, ArrayView2, Axis};

#[oxla::grad(d_ce, wrt = labels)]
fn ce(logits: ArrayView2<f32>, labels: ArrayView1<i32>) -> f32 {
    -take_along_axis(log_softmax(logits, Axis(1)), &labels, Axis(1)).mean()
}

fn main() {}
