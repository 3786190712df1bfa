#![allow(dead_code)]

#[oxla::jit]
fn f(x: f64) -> f64 {
    f64::cbrt(x)
}

fn main() {}
