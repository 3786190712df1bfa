#![allow(dead_code)]

#[oxla::grad(df)]
fn f(x: f64, n: usize) -> f64 {
    let mut y = x;
    for _ in 0..n {
        if y > 10.0 {
            break;
        }
        y = y * 2.0;
    }
    y
}

fn main() {}
