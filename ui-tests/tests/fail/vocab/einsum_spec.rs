#![allow(dead_code)]
use oxla::ndarray::{ArrayView1, ArrayView2};

// `einsum` specs outside what `dot_general` covers: each
// error is at the spec and names what is supported.
#[oxla::jit]
fn trace(a: ArrayView2<f64>) -> f64 {
    einsum("ii->", a)
}

#[oxla::jit]
fn arity(a: ArrayView2<f64>, v: ArrayView1<f64>) -> f64 {
    einsum("ij,j,k->", a, v).sum()
}

fn main() {}
