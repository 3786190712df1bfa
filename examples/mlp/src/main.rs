//! A two-layer MLP trained by gradient descent on a synthetic dataset, as a
//! JAX user writes it:
//!
//! ```python
//! def loss(w1, b1, w2, b2, x, y):
//!     h = jnp.tanh(x @ w1 + b1)
//!     pred = h @ w2 + b2
//!     return jnp.mean((pred - y) ** 2)
//! ```
//!
//! The targets come from a fixed "teacher" network; the loss goes down as the
//! student fits them. Run with `cargo run --release -p mlp`.

use oxla::ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use oxla::value_and_grad;

#[value_and_grad(loss_and_grad, wrt = (w1, b1, w2, b2))]
fn loss(
    w1: ArrayView2<f32>,
    b1: ArrayView1<f32>,
    w2: ArrayView2<f32>,
    b2: ArrayView1<f32>,
    x: ArrayView2<f32>,
    y: ArrayView2<f32>,
) -> f32 {
    let h = (x.dot(&w1) + b1).tanh();
    let pred = h.dot(&w2) + b2;
    let err = pred - y;
    (err * err).mean()
}

/// Values in [-scale, scale) from a fixed seed (a 64-bit LCG).
fn uniform(shape: (usize, usize), scale: f32, seed: u64) -> Array2<f32> {
    let mut s = seed;
    let v = (0..shape.0 * shape.1)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0) * scale
        })
        .collect();
    Array2::from_shape_vec(shape, v).unwrap()
}

fn main() {
    let (n, d_in, d_hidden, d_out) = (256, 8, 32, 2);
    let x = uniform((n, d_in), 1.0, 1);
    // The teacher: a fixed random network of the same form.
    let t1 = uniform((d_in, 16), 1.0, 2);
    let t2 = uniform((16, d_out), 1.0, 3);
    let y = (x.dot(&t1)).mapv(f32::tanh).dot(&t2);

    let mut w1 = uniform((d_in, d_hidden), 0.5, 4);
    let mut b1 = Array1::<f32>::zeros(d_hidden);
    let mut w2 = uniform((d_hidden, d_out), 0.5, 5);
    let mut b2 = Array1::<f32>::zeros(d_out);

    // Two gradient entries beside central differences of the loss.
    let (_, g1, _, g2, _) = loss_and_grad(&w1, &b1, &w2, &b2, &x, &y);
    let h = 1e-2f32;
    let at = |w1: &Array2<f32>, w2: &Array2<f32>| {
        loss(
            w1.view(),
            b1.view(),
            w2.view(),
            b2.view(),
            x.view(),
            y.view(),
        )
    };
    let (mut p, mut m) = (w1.clone(), w1.clone());
    p[[3, 5]] += h;
    m[[3, 5]] -= h;
    let fd1 = (at(&p, &w2) - at(&m, &w2)) / (2.0 * h);
    let (mut p, mut m) = (w2.clone(), w2.clone());
    p[[7, 1]] += h;
    m[[7, 1]] -= h;
    let fd2 = (at(&w1, &p) - at(&w1, &m)) / (2.0 * h);
    println!("gradient check (oxla vs central difference, h = {h}):");
    println!("  d/dw1[3,5]: {:+.6}  {fd1:+.6}", g1[[3, 5]]);
    println!("  d/dw2[7,1]: {:+.6}  {fd2:+.6}", g2[[7, 1]]);

    // The training loop writes the gradients into buffers it owns
    // (`loss_and_grad_into`) and updates the weights in place: no step
    // allocates an array of its own.
    let (mut g1, mut gb1) = (Array2::zeros(w1.raw_dim()), Array1::zeros(d_hidden));
    let (mut g2, mut gb2) = (Array2::zeros(w2.raw_dim()), Array1::zeros(d_out));
    let lr = 0.5f32;
    for step in 0..=500 {
        let l = loss_and_grad_into(
            &w1, &b1, &w2, &b2, &x, &y, &mut g1, &mut gb1, &mut g2, &mut gb2,
        );
        if step % 50 == 0 {
            println!("step {step:3}: loss {l:.6}");
        }
        w1.scaled_add(-lr, &g1);
        b1.scaled_add(-lr, &gb1);
        w2.scaled_add(-lr, &g2);
        b2.scaled_add(-lr, &gb2);
    }
}
