#![allow(dead_code)]
use oxla_macros::pmap;

// `psum` over `k`, which no attribute binds (the pmap binds `i`).
#[pmap(p, axis_name = i)]
fn f(x: f64) -> f64 {
    psum(x, k) + pmax(x, i)
}

fn main() {}
