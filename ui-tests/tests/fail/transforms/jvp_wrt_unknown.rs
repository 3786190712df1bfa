#![allow(dead_code)]

#[oxla::jvp(f_jvp, wrt = (x, z))]
fn f(x: f64, y: f64) -> f64 {
    x * y
}

fn main() {}
