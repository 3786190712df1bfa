#![allow(dead_code)]

#[oxla::jit]
fn f(x: f32) -> f32 {
    for _i in 0..3 {}
    x
}

fn main() {}
