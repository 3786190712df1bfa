#![allow(dead_code)]
use oxla_macros::pmap;

#[pmap(p)]
fn f(x: f64) -> f64 {
    psum(x, i)
}

fn main() {}
