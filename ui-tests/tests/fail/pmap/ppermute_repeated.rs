#![allow(dead_code)]

#[oxla::transforms(pmap(p, axis_name = i))]
fn f(x: f64) -> f64 {
    ppermute(x, i, [(0, 1), (0, 2)])
}

fn main() {}
