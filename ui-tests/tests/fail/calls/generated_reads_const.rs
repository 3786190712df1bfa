// A called transformed function of another module that reads a constant:
// `RATE` would be read where the caller is, so it is an error saying so.
use oxla::ndarray::{Array1, ArrayView1};

mod model {
    use oxla::ndarray::ArrayView1;

    const RATE: f64 = 0.5;

    #[oxla::grad(decay_grad)]
    pub fn decay(x: ArrayView1<f64>) -> f64 {
        (&x * &x).sum() * RATE
    }
}

#[oxla::jit]
fn step(x: ArrayView1<f64>) -> Array1<f64> {
    x - model::decay_grad(x)
}

fn main() {
    let x = oxla::ndarray::array![1.0, 2.0];
    let _ = step(x.view());
}
