#![allow(dead_code)]

#[oxla::jit]
fn f(x: &[f64]) -> Vec<f64> {
    let mut y = x * 1.0;
    while y > 1.0 {
        y = y * 0.5;
    }
    y
}

fn main() {}
