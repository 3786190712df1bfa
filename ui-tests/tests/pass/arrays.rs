// Array functions: compiled to fused kernels on first call; vmap of grad.
use oxla::{grad, jit, vmap};

#[jit]
pub fn fused(x: &[f32], y: &[f32], s: f32) -> (f32, Vec<f32>) {
    let z = x * s + y;
    (oxla::sum(z), z)
}

#[vmap(square_all)]
fn square(x: f32) -> f32 {
    x * x
}

#[vmap(per_example, in_axes = (None, 0, 0))]
#[grad(loss_grad, wrt = w)]
fn loss(w: &[f64], x: &[f64], y: f64) -> f64 {
    let r = dot(w, x) - y;
    r * r
}

fn main() {
    let (s, z) = fused(&[1.0, 2.0], &[10.0, 20.0], 3.0);
    assert_eq!(z, vec![13.0, 26.0]);
    assert_eq!(s, 39.0);
    assert_eq!(square_all(&[1.0, 2.0, 3.0]), vec![1.0, 4.0, 9.0]);

    let w = [1.0, -1.0];
    // Two examples of length 2: the batched slice parameter is a matrix.
    let xs = oxla::ndarray::array![[1.0, 2.0], [3.0, 5.0]];
    let ys = [0.0, 1.0];
    let g = per_example(&w, &xs, &ys);
    assert_eq!(g.row(0).to_vec(), loss_grad(&w, &[1.0, 2.0], 0.0));
    assert_eq!(g.row(1).to_vec(), loss_grad(&w, &[3.0, 5.0], 1.0));
    // d/dw (w.x - y)^2 = 2 (w.x - y) x
    assert_eq!(loss_grad(&w, &[1.0, 2.0], 0.0), vec![-2.0, -4.0]);
    assert!(PER_EXAMPLE_IR.contains("fn per_example("));
}
