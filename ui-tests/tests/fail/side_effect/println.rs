#![allow(dead_code)]

#[oxla::jit]
fn f(x: f64) -> f64 {
    println!("x = {x}");
    x * x
}

fn main() {}
