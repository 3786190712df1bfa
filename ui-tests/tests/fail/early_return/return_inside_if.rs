#![allow(dead_code)]

// A `return` inside an `if` at the top of the body is rewritten (`if c {
// a } else { rest }`); inside a `let`'s value it cannot be.
#[oxla::jit]
fn f(x: f64) -> f64 {
    let y = if x < 0.0 { return -x } else { x * 2.0 };
    y
}

fn main() {}
