// A parameter struct has one float type.
use oxla::ndarray::Array1;

#[derive(oxla::Tree, Clone)]
struct Params {
    w: Array1<f32>,
    b: f64,
}

fn main() {}
