#![allow(dead_code)]
// A glob import of oxla must not shadow anything the expansion names.
use oxla::*;

// "unknown method `abs`"-style errors used to come with rustc's own errors
// about the body and with "cannot find function `df`" at the caller.
#[grad(df)]
fn f(x: &[f64], y: &[f64]) -> f64 {
    sum((x - y).sinh())
}

fn main() {
    let (dx, dy): (Vec<f64>, Vec<f64>) = df(&[1.0], &[2.0]);
    drop((dx, dy));
}
