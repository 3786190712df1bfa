#![allow(dead_code)]

// A collective with no `#[pmap]` or named `#[vmap]` around it.
#[oxla::jit]
fn f(x: f64) -> f64 {
    x / psum(x, i)
}

fn main() {}
