// A batch of structs (`oxla::Batched`, a `vmap`'s struct result) bound
// inside another annotated function.
use oxla::ndarray::{Array1, ArrayView1};

#[derive(oxla::Tree, Clone)]
struct Params {
    w: Array1<f64>,
    b: f64,
}

#[oxla::transforms(vmap(per_example, in_axes = (None, 0), of = grad(wrt = p)))]
fn loss(p: &Params, x: f64) -> f64 {
    sum(&p.w * x) + p.b
}

#[oxla::jit]
fn total(p: &Params, xs: ArrayView1<f64>) -> f64 {
    let g = per_example(p, xs);
    g.b
}

fn main() {}
