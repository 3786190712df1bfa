#![allow(dead_code)]
use oxla::ndarray::{concatenate, stack, Array1, Array2, ArrayView1, ArrayView2, Axis};

// Operands of different ranks.
#[oxla::jit]
fn ranks(a: ArrayView1<f64>, b: ArrayView2<f64>) -> Array1<f64> {
    concatenate(Axis(0), &[a.view(), b.view()])
}

// Other axes of different static sizes.
#[oxla::jit]
fn sizes(a: [[f64; 3]; 2], b: [[f64; 4]; 2]) -> Array2<f64> {
    concatenate![Axis(0), a, b]
}

// An axis past the operands' rank.
#[oxla::jit]
fn axis(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Array2<f64> {
    stack(Axis(2), &[a.view(), b.view()])
}

fn main() {}
