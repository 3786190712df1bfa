#![allow(dead_code)]

#[oxla::jit]
fn f(x: f32) -> f32 {
    x * 1e39
}

fn main() {}
