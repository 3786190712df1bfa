#![allow(dead_code)]

#[oxla::jit]
fn f(x: f64, n: usize) -> f64 {
    let y = x;
    for _ in 0..n {
        y = y * 0.5;
    }
    y
}

fn main() {}
