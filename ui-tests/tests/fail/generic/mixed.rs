#![allow(dead_code)]

#[oxla::jit]
fn f<T: oxla::Float>(x: T, y: &[f64]) -> T {
    x
}

fn main() {}
