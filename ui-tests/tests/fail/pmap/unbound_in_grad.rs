#![allow(dead_code)]

// `g` is the gradient alone, not under a pmap: `i` is free in it.
#[oxla::grad(g)]
fn f(x: f64) -> f64 {
    pmean(x * x, i)
}

fn main() {}
