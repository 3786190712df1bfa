#![allow(dead_code)]
use oxla::ndarray::Array2;

#[oxla::jit]
fn f(x: [[f64; 3]; 2], y: [f64; 4]) -> Array2<f64> {
    x + y
}

fn main() {}
