#![allow(dead_code)]

#[oxla::jit]
fn f(x: f64, k: i32) -> f64 {
    match k {
        i32::MIN..=0 => x,
        1..=9 => 2.0 * x,
    }
}

fn main() {}
