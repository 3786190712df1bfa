// A function neither oxla's nor defined or imported here: one error naming
// the nearest names oxla knows.
use oxla::ndarray::ArrayView1;

#[oxla::jit]
fn f(x: ArrayView1<f64>) -> f64 {
    softmaxx(x)
}

fn main() {}
