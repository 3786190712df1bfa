#![allow(dead_code)]

#[oxla::grad(df)]
fn f(x: f32) -> f32 {
    x.abs() * 2.0
}

fn main() {}
