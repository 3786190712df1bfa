#![allow(dead_code)]

#[oxla::grad(df)]
fn f(x: f64, v: &[f64]) -> f64 {
    let mut s = x;
    s = v * 2.0;
    s
}

fn main() {}
