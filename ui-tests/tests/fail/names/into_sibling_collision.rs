#![allow(dead_code)]

#[oxla::jit(f_into)]
fn f(x: &[f32]) -> Vec<f32> {
    x * 2.0
}

fn main() {}
