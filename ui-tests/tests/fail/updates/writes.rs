#![allow(dead_code)]
use oxla::ndarray::{ArrayView1, ArrayView2};

// Writing into an array that is not `let mut`.
#[oxla::jit]
fn not_mut(x: ArrayView1<f64>, i: usize) -> f64 {
    let y = x.to_owned();
    y[i] = 1.0;
    y.sum()
}

// Writing into a parameter.
#[oxla::jit]
fn into_param(x: ArrayView1<f64>, i: usize) -> f64 {
    x[i] = 1.0;
    x.sum()
}

// More indices than the array has axes.
#[oxla::jit]
fn wrong_rank(x: ArrayView1<f64>, i: usize) -> f64 {
    let mut y = x.to_owned();
    y[[i, 0]] = 1.0;
    y.sum()
}

// A row written with a value of another shape.
#[oxla::jit]
fn wrong_value(m: [[f64; 3]; 2], v: [f64; 2]) -> f64 {
    let mut a = m;
    a[0] = v;
    a.sum()
}

// `x[i][j] = v`.
#[oxla::jit]
fn nested(m: ArrayView2<f64>, i: usize) -> f64 {
    let mut a = m.to_owned();
    a[i][0] = 1.0;
    a.sum()
}

// A window written with an array of another length.
#[oxla::jit]
fn wrong_window(x: [f64; 6], y: [f64; 2]) -> f64 {
    let mut z = x;
    z.slice_mut(s![1..4]).assign(&y);
    z.sum()
}

fn main() {}
