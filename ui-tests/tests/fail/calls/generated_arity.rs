// A generated gradient called with an argument missing: the error names
// the gradient's parameters.
use oxla::ndarray::{Array1, ArrayView1};

#[oxla::grad(loss_grad)]
fn loss(w: ArrayView1<f64>, x: ArrayView1<f64>) -> f64 {
    (&w * &x).sum()
}

#[oxla::jit]
fn step(w: ArrayView1<f64>, x: ArrayView1<f64>) -> Array1<f64> {
    let (g, _) = loss_grad(w);
    w - g
}

fn main() {
    let w = oxla::ndarray::array![1.0, 2.0];
    let _ = (loss_grad(w.view(), w.view()), step(w.view(), w.view()));
}
