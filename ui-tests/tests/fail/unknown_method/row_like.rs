#![allow(dead_code)]
use oxla::ndarray::ArrayView2;

// Methods known by other libraries' names: each error names the spelling
// here.
#[oxla::jit]
fn first_row(m: ArrayView2<f64>) -> f64 {
    m.get_row(0).sum()
}

#[oxla::jit]
fn flipped(m: ArrayView2<f64>) -> f64 {
    m.transpose().sum()
}

#[oxla::jit]
fn iterated(m: ArrayView2<f64>) -> f64 {
    m.rows().sum()
}

fn main() {}
