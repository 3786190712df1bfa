#![allow(dead_code)]

#[oxla::jit]
struct S;

fn main() {}
