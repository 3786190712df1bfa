#![allow(dead_code)]

#[oxla::jit]
fn f(x: f32) -> f32 {
    let mut y = x;
    loop {
        y = y * 0.5;
    }
    y
}

fn main() {}
