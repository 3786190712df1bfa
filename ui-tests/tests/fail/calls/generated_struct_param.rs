// Calling a transformed function that takes a parameter struct inside
// another annotated function is not supported yet: a spanned error says so.
use oxla::ndarray::{Array1, ArrayView1};

#[derive(oxla::Tree, Clone)]
struct Params {
    w: Array1<f64>,
}

#[oxla::grad(loss_grad)]
fn loss(p: &Params, x: ArrayView1<f64>) -> f64 {
    (&p.w * &x).sum()
}

#[oxla::jit]
fn twice(p: &Params, x: ArrayView1<f64>) -> f64 {
    2.0 * loss(p, x)
}

fn main() {
    let x = oxla::ndarray::array![1.0, 2.0];
    let p = Params { w: x.clone() };
    let _ = (loss_grad(&p, x.view()), twice(&p, x.view()));
}
