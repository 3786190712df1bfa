#![allow(dead_code)]

// Attributes apply bottom-up: `f_grad` is not generated yet when `f_grad2` is.
#[oxla::grad(f_grad)]
#[oxla::grad(f_grad2, of = f_grad)]
fn f(x: f64) -> f64 {
    x * x * x
}

fn main() {}
