#![allow(dead_code)]

#[oxla::jit]
fn f(v: &[f64]) -> f64 {
    let mut s = 0.0;
    if v > 0.0 {
        s = 1.0;
    }
    s
}

fn main() {}
