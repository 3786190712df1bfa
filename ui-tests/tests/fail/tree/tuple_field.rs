// A tuple field: a nested struct or a fixed-size array stands for it.
use oxla::ndarray::Array1;

#[derive(oxla::Tree, Clone)]
struct Params {
    w: Array1<f64>,
    pair: (Array1<f64>, f64),
}

fn main() {}
