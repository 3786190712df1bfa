#![allow(dead_code)]

#[oxla::jit]
fn f(x: f64) -> f64 {
    let mut y = x;
    let bump = |v: f64| {
        y = v;
        v
    };
    bump(x) + y
}

fn main() {}
