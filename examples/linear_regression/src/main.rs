//! Linear regression trained by gradient descent, written as in JAX:
//!
//! ```python
//! def loss(w, b, x, y):
//!     err = x @ w + b - y
//!     return jnp.mean(err ** 2)
//! loss_and_grad = jax.value_and_grad(loss, argnums=(0, 1))
//! ```
//!
//! Run with `cargo run --release -p linear_regression`.

use oxla::ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use oxla::value_and_grad;

/// Mean squared error of the linear model `x·w + b`.
#[value_and_grad(loss_and_grad, wrt = (w, b))]
fn loss(w: ArrayView1<f32>, b: f32, x: ArrayView2<f32>, y: ArrayView1<f32>) -> f32 {
    let err = x.dot(&w) + b - y;
    (err * err).mean()
}

/// Uniform values in [-1, 1) from a fixed seed (a 64-bit LCG).
fn uniform(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn main() {
    let (n, d) = (512, 4);
    let w_true = Array1::from(vec![2.0f32, -3.0, 0.5, 1.25]);
    let b_true = 0.75f32;
    let x = Array2::from_shape_vec((n, d), uniform(n * d, 1)).unwrap();
    let noise = Array1::from(uniform(n, 2)) * 0.01;
    let y = x.dot(&w_true) + b_true + noise;

    let mut w = Array1::<f32>::zeros(d);
    let mut b = 0.0f32;

    // The gradient beside central differences of the loss, at the start.
    let (l0, gw, gb) = loss_and_grad(&w, b, &x, &y);
    let h = 1e-2f32;
    println!("loss at w = 0, b = 0: {l0:.6}");
    println!("gradient check (oxla vs central difference, h = {h}):");
    for i in 0..d {
        let (mut wp, mut wm) = (w.clone(), w.clone());
        wp[i] += h;
        wm[i] -= h;
        let fd = (loss(wp.view(), b, x.view(), y.view()) - loss(wm.view(), b, x.view(), y.view()))
            / (2.0 * h);
        println!("  d/dw[{i}]: {:+.6}  {fd:+.6}", gw[i]);
    }
    let fd = (loss(w.view(), b + h, x.view(), y.view())
        - loss(w.view(), b - h, x.view(), y.view()))
        / (2.0 * h);
    println!("  d/db:    {gb:+.6}  {fd:+.6}");

    // Each step writes the gradient of `w` into `gw` (`loss_and_grad_into`)
    // and updates `w` in place: no array is allocated per step.
    let lr = 0.2f32;
    let mut gw = Array1::<f32>::zeros(d);
    for step in 0..=200 {
        let (l, gb) = loss_and_grad_into(&w, b, &x, &y, &mut gw);
        if step % 25 == 0 {
            println!("step {step:3}: loss {l:.6}");
        }
        w.scaled_add(-lr, &gw);
        b -= lr * gb;
    }
    println!("learned w = {w:.4}, b = {b:.4}");
    println!("true    w = {w_true:.4}, b = {b_true:.4}");
}
