#![allow(dead_code)]

#[oxla::jit]
fn f(x: &[f32], k: u8) -> f32 {
    x.sum()
}

#[oxla::jit]
fn g(x: &[f32], idx: &[usize]) -> f32 {
    x.sum()
}

fn main() {}
