//! Parameter structs (`#[derive(oxla::Tree)]`): taken, returned and
//! differentiated with respect to, as a whole.

use oxla::ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use oxla::Tree;

#[derive(oxla::Tree, Clone, Debug, PartialEq)]
struct Mlp {
    w1: Array2<f64>,
    b1: Array1<f64>,
    w2: Array2<f64>,
    b2: Array1<f64>,
}

#[oxla::func]
fn layer(w: &Array2<f64>, b: &Array1<f64>, x: ArrayView2<f64>) -> Array2<f64> {
    (x.dot(w) + b).tanh()
}

#[oxla::transforms(value_and_grad(loss_vg, wrt = p), grad(loss_grad))]
fn loss(p: &Mlp, x: ArrayView2<f64>, y: ArrayView1<f64>) -> f64 {
    let h = layer(&p.w1, &p.b1, x);
    let out = h.dot(&p.w2) + &p.b2;
    let r = out.sum_axis(oxla::ndarray::Axis(1)) - y;
    (&r * &r).mean()
}

fn mlp(seed: u64) -> Mlp {
    let mut s = seed;
    let mut next = move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 33) as f64 / (1u64 << 31) as f64) - 0.5
    };
    Mlp {
        w1: Array2::from_shape_fn((3, 4), |_| next()),
        b1: Array1::from_shape_fn(4, |_| next()),
        w2: Array2::from_shape_fn((4, 2), |_| next()),
        b2: Array1::from_shape_fn(2, |_| next()),
    }
}

#[test]
fn value_and_grad_of_a_struct() {
    let p = mlp(1);
    let x = Array2::from_shape_fn((5, 3), |(i, j)| (i as f64 - 2.0) * 0.3 + j as f64 * 0.1);
    let y = Array1::from_shape_fn(5, |i| (i as f64 * 0.7).sin());
    let (l, g): (f64, Mlp) = loss_vg(&p, x.view(), y.view());
    assert_eq!(l, loss(&p, x.view(), y.view()));
    let (g2, _, _) = loss_grad(&p, x.view(), y.view());
    assert_eq!(g, g2);
    println!("{g:?}");
}
