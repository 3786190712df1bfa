//! Custom derivative rules, `#[oxla::custom_jvp]` and `#[oxla::custom_vjp]`
//! on `#[oxla::func]` helpers, against JAX's `jax.custom_jvp` and
//! `jax.custom_vjp` (`tests/reference/custom_derivatives_jax.py`, its
//! output read here): log1pexp stable where the naive derivative is NaN
//! (f64 at 1000, f32 at 100), a rule that is not the true derivative (so
//! agreeing with JAX proves the rule is used), gradient clipping in the
//! backward pass, a custom_vjp with a residual under forward over reverse;
//! grad, jvp, vmap and hessian through each, and central differences where
//! the rule is the true derivative.

use oxla::ndarray::{Array1, Array2, ArrayD, ArrayView1};

/// JAX's values: `name` → its array.
fn jax(name: &str) -> ArrayD<f64> {
    let text = include_str!("../reference/custom_derivatives_jax.txt");
    crate::reference::reference_array(text, "custom_derivatives_jax.txt", name)
}

fn jax_vec(name: &str) -> Vec<f64> {
    jax(name).iter().copied().collect()
}

fn jax_scalar(name: &str) -> f64 {
    jax(name).iter().copied().next().unwrap()
}

/// Equal within `tol` relative (absolute below 1), NaN equal to NaN.
#[track_caller]
fn close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= tol * w.abs().max(1.0);
        assert!(ok, "{what}[{i}]: {g:?}, JAX {w:?}");
    }
}

/// Central finite difference of `f` at `x`.
fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-6;
    (f(x + h) - f(x - h)) / (2.0 * h)
}

// ---- custom_jvp: log1pexp ----

/// `ln(1 + eˣ)`, whose derivative `eˣ/(1 + eˣ)` is ∞/∞ where `eˣ`
/// overflows; the rule `1 − 1/(1 + eˣ)` is not.
#[oxla::func]
#[oxla::custom_jvp(jvp = log1pexp_jvp)]
fn log1pexp<T: oxla::Float>(x: T) -> T {
    (T::one() + x.exp()).ln()
}

#[oxla::func]
fn log1pexp_jvp<T: oxla::Float>(x: T, t: T) -> (T, T) {
    let e = x.exp();
    (
        (T::one() + e).ln(),
        (T::one() - T::one() / (T::one() + e)) * t,
    )
}

#[oxla::transforms(grad(softplus_grad), hessian(softplus_hessian), jvp(softplus_jvp))]
fn softplus_custom(x: f64) -> f64 {
    log1pexp(x)
}

#[oxla::grad(naive_grad)]
fn softplus_naive(x: f64) -> f64 {
    (1.0 + x.exp()).ln()
}

#[oxla::grad(softplus32_grad)]
fn softplus32(x: f32) -> f32 {
    log1pexp(x)
}

#[oxla::grad(naive32_grad)]
fn naive32(x: f32) -> f32 {
    (1.0 + x.exp()).ln()
}

#[oxla::vmap(softplus_grads)]
#[oxla::grad(softplus_grad_again)]
fn softplus_for_vmap(x: f64) -> f64 {
    log1pexp(x)
}

#[test]
fn log1pexp_uses_its_rule_where_the_naive_derivative_is_nan() {
    let xs = jax_vec("log1pexp_x");
    let value: Vec<f64> = xs.iter().map(|x| softplus_custom(*x)).collect();
    close("value", &value, &jax_vec("log1pexp_value"), 1e-15);
    let grad: Vec<f64> = xs.iter().map(|x| softplus_grad(*x)).collect();
    close("grad", &grad, &jax_vec("log1pexp_grad"), 1e-15);
    let naive: Vec<f64> = xs.iter().map(|x| naive_grad(*x)).collect();
    close("naive grad", &naive, &jax_vec("log1pexp_naive_grad"), 1e-15);
    assert!(naive[4].is_nan() && grad[4] == 1.0);
    let hess: Vec<f64> = xs.iter().map(|x| softplus_hessian(*x)).collect();
    close("hessian", &hess, &jax_vec("log1pexp_hessian"), 1e-14);
    // jvp: the rule's tangent, and the value.
    for (k, x) in xs.iter().enumerate() {
        let (v, t) = softplus_jvp(*x, 0.5);
        close("jvp", &[v, t], &[value[k], 0.5 * grad[k]], 1e-15);
    }
    // The rule is the true derivative here: central differences agree.
    for x in [-3.0, 0.0, 2.0] {
        close(
            "fd",
            &[softplus_grad(x)],
            &[central(softplus_custom, x)],
            1e-8,
        );
    }
    // vmap of the gradient (a batched custom call) against the loop.
    let got = softplus_grads(&xs);
    close("vmap(grad)", &got, &grad, 0.0);
}

#[test]
fn log1pexp_in_f32_at_100() {
    assert_eq!(
        softplus32_grad(100.0) as f64,
        jax_scalar("log1pexp_f32_grad_100")
    );
    assert!(naive32_grad(100.0).is_nan());
    assert!(jax_scalar("log1pexp_naive_f32_grad_100").is_nan());
}

// ---- custom_jvp: a rule that is not the derivative ----

/// `sin(x)·y`, with the tangent of `x³·y` in `x`.
#[oxla::func]
#[oxla::custom_jvp(jvp = odd_rule_jvp)]
fn odd_rule(x: f64, y: f64) -> f64 {
    x.sin() * y
}

#[oxla::func]
fn odd_rule_jvp(x: f64, y: f64, tx: f64, ty: f64) -> (f64, f64) {
    (x.sin() * y, 3.0 * x * x * y * tx + x.sin() * ty)
}

#[oxla::transforms(
    grad(odd_grad, wrt = (x, y)),
    jvp(odd_jvp),
    hessian(odd_hessian, wrt = x),
    vmap(odd_batched_grad, in_axes = (0, None), of = grad(wrt = x))
)]
fn odd_loss(x: f64, y: f64) -> f64 {
    odd_rule(x, y) + x * y
}

#[test]
fn a_custom_jvp_rule_is_what_every_transform_uses() {
    let (x, y) = (jax_scalar("odd_x"), jax_scalar("odd_y"));
    close(
        "value",
        &[odd_loss(x, y)],
        &[jax_scalar("odd_value")],
        1e-15,
    );
    let (gx, gy) = odd_grad(x, y);
    close("grad x", &[gx], &[jax_scalar("odd_grad_x")], 1e-15);
    close("grad y", &[gy], &[jax_scalar("odd_grad_y")], 1e-15);
    // Not the true derivative in x: central differences disagree.
    let fd = central(|x| odd_loss(x, y), x);
    assert!((gx - fd).abs() > 0.1, "{gx} vs {fd}");
    let dir = jax_vec("odd_jvp_dir");
    let (_, t) = odd_jvp(x, y, dir[0], dir[1]);
    close("jvp", &[t], &[jax_scalar("odd_jvp")], 1e-15);
    close(
        "hessian",
        &[odd_hessian(x, y)],
        &[jax_scalar("odd_hessian_x")],
        1e-14,
    );
    let got = odd_batched_grad(&jax_vec("odd_batch_x"), y);
    close("vmap(grad)", &got, &jax_vec("odd_vmap_grad_x"), 1e-14);
}

// ---- custom_vjp: gradient clipping ----

/// The identity, whose cotangent is clipped into `[lo, hi]`.
#[oxla::func]
#[oxla::custom_vjp(fwd = clip_gradient_fwd, bwd = clip_gradient_bwd)]
fn clip_gradient(lo: f64, hi: f64, x: ArrayView1<f64>) -> Array1<f64> {
    x.to_owned()
}

#[oxla::func]
fn clip_gradient_fwd(lo: f64, hi: f64, x: ArrayView1<f64>) -> (Array1<f64>, f64, f64) {
    (x.to_owned(), lo, hi)
}

#[oxla::func]
fn clip_gradient_bwd(lo: f64, hi: f64, g: ArrayView1<f64>) -> (f64, f64, Array1<f64>) {
    (0.0, 0.0, clip(g, lo, hi))
}

#[oxla::transforms(grad(clipped_grad), vmap(clipped_batched_grad, of = clipped_grad))]
fn clipped_loss(x: ArrayView1<f64>) -> f64 {
    clip_gradient(-0.5, 0.5, 3.0 * x.sin()).sum()
}

#[test]
fn gradient_clipping_in_the_backward_pass() {
    let x = Array1::from(jax_vec("clip_x"));
    close(
        "value",
        &[clipped_loss(x.view())],
        &[jax_scalar("clip_value")],
        1e-15,
    );
    let g = clipped_grad(x.view());
    close("grad", g.as_slice().unwrap(), &jax_vec("clip_grad"), 1e-15);
    assert_ne!(jax_vec("clip_grad"), jax_vec("clip_true_grad"));
    let b: Array2<f64> = jax("clip_batch").into_dimensionality().unwrap();
    let got = clipped_batched_grad(b.view());
    close(
        "vmap(grad)",
        got.as_slice().unwrap(),
        &jax_vec("clip_vmap_grad"),
        1e-15,
    );
    // JAX refuses forward mode through it, as oxla does at compile time
    // (the lowering tests: `custom_rule_errors`).
    assert_eq!(jax_scalar("clip_jvp_raises"), 1.0);
}

// ---- custom_vjp with a residual: forward over reverse ----

/// softplus, whose backward pass is half the true one (`½·σ(x)·ct`).
#[oxla::func]
#[oxla::custom_vjp(fwd = half_fwd, bwd = half_bwd)]
fn half_grad_softplus(x: ArrayView1<f64>) -> Array1<f64> {
    logaddexp(x, 0.0)
}

#[oxla::func]
fn half_fwd(x: ArrayView1<f64>) -> (Array1<f64>, Array1<f64>) {
    (logaddexp(x, 0.0), sigmoid(x))
}

#[oxla::func]
fn half_bwd(s: ArrayView1<f64>, g: ArrayView1<f64>) -> Array1<f64> {
    0.5 * &s * &g
}

#[oxla::transforms(grad(half_grad), hessian(half_hessian))]
fn half_loss(x: ArrayView1<f64>) -> f64 {
    (half_grad_softplus(x) * x).sum()
}

#[oxla::grad(half_grad_of_grad)]
fn half_grad_sum(x: ArrayView1<f64>) -> f64 {
    half_grad(x).sum()
}

#[test]
fn a_custom_vjp_under_forward_over_reverse_and_reverse_over_reverse() {
    let x = Array1::from(jax_vec("half_x"));
    close(
        "value",
        &[half_loss(x.view())],
        &[jax_scalar("half_value")],
        1e-14,
    );
    let g = half_grad(x.view());
    close("grad", g.as_slice().unwrap(), &jax_vec("half_grad"), 1e-14);
    let h: Array2<f64> = half_hessian(x.view());
    close(
        "hessian",
        h.as_slice().unwrap(),
        &jax_vec("half_hessian"),
        1e-14,
    );
    let gg = half_grad_of_grad(x.view());
    close(
        "grad of grad",
        gg.as_slice().unwrap(),
        &jax_vec("half_grad_of_grad"),
        1e-14,
    );
    // JAX refuses reverse over forward (jacrev of jacfwd), as oxla does.
    assert_eq!(jax_scalar("half_jacrev_of_jacfwd_raises"), 1.0);
}

#[test]
fn helpers_with_rules_stay_callable_from_plain_rust() {
    assert_eq!(log1pexp(0.5f64), (1.0 + 0.5f64.exp()).ln());
    let x = Array1::from(vec![0.25, -1.0]);
    assert_eq!(clip_gradient(-0.5, 0.5, x.view()), x);
}
