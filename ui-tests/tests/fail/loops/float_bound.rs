#![allow(dead_code)]

#[oxla::jit]
fn f(x: f64) -> f64 {
    let mut y = x;
    for _ in 0..x {
        y = y * 0.5;
    }
    y
}

fn main() {}
