#![allow(dead_code)]

// A fold over an array: the error names the reductions (`max(x)` for a
// fold with `f64::max`).
#[oxla::jit]
fn top(x: &[f64]) -> f64 {
    x.iter().fold(f64::NEG_INFINITY, |a, b| a.max(*b))
}

fn main() {}
