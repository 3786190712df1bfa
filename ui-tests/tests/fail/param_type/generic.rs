#![allow(dead_code)]

#[oxla::jit]
fn f<T: Copy>(x: T) -> T {
    x
}

fn main() {}
