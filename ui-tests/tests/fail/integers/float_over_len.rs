#![allow(dead_code)]

// A mean written by hand: Rust refuses `f64 / usize` too; the error is at
// `/` and names the conversion.
#[oxla::jit]
fn mean(x: &[f64]) -> f64 {
    sum(x) / x.len()
}

fn main() {}
