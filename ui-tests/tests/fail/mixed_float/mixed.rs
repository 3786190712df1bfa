#![allow(dead_code)]

#[oxla::jit]
fn f(_x: &[f32], y: f64) -> f64 {
    y
}

fn main() {}
