// Transforms of a function with a parameter struct: vmap batching the
// struct and hessian are not supported yet, nor a transform of another
// transform.
use oxla::ndarray::{Array1, ArrayView1};

#[derive(oxla::Tree, Clone)]
struct Params {
    w: Array1<f32>,
    b: f32,
}

#[oxla::vmap(batched, in_axes = (0, 0))]
fn f(p: &Params, x: ArrayView1<f32>) -> f32 {
    sum(&p.w * x) + p.b
}

#[oxla::grad(d2, wrt = p)]
#[oxla::grad(d1, wrt = p)]
fn g(p: &Params, x: ArrayView1<f32>) -> f32 {
    sum(&p.w * x) + p.b
}

#[oxla::hessian(h, wrt = p)]
fn k(p: &Params, x: ArrayView1<f32>) -> f32 {
    sum(&p.w * x) + p.b
}

fn main() {}
