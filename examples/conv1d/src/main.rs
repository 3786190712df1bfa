//! A 1-D convolution ("valid" cross-correlation, as `jnp.convolve` with the
//! kernel reversed) written as a sum over taps of shifted slices of the
//! signal, each window's start known only at run time:
//!
//! ```python
//! def conv1d(x, k):
//!     n = x.shape[0] - W + 1
//!     return sum(k[j] * lax.dynamic_slice(x, (j,), (n,)) for j in range(W))
//! ```
//!
//! Here the taps are a loop over `j`, each slice `x.slice(s![j..j + 8])`
//! (a window of 8 at a start known at run time, `lax.dynamic_slice`), and
//! the gradient of a loss of the output with respect to the kernel is
//! checked against central differences. Run with
//! `cargo run --release -p conv1d`.

use oxla::grad;
use oxla::ndarray::Array1;

/// The output length: a window of 8 per tap.
const OUT: usize = 8;

#[grad(conv_loss_grad, wrt = k)]
fn conv_loss(x: [f64; 12], k: [f64; 5], target: [f64; 8]) -> f64 {
    let mut y = zeros(8);
    for j in 0..5 {
        y = y + k[j] * x.slice(s![j..j + 8]);
    }
    ((y - target) * (y - target)).sum()
}

#[oxla::jit]
fn conv(x: [f64; 12], k: [f64; 5]) -> Array1<f64> {
    let mut y = zeros(8);
    for j in 0..5 {
        y = y + k[j] * x.slice(s![j..j + 8]);
    }
    y
}

fn conv_ref(x: &[f64; 12], k: &[f64; 5]) -> Vec<f64> {
    (0..OUT)
        .map(|i| (0..k.len()).map(|j| k[j] * x[i + j]).sum())
        .collect()
}

fn loss_ref(x: &[f64; 12], k: &[f64; 5], target: &[f64; 8]) -> f64 {
    conv_ref(x, k)
        .iter()
        .zip(target)
        .map(|(y, t)| (y - t) * (y - t))
        .sum()
}

fn main() {
    let x: [f64; 12] = std::array::from_fn(|i| (0.7 * i as f64).sin() + 0.1 * i as f64);
    let k = [0.25, -0.5, 1.0, 0.5, -0.125];
    let target: [f64; 8] = std::array::from_fn(|i| (0.3 * i as f64).cos());
    let y = conv(x, k);
    let want = conv_ref(&x, &k);
    let off = y
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    println!("conv1d(x, k) = {:.6}", y);
    println!("largest difference from a direct loop: {off:.2e}");
    let g = conv_loss_grad(&x, &k, &target);
    let h = 1e-6;
    let mut worst: f64 = 0.0;
    for j in 0..k.len() {
        let (mut kp, mut km) = (k, k);
        kp[j] += h;
        km[j] -= h;
        let fd = (loss_ref(&x, &kp, &target) - loss_ref(&x, &km, &target)) / (2.0 * h);
        worst = worst.max((g[j] - fd).abs() / (1.0 + fd.abs()));
        println!(
            "  d loss / d k[{j}] = {:+.10}   central differences {fd:+.10}",
            g[j]
        );
    }
    println!("largest relative difference from central differences: {worst:.2e}");
}
