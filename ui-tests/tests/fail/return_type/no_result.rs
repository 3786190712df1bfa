#![allow(dead_code)]

#[oxla::jit]
fn f(x: f32) {
    let _y = x * 2.0;
}

fn main() {}
