#![allow(dead_code)]

#[oxla::vjp(f_vjp, wrt = (x, n))]
fn f(x: f64, n: i64) -> f64 {
    x * (n as f64)
}

fn main() {}
