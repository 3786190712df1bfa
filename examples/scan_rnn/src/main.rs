//! An RNN that collects its hidden states with `hs[t] = h`, as JAX's
//! `lax.scan` stacks a step's outputs:
//!
//! ```python
//! def rnn(w, u, xs):
//!     def step(h, x):
//!         h = jnp.tanh(w @ h + u @ x)
//!         return h, h
//!     _, hs = lax.scan(step, jnp.zeros(w.shape[0]), xs)
//!     return jnp.sum((hs - targets) ** 2)
//! ```
//!
//! The loss's gradient with respect to both weight matrices, checked
//! against central differences, and per-example gradients of a batch of
//! sequences by `vmap` of the gradient, each checked against the gradient
//! of that sequence alone. The reverse-mode tape is printed: one `h` per
//! step, as JAX's scan keeps one row per step (`hs` is a loop carry that
//! the backward body never reads, so no step keeps it). Run with
//! `cargo run --release -p scan_rnn`.

use oxla::ndarray::{s, Array2, Array3, ArrayView2};
use oxla::transforms;

#[transforms(
    grad(rnn_grad, wrt = (w, u)),
    vmap(per_example_grad_w, of = grad(wrt = w), in_axes = (None, None, 0, 0)),
)]
fn rnn_loss(
    w: ArrayView2<f64>,
    u: ArrayView2<f64>,
    xs: ArrayView2<f64>,
    targets: ArrayView2<f64>,
) -> f64 {
    let mut h = zeros(w.nrows());
    let mut hs = zeros((xs.nrows(), w.nrows()));
    for t in 0..xs.nrows() {
        h = (w.dot(&h) + u.dot(&xs.row(t))).tanh();
        hs[t] = h;
    }
    ((hs - targets) * (hs - targets)).sum()
}

/// The same loss in plain Rust, for the differences.
fn loss_ref(w: &Array2<f64>, u: &Array2<f64>, xs: &Array2<f64>, targets: &Array2<f64>) -> f64 {
    let mut h = oxla::ndarray::Array1::<f64>::zeros(w.nrows());
    let mut total = 0.0;
    for t in 0..xs.nrows() {
        h = (w.dot(&h) + u.dot(&xs.row(t))).mapv(f64::tanh);
        total += (&h - &targets.row(t)).mapv(|d| d * d).sum();
    }
    total
}

fn main() {
    let (hidden, inputs, steps) = (4, 3, 12);
    let w = Array2::from_shape_fn((hidden, hidden), |(i, j)| {
        0.3 * ((i * 7 + j * 3) as f64).sin()
    });
    let u = Array2::from_shape_fn((hidden, inputs), |(i, j)| {
        0.5 * ((i * 5 + j) as f64 * 0.7).cos()
    });
    let seq = |b: usize| {
        Array2::from_shape_fn((steps, inputs), |(t, k)| {
            ((t + 2 * k + 3 * b) as f64 * 0.4).sin()
        })
    };
    let targets = Array2::from_shape_fn((steps, hidden), |(t, i)| {
        0.2 * ((t * hidden + i) as f64 * 0.3).cos()
    });
    let xs = seq(0);

    oxla::reset_loop_tape_peak();
    let (gw, gu) = rnn_grad(w.view(), u.view(), xs.view(), targets.view());
    // Each step keeps what the backward body reads: `h`, not `hs`.
    let tape = oxla::loop_tape_peak_bytes();
    println!(
        "reverse-mode tape: {tape} bytes for {steps} steps (one h of {} bytes per step; hs, only written, is not kept)",
        hidden * 8
    );
    println!("loss = {:.10}", loss_ref(&w, &u, &xs, &targets));
    let h = 1e-6;
    let mut worst: f64 = 0.0;
    for (name, g, which) in [("w", &gw, 0), ("u", &gu, 1)] {
        for (idx, got) in g.indexed_iter() {
            let (mut wp, mut wm, mut up, mut um) = (w.clone(), w.clone(), u.clone(), u.clone());
            if which == 0 {
                wp[idx] += h;
                wm[idx] -= h;
            } else {
                up[idx] += h;
                um[idx] -= h;
            }
            let fd =
                (loss_ref(&wp, &up, &xs, &targets) - loss_ref(&wm, &um, &xs, &targets)) / (2.0 * h);
            worst = worst.max((got - fd).abs() / (1.0 + fd.abs()));
            if idx.1 == 0 {
                println!("  d loss / d {name}{idx:?} = {got:+.8}   central differences {fd:+.8}");
            }
        }
    }
    println!("largest relative difference from central differences: {worst:.2e}");

    // Per-example gradients: a batch of sequences, one gradient each.
    let batch = 5;
    let views: Vec<Array2<f64>> = (0..batch).map(seq).collect();
    let xs_b: Array3<f64> = oxla::ndarray::stack(
        oxla::ndarray::Axis(0),
        &views.iter().map(|v| v.view()).collect::<Vec<_>>(),
    )
    .unwrap();
    let ts_b: Array3<f64> =
        oxla::ndarray::stack(oxla::ndarray::Axis(0), &vec![targets.view(); batch]).unwrap();
    let per = per_example_grad_w(w.view(), u.view(), xs_b.view(), ts_b.view());
    let mut worst: f64 = 0.0;
    for (b, seq_b) in views.iter().enumerate() {
        let (one, _) = rnn_grad(w.view(), u.view(), seq_b.view(), targets.view());
        let got = per.slice(s![b, .., ..]);
        for (a, e) in got.iter().zip(one.iter()) {
            worst = worst.max((a - e).abs() / (1.0 + e.abs()));
        }
        println!(
            "  example {b}: |d loss / d w| = {:.8}",
            got.mapv(|v| v * v).sum().sqrt()
        );
    }
    println!("per-example gradients (vmap) against one example at a time: largest relative difference {worst:.2e}");
}
