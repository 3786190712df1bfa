// A field of a type a parameter struct cannot hold.
use oxla::ndarray::Array1;

#[derive(oxla::Tree, Clone)]
struct Params {
    w: Array1<f32>,
    names: Vec<String>,
    steps: usize,
}

fn main() {}
