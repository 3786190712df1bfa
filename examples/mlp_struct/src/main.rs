//! An MLP whose parameters are one struct, with a `layer` helper, trained
//! by a loop that uses `value_and_grad` with respect to the struct, as a
//! JAX user writes it with a pytree:
//!
//! ```python
//! def loss(params, x, y):
//!     h = layer(params["hidden"], x)
//!     pred = h @ params["out"]["w"] + params["out"]["b"]
//!     return jnp.mean((pred - y) ** 2)
//! params = jax.tree.map(lambda p, g: p - lr * g, params, grads)
//! ```
//!
//! The gradient is checked against central differences, element by element,
//! before training. Run with `cargo run --release -p mlp_struct`.

use oxla::ndarray::{Array1, Array2, ArrayView2};
use oxla::Tree;

/// One dense layer.
#[derive(oxla::Tree, Clone, Debug)]
struct Dense {
    w: Array2<f64>,
    b: Array1<f64>,
}

/// The model: a struct of structs.
#[derive(oxla::Tree, Clone, Debug)]
struct Mlp {
    hidden: Dense,
    out: Dense,
}

#[oxla::func]
fn layer(l: &Dense, x: ArrayView2<f64>) -> Array2<f64> {
    (x.dot(&l.w) + &l.b).tanh()
}

#[oxla::value_and_grad(loss_and_grad, wrt = p)]
fn loss(p: &Mlp, x: ArrayView2<f64>, y: ArrayView2<f64>) -> f64 {
    let h = layer(&p.hidden, x);
    let err = h.dot(&p.out.w) + &p.out.b - y;
    (&err * &err).mean()
}

/// Values in [-scale, scale) from a fixed seed (a 64-bit LCG).
fn uniform(shape: (usize, usize), scale: f64, seed: u64) -> Array2<f64> {
    let mut s = seed;
    Array2::from_shape_fn(shape, |_| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * scale
    })
}

fn dense(inputs: usize, outputs: usize, seed: u64) -> Dense {
    Dense {
        w: uniform((inputs, outputs), 1.0 / (inputs as f64).sqrt(), seed),
        b: Array1::zeros(outputs),
    }
}

/// `p` with its `k`-th element (over every leaf, in order) moved by `h`.
fn nudged(p: &Mlp, k: usize, h: f64) -> Mlp {
    let mut out = p.clone();
    let mut i = 0;
    out.for_each_leaf_mut(&mut |mut leaf| {
        for v in leaf.iter_mut() {
            if i == k {
                *v += h;
            }
            i += 1;
        }
    });
    out
}

fn main() {
    let (n, d_in, d_hidden, d_out) = (256, 8, 32, 2);
    let x = uniform((n, d_in), 1.0, 1);
    // Targets from a fixed "teacher" network of the same shape.
    let teacher = Mlp {
        hidden: dense(d_in, d_hidden, 2),
        out: dense(d_hidden, d_out, 3),
    };
    let y = (x.dot(&teacher.hidden.w) + &teacher.hidden.b)
        .mapv(f64::tanh)
        .dot(&teacher.out.w)
        + &teacher.out.b;

    let mut p = Mlp {
        hidden: dense(d_in, d_hidden, 4),
        out: dense(d_hidden, d_out, 5),
    };
    println!(
        "parameters: {} leaves ({}), {} numbers",
        p.num_leaves(),
        Mlp::leaf_names().join(", "),
        p.num_elements()
    );

    // The gradient, checked against central differences at every 37th element.
    let (l0, g) = loss_and_grad(&p, x.view(), y.view());
    let flat = g.flatten();
    let mut worst: f64 = 0.0;
    for k in (0..flat.len()).step_by(37) {
        let h = 1e-6;
        let up = loss(&nudged(&p, k, h), x.view(), y.view());
        let down = loss(&nudged(&p, k, -h), x.view(), y.view());
        let fd = (up - down) / (2.0 * h);
        worst = worst.max((flat[k] - fd).abs() / (1.0 + fd.abs()));
        if k < 150 {
            println!(
                "  d loss / d element {k:>4}: oxla {:+.9e}, central difference {fd:+.9e}",
                flat[k]
            );
        }
    }
    println!("gradient vs central differences: worst relative difference {worst:.2e}");
    assert!(
        worst < 1e-6,
        "the gradient disagrees with central differences"
    );

    let lr = 0.5;
    println!("step {:>4}: loss {l0:.6}", 0);
    for step in 1..=300 {
        let (l, g) = loss_and_grad(&p, x.view(), y.view());
        p.axpy(-lr, &g); // p ← p − lr·g, leaf by leaf
        if step % 50 == 0 {
            println!("step {step:>4}: loss {l:.6}, |grad| {:.3e}", g.norm2());
        }
    }
    let last = loss(&p, x.view(), y.view());
    println!("final loss {last:.6} (from {l0:.6})");
    assert!(last < 0.5 * l0, "training did not reduce the loss");
}
