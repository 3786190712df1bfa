#![allow(dead_code)]

#[oxla::jit]
fn f(x: f64) -> f64 {
    if x < 0.0 {
        return -x;
    }
    x
}

fn main() {}
