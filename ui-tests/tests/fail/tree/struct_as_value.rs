// A struct parameter is used through its fields or passed to a helper.
use oxla::ndarray::{Array1, ArrayView1};

#[derive(oxla::Tree, Clone)]
struct Params {
    w: Array1<f32>,
    b: f32,
}

#[oxla::jit]
fn f(p: &Params, x: ArrayView1<f32>) -> f32 {
    sum(p * 2.0) + sum(x)
}

fn main() {}
