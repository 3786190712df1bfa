#![allow(dead_code)]

#[oxla::grad(df)]
fn f(x: f32) -> f32 {
    x.cbrt() * 2.0
}

fn main() {}
