#![allow(dead_code)]
use oxla::ndarray::{Array2, ArrayView1, ArrayView2, Axis};

// The reshape family's argument errors, each at the argument.
#[oxla::jit]
fn squeeze_wide(x: ArrayView1<f64>) -> Array2<f64> {
    squeeze(x.into_shape_with_order((2, 3)).unwrap(), Axis(1))
}

#[oxla::jit]
fn tile_runtime_reps(x: ArrayView1<f64>, n: i64) -> f64 {
    tile(x, n).sum()
}

#[oxla::jit]
fn moveaxis_out_of_range(x: ArrayView2<f64>) -> Array2<f64> {
    moveaxis(x, 0, 2)
}

fn main() {}
