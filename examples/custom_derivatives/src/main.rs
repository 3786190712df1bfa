//! Custom derivative rules, as JAX's `custom_jvp` and `custom_vjp`:
//!
//! - `log1pexp(x) = ln(1 + eˣ)` with a JVP rule: its true derivative
//!   `eˣ/(1 + eˣ)` is ∞/∞ = NaN once `eˣ` overflows (x ≈ 710 in f64), the
//!   rule `1 − 1/(1 + eˣ)` is 1 there. `grad`, `hessian` and `vmap` all use
//!   the rule.
//! - `clip_gradient(lo, hi, x)`: the identity in the forward pass, whose
//!   backward pass clips the cotangent into `[lo, hi]`. The value is
//!   unchanged; the gradient is clipped.
//!
//! Each prints a central-difference check where the rule is the true
//! derivative. Run with `cargo run --release -p custom_derivatives`.

use oxla::ndarray::{Array1, ArrayView1};
use oxla::{grad, transforms, vmap};

#[oxla::func]
#[oxla::custom_jvp(jvp = log1pexp_jvp)]
fn log1pexp(x: f64) -> f64 {
    (1.0 + x.exp()).ln()
}

/// The rule: `(value, tangent)` from `(x, t)`; linear in `t`.
#[oxla::func]
fn log1pexp_jvp(x: f64, t: f64) -> (f64, f64) {
    let e = x.exp();
    ((1.0 + e).ln(), (1.0 - 1.0 / (1.0 + e)) * t)
}

#[transforms(grad(softplus_grad), hessian(softplus_hessian))]
fn softplus(x: f64) -> f64 {
    log1pexp(x)
}

#[grad(naive_grad)]
fn naive(x: f64) -> f64 {
    (1.0 + x.exp()).ln()
}

#[vmap(softplus_grads)]
#[grad(softplus_grad_one)]
fn softplus_each(x: f64) -> f64 {
    log1pexp(x)
}

#[oxla::func]
#[oxla::custom_vjp(fwd = clip_gradient_fwd, bwd = clip_gradient_bwd)]
fn clip_gradient(lo: f64, hi: f64, x: ArrayView1<f64>) -> Array1<f64> {
    x.to_owned()
}

/// The forward pass: the value, then the residuals `bwd` reads.
#[oxla::func]
fn clip_gradient_fwd(lo: f64, hi: f64, x: ArrayView1<f64>) -> (Array1<f64>, f64, f64) {
    (x.to_owned(), lo, hi)
}

/// The backward pass: a cotangent per parameter (none flows to the bounds).
#[oxla::func]
fn clip_gradient_bwd(lo: f64, hi: f64, g: ArrayView1<f64>) -> (f64, f64, Array1<f64>) {
    (0.0, 0.0, g.clamp(lo, hi))
}

#[grad(clipped_loss_grad)]
fn clipped_loss(w: ArrayView1<f64>) -> f64 {
    let residual = clip_gradient(-1.0, 1.0, &w * &w - 2.0);
    (&residual * &residual).sum()
}

#[grad(plain_loss_grad)]
fn plain_loss(w: ArrayView1<f64>) -> f64 {
    let residual = &w * &w - 2.0;
    (&residual * &residual).sum()
}

fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-6;
    (f(x + h) - f(x - h)) / (2.0 * h)
}

fn main() {
    println!("log1pexp with a custom_jvp rule:");
    for x in [-5.0, 0.0, 5.0, 100.0, 1000.0] {
        let fd = if x < 700.0 {
            format!("{:.10}", central(softplus, x))
        } else {
            "— (the value is inf)".to_string()
        };
        println!(
            "  x = {x:6}: value {:.6e}, grad {:.10} (naive {:.10}), hessian {:.3e}, central differences {fd}",
            softplus(x),
            softplus_grad(x),
            naive_grad(x),
            softplus_hessian(x),
        );
    }
    let xs = [-2.0, 0.5, 800.0];
    println!("  vmap(grad) over {xs:?}: {:?}", softplus_grads(&xs));

    println!("clip_gradient with a custom_vjp rule (cotangents clipped into [-1, 1]):");
    let w = Array1::from(vec![0.3, 1.4, 1.0, 2.5]);
    let clipped = clipped_loss_grad(w.view());
    let plain = plain_loss_grad(w.view());
    println!(
        "  loss {:.6} (unclipped {:.6})",
        clipped_loss(w.view()),
        plain_loss(w.view())
    );
    for i in 0..w.len() {
        let r: f64 = w[i] * w[i] - 2.0;
        // The clipped gradient is 2·w·clip(2·r) per entry; central
        // differences give the unclipped one, equal where |2·r| <= 1.
        let fd = central(
            |v| {
                let mut u = w.clone();
                u[i] = v;
                plain_loss(u.view())
            },
            w[i],
        );
        let note = if (2.0 * r).abs() <= 1.0 {
            "not clipped"
        } else {
            "clipped"
        };
        println!(
            "  w[{i}] = {:.2}: clipped grad {:+.8}, true grad {:+.8}, central differences {fd:+.8} ({note})",
            w[i], clipped[i], plain[i]
        );
    }
}
