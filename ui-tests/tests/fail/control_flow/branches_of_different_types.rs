#![allow(dead_code)]

// An `if` on a scalar runs one branch (a cond): both must give one type.
#[oxla::jit]
fn f(s: f64, v: &[f64], w: &[f64]) -> Vec<f64> {
    if s > 0.0 {
        v * 2.0
    } else {
        w.sum() < 1.0
    }
}

fn main() {}
