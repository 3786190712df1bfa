#![allow(dead_code)]
use oxla_macros::pmap;

#[pmap(p, axis_name = i)]
fn f(x: f64) -> f64 {
    let perm = 1.0;
    ppermute(x, i, perm)
}

fn main() {}
