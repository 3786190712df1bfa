#![allow(dead_code)]

#[oxla::jit]
fn f<const N: usize>(x: [f32; N]) -> f32 {
    x[0]
}

fn main() {}
