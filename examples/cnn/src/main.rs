//! A small convolutional network trained on synthetic images: 8×8 pictures
//! of a horizontal or a vertical bar in noise, classified by a 3×3
//! convolution (1 → 4 features, "SAME"), ReLU, 2×2 max pooling, and a
//! dense layer written as a convolution whose window is the whole 4×4 map:
//!
//! ```python
//! h = jax.nn.relu(lax.conv(x, w1, (1, 1), "SAME"))
//! h = lax.reduce_window(h, -inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
//! logits = lax.conv(h, w2, (1, 1), "VALID")   # [n, 2, 1, 1]
//! loss = -mean(sum(onehot * log_softmax(logits, axis=1)))
//! ```
//!
//! Gradient descent on the loss, which falls; the gradient is checked
//! against central differences. Run with `cargo run --release -p cnn`.

use oxla::ndarray::{Array4, ArrayView4, Axis};
use oxla::value_and_grad;

const N: usize = 32;
const SIDE: usize = 8;

#[value_and_grad(loss_and_grad, wrt = (w1, w2))]
fn loss(
    w1: ArrayView4<f64>,
    w2: ArrayView4<f64>,
    x: ArrayView4<f64>,
    onehot: ArrayView4<f64>,
) -> f64 {
    let h = relu(conv(x, w1, [1, 1], Padding::Same));
    let h = max_pool(h, [2, 2], [2, 2], Padding::Valid);
    let logits = conv(h, w2, [1, 1], Padding::Valid);
    -(onehot * log_softmax(logits, Axis(1))).sum() / 32.0
}

/// A tiny deterministic generator (no dependency for an example).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    fn sym(&mut self, scale: f64) -> f64 {
        scale * (2.0 * self.next() - 1.0)
    }
}

/// `N` images: even ones a horizontal bar, odd ones a vertical bar, at a
/// random row or column, in noise; and their one-hot labels `[N, 2, 1, 1]`.
fn data(rng: &mut Lcg) -> (Array4<f64>, Array4<f64>) {
    let mut x = Array4::from_shape_fn((N, 1, SIDE, SIDE), |_| rng.sym(0.3));
    let mut onehot = Array4::zeros((N, 2, 1, 1));
    for n in 0..N {
        let at = (rng.next() * SIDE as f64) as usize % SIDE;
        for k in 0..SIDE {
            let (i, j) = if n % 2 == 0 { (at, k) } else { (k, at) };
            x[[n, 0, i, j]] += 1.0;
        }
        onehot[[n, n % 2, 0, 0]] = 1.0;
    }
    (x, onehot)
}

fn main() {
    let mut rng = Lcg(7);
    let (x, onehot) = data(&mut rng);
    let mut w1 = Array4::from_shape_fn((4, 1, 3, 3), |_| rng.sym(0.5));
    let mut w2 = Array4::from_shape_fn((2, 4, 4, 4), |_| rng.sym(0.25));

    let lr = 0.5;
    let mut first = None;
    let mut last = 0.0;
    for step in 0..60 {
        let (l, g1, g2) = loss_and_grad(w1.view(), w2.view(), x.view(), onehot.view());
        first.get_or_insert(l);
        last = l;
        if step % 10 == 0 {
            println!("step {step:2}: loss {l:.5}");
        }
        w1.scaled_add(-lr, &g1);
        w2.scaled_add(-lr, &g2);
    }
    let first = first.expect("a step ran");
    println!("loss {first:.5} -> {last:.5}");
    assert!(last < 0.5 * first, "the loss must fall");

    // The gradient against central differences at a few weights.
    let (_, g1, g2) = loss_and_grad(w1.view(), w2.view(), x.view(), onehot.view());
    let at = |w1: &Array4<f64>, w2: &Array4<f64>| {
        loss_and_grad(w1.view(), w2.view(), x.view(), onehot.view()).0
    };
    let h = 1e-6;
    let mut worst: f64 = 0.0;
    for idx in [[0, 0, 1, 1], [2, 0, 0, 2], [3, 0, 2, 0]] {
        let (mut p, mut m) = (w1.clone(), w1.clone());
        p[idx] += h;
        m[idx] -= h;
        let fd = (at(&p, &w2) - at(&m, &w2)) / (2.0 * h);
        println!(
            "d loss / d w1{idx:?}: {:+.8} (central difference {fd:+.8})",
            g1[idx]
        );
        worst = worst.max((fd - g1[idx]).abs());
    }
    for idx in [[0, 1, 2, 3], [1, 3, 0, 0]] {
        let (mut p, mut m) = (w2.clone(), w2.clone());
        p[idx] += h;
        m[idx] -= h;
        let fd = (at(&w1, &p) - at(&w1, &m)) / (2.0 * h);
        println!(
            "d loss / d w2{idx:?}: {:+.8} (central difference {fd:+.8})",
            g2[idx]
        );
        worst = worst.max((fd - g2[idx]).abs());
    }
    println!("largest difference from central differences: {worst:.2e}");
    assert!(worst < 1e-6, "gradient check");
}
