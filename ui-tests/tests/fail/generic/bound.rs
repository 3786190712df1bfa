#![allow(dead_code)]

#[oxla::jit]
fn f<T: oxla::Float + std::fmt::Debug>(x: T) -> T {
    x
}

#[oxla::jit]
fn g<T>(x: T) -> T
where
    T: Copy,
{
    x
}

fn main() {}
