#![allow(dead_code)]

// A loop runs over a range or over an array's elements, rows or columns;
// other iterators are an error naming those forms.
#[oxla::jit]
fn f(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for v in x.windows(2) {
        s += v[0];
    }
    s
}

fn main() {}
