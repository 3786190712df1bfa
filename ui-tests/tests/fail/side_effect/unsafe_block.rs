#![allow(dead_code)]

static mut COUNT: f32 = 0.0;

#[oxla::jit]
fn f(x: f32) -> f32 {
    let c = unsafe { COUNT };
    x * c
}

fn main() {}
