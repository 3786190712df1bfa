#![allow(dead_code)]

#[oxla::grad(df, with = x)]
fn f(x: f32) -> f32 {
    x * x
}

fn main() {}
