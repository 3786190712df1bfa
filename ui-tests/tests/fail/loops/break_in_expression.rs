#![allow(dead_code)]

// `break` is a statement (`if y > 10.0 { break; }`); inside an expression
// that gives a value it is a clear error.
#[oxla::grad(df)]
fn f(x: f64, n: usize) -> f64 {
    let mut y = x;
    for _ in 0..n {
        y = if y > 10.0 { break } else { y * 2.0 };
    }
    y
}

fn main() {}
