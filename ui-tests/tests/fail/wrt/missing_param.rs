#![allow(dead_code)]

#[oxla::grad(df, wrt = (x, z))]
fn f(x: f32, y: f32) -> f32 {
    x * y
}

fn main() {}
