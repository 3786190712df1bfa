#![allow(dead_code)]
use oxla_macros::pmap;

#[pmap(p, axis_name = i)]
fn f(x: f64) -> f64 {
    psum(x, i + 1)
}

fn main() {}
