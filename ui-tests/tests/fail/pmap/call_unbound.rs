#![allow(dead_code)]
use oxla_macros::pmap;

// `f` runs under its pmap only: call `p`.
#[pmap(p, axis_name = i)]
fn f(x: f64) -> f64 {
    x / psum(x, i)
}

fn main() {
    let _ = f(1.0);
}
