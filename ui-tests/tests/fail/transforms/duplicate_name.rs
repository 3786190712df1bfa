#![allow(dead_code)]

#[oxla::transforms(grad(f_grad), value_and_grad(f_grad))]
fn f(x: f64) -> f64 {
    x * x
}

fn main() {
    let _ = f_grad(1.0);
}
