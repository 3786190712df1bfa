#![allow(dead_code)]

const K: f64 = 2.0;

#[oxla::func]
fn scaled(x: f64) -> f64 {
    x * K
}

#[oxla::grad(df)]
fn f(x: f64) -> f64 {
    scaled(x) + 1.0
}

fn main() {}
