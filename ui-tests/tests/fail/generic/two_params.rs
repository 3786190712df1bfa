#![allow(dead_code)]

#[oxla::jit]
fn f<T: oxla::Float, U: oxla::Float>(x: T, y: U) -> T {
    x
}

fn main() {}
