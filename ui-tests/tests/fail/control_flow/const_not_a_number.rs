#![allow(dead_code)]

const NAME: &str = "rate";

// The constant is read at each call as `(NAME) as f64`: rustc checks it.
#[oxla::grad(df)]
fn f(x: f64) -> f64 {
    x * NAME + MISSING
}

fn main() {}
