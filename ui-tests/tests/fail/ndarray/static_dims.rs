#![allow(dead_code)]
use oxla::ndarray::Array2;

// A 2×3 matrix times a 2×3 matrix: the contracted sizes 3 and 2 differ.
#[oxla::jit]
fn f(a: [[f32; 3]; 2], b: &[[f32; 3]; 2]) -> Array2<f32> {
    a.dot(&b)
}

fn main() {}
