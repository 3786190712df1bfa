#![allow(dead_code)]
use oxla_macros::pmap;

#[pmap(p, axis_name = i, in_axes = (0, None))]
fn f(x: f64) -> f64 {
    psum(x, i)
}

fn main() {}
