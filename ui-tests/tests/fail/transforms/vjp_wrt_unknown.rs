#![allow(dead_code)]

#[oxla::vjp(f_vjp, wrt = w)]
fn f(x: f64, y: f64) -> f64 {
    x * y
}

fn main() {}
