// A function oxla has under another name (numpy's `matvec`): one error,
// naming the spelling here, never "cannot find macro".
use oxla::ndarray::{ArrayView1, ArrayView2};

#[oxla::jit]
fn f(a: ArrayView2<f64>, v: ArrayView1<f64>) -> f64 {
    matvec(a, v).sum()
}

fn main() {}
