// Transforms of a function with a parameter struct that are not supported
// yet: a struct batched along another axis than its leading one, a batch
// batched again, and Jacobians or Hessians with respect to the struct.
use oxla::ndarray::{Array1, ArrayView1};

#[derive(oxla::Tree, Clone)]
struct Params {
    w: Array1<f32>,
    b: f32,
}

#[oxla::vmap(batched, in_axes = (1, 0))]
fn f(p: &Params, x: ArrayView1<f32>) -> f32 {
    sum(&p.w * x) + p.b
}

#[oxla::vmap(twice, in_axes = (0, 0))]
#[oxla::vmap(once, in_axes = (0, 0))]
fn g(p: &Params, x: ArrayView1<f32>) -> f32 {
    sum(&p.w * x) + p.b
}

#[oxla::hessian(h, wrt = p)]
fn k(p: &Params, x: ArrayView1<f32>) -> f32 {
    sum(&p.w * x) + p.b
}

// By default a Jacobian is with respect to the first parameter.
#[oxla::jacfwd(j)]
fn m(p: &Params, x: ArrayView1<f32>) -> Array1<f32> {
    &p.w * x + p.b
}

fn main() {}
