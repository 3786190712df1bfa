#![allow(dead_code)]
use oxla::ndarray::{Array1, Array2, ArrayView1};

#[oxla::jit]
fn double(x: ArrayView1<f32>) -> Array1<f32> {
    x * 2.0
}

fn main() {
    let x = Array1::<f32>::zeros(3);
    let mut wrong_element = Array1::<f64>::zeros(3);
    double_into(x.view(), &mut wrong_element);
    let mut wrong_rank = Array2::<f32>::zeros((3, 1));
    double_into(x.view(), &mut wrong_rank);
}
