#![allow(dead_code)]

#[oxla::grad(df)]
fn f(x: f32) -> f32 {
    let y = x;
    y += 1.0;
    x = 2.0;
    y
}

fn main() {}
