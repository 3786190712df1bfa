#![allow(dead_code)]

#[oxla::grad(df)]
fn f(x: f32) -> f32 {
    x.signum() * 2.0
}

fn main() {}
