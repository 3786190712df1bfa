#![allow(dead_code)]

#[oxla::transforms(grad(f_grad), value_and_gard(f_vg))]
fn f(x: f64) -> f64 {
    x * x
}

fn main() {}
