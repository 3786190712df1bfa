#![allow(dead_code)]

#[oxla::jit]
fn f(_x: &mut [f32], y: f32) -> f32 {
    y
}

fn main() {}
