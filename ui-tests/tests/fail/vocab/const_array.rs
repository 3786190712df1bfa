#![allow(dead_code)]
use oxla::ndarray::ArrayView1;

// A crate `const` array indexed in an annotated function: constants are
// read as numbers, and the error says how to write the values instead.
const C: [f64; 3] = [1.0, -2.0, 0.5];

#[oxla::jit]
fn f(x: ArrayView1<f64>) -> f64 {
    let mut s = 0.0;
    for i in 0..3 {
        s += C[i] * x[i];
    }
    s
}

fn main() {}
