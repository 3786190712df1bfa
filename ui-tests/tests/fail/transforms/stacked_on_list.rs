#![allow(dead_code)]

#[oxla::vmap(f_batch)]
#[oxla::transforms(grad(f_grad), jvp(f_jvp))]
fn f(x: f64) -> f64 {
    x * x
}

fn main() {}
