#![allow(dead_code)]

#[oxla::grad(df, wrt = n)]
fn f(x: f32, n: usize) -> f32 {
    x * (n as f32)
}

fn main() {}
