//! Softmax regression with integer labels, written as in JAX:
//!
//! ```python
//! def loss(w, b, x, labels):
//!     logp = jax.nn.log_softmax(x @ w + b, axis=1)
//!     return -jnp.take_along_axis(logp, labels[:, None], axis=1).mean()
//! ```
//!
//! Three classes of points in the plane, each around its own centre; the
//! labels are `i32`. Run with `cargo run --release -p softmax_ce`.

use oxla::ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use oxla::{jit, value_and_grad};

/// Mean cross-entropy of the linear classifier `x·w + b` against `labels`.
#[value_and_grad(loss_and_grad, wrt = (w, b))]
fn loss(
    w: ArrayView2<f32>,
    b: ArrayView1<f32>,
    x: ArrayView2<f32>,
    labels: ArrayView1<i32>,
) -> f32 {
    let logp = log_softmax(x.dot(&w) + b, Axis(1));
    -take_along_axis(logp, &labels, Axis(1)).mean()
}

/// The predicted class of each point.
#[jit]
fn predict(w: ArrayView2<f32>, b: ArrayView1<f32>, x: ArrayView2<f32>) -> Array1<i64> {
    argmax(x.dot(&w) + b, Axis(1))
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
    let (n, classes) = (600, 3);
    let centres = [[1.5f32, 0.0], [-1.0, 1.2], [-0.5, -1.5]];
    let labels: Array1<i32> = (0..n).map(|i| (i % classes) as i32).collect();
    let jitter = uniform(2 * n, 7);
    let x = Array2::from_shape_fn((n, 2), |(i, j)| {
        centres[i % classes][j] + 0.8 * jitter[2 * i + j]
    });

    let mut w = Array2::<f32>::zeros((2, classes));
    let mut b = Array1::<f32>::zeros(classes);
    // Start away from the symmetric point, so every gradient entry differs.
    w[[0, 1]] = 0.3;
    b[2] = -0.2;

    let (l0, gw, gb) = loss_and_grad(&w, &b, &x, &labels);
    let h = 1e-2f32;
    println!("loss at the start: {l0:.6} (ln 3 = {:.6})", 3f32.ln());
    println!("gradient check (oxla vs central difference, h = {h}):");
    for (i, j) in [(0, 0), (1, 2), (0, 1)] {
        let (mut wp, mut wm) = (w.clone(), w.clone());
        wp[[i, j]] += h;
        wm[[i, j]] -= h;
        let fd = (loss(wp.view(), b.view(), x.view(), labels.view())
            - loss(wm.view(), b.view(), x.view(), labels.view()))
            / (2.0 * h);
        println!("  d/dw[{i},{j}]: {:+.6}  {fd:+.6}", gw[[i, j]]);
    }
    for k in 0..classes {
        let (mut bp, mut bm) = (b.clone(), b.clone());
        bp[k] += h;
        bm[k] -= h;
        let fd = (loss(w.view(), bp.view(), x.view(), labels.view())
            - loss(w.view(), bm.view(), x.view(), labels.view()))
            / (2.0 * h);
        println!("  d/db[{k}]:   {:+.6}  {fd:+.6}", gb[k]);
    }

    let lr = 0.5f32;
    for step in 0..=300 {
        let (l, gw, gb) = loss_and_grad(&w, &b, &x, &labels);
        if step % 50 == 0 {
            println!("step {step:3}: loss {l:.6}");
        }
        w.scaled_add(-lr, &gw);
        b.scaled_add(-lr, &gb);
    }
    let predicted = predict(w.view(), b.view(), x.view());
    let correct = predicted
        .iter()
        .zip(&labels)
        .filter(|(p, l)| **p == **l as i64)
        .count();
    println!("training accuracy: {correct}/{n}");
}
