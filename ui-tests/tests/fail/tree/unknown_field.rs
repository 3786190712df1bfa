#![allow(dead_code)]
// A field the struct does not have, named at the field; the generated
// functions still exist, so the caller reports nothing more.
use oxla::ndarray::{Array1, ArrayView1};

#[derive(oxla::Tree, Clone)]
struct Params {
    w: Array1<f32>,
    b: f32,
}

#[oxla::grad(loss_grad, wrt = p)]
fn loss(p: &Params, x: ArrayView1<f32>) -> f32 {
    sum(&p.w9 * x) + p.b
}

fn main() {
    let p = Params { w: Array1::zeros(2), b: 0.0 };
    let x = Array1::zeros(2);
    let _g: Params = loss_grad(&p, x.view());
}
