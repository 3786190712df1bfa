#![allow(dead_code)]

#[oxla::vmap]
fn f(x: f32) -> f32 {
    x * x
}

fn main() {}
