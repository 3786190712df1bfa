#![allow(dead_code, non_snake_case)]

#[oxla::grad(fooBar)]
fn foo_bar(x: f64) -> f64 {
    x * x
}

fn main() {}
