// A struct result lists every field of its struct, and only those.
use oxla::ndarray::Array1;

#[derive(oxla::Tree, Clone)]
struct Params {
    w: Array1<f32>,
    b: f32,
}

#[oxla::jit]
fn scaled(p: &Params, s: f32) -> Params {
    Params { w: &p.w * s, c: p.b * s }
}

fn main() {}
