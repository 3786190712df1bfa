#![allow(dead_code)]

#[oxla::jit]
fn f(x: f64, k: i64) -> f64 {
    match k {
        n if n > 2 => x,
        _ => 1.0,
    }
}

fn main() {}
