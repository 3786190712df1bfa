#![allow(dead_code)]

#[oxla::jit]
fn f(x: String, y: f32) -> f32 {
    let a = x * y;
    let b = x + a;
    b * x
}

fn main() {}
