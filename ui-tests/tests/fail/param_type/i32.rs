#![allow(dead_code)]

#[oxla::grad(df)]
fn f(_n: i32, x: f32) -> f32 {
    x * x
}

fn main() {}
