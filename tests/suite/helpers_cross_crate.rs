//! Helpers (`#[oxla::func]`) defined in another crate (`oxla-layers-test`),
//! named by a `use` and by a full path, differentiated and batched through.

use oxla::ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use oxla::{grad, jit, vmap};
use oxla_layers_test::act::smooth_relu;
use oxla_layers_test::nn::layer;

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

#[grad(d_mixed)]
fn mixed(x: f32, y: f32) -> f32 {
    smooth_relu(x * y) + oxla_layers_test::act::soft_tanh(x) * y
}

/// The derivatives of `mixed`, by hand, in f64.
fn d_mixed_by_hand(x: f64, y: f64) -> (f64, f64) {
    let s = sigmoid(x * y);
    let dt = 1.0 - x.tanh().powi(2);
    (s * y + dt * y, s * x + x.tanh())
}

#[test]
fn grad_through_helpers_of_another_crate() {
    for &(x, y) in &[(0.3f32, -1.2f32), (-2.0, 0.7), (1.5, 2.5)] {
        let (dx, dy) = d_mixed(x, y);
        let (wx, wy) = d_mixed_by_hand(x as f64, y as f64);
        assert!(
            (dx as f64 - wx).abs() < 1e-5 * (1.0 + wx.abs()),
            "{dx} vs {wx}"
        );
        assert!(
            (dy as f64 - wy).abs() < 1e-5 * (1.0 + wy.abs()),
            "{dy} vs {wy}"
        );
        // Central differences of the function oxla emitted, in f64.
        let h = 1e-3f32;
        let fx = (mixed(x + h, y) as f64 - mixed(x - h, y) as f64) / (2.0 * h as f64);
        assert!(
            (dx as f64 - fx).abs() < 2e-3 * (1.0 + fx.abs()),
            "{dx} vs {fx}"
        );
        // The helper is an ordinary function too.
        let direct = (smooth_relu(x * y) as f64 - ((x * y) as f64).exp().ln_1p()).abs();
        assert!(direct < 1e-6, "{direct}");
    }
}

#[vmap(activate_all)]
fn activate(x: f32) -> f32 {
    smooth_relu(x) - 0.5 * oxla_layers_test::act::soft_tanh(x)
}

#[test]
fn vmap_of_a_function_calling_helpers_matches_a_loop() {
    let xs: Vec<f32> = (0..37).map(|i| i as f32 * 0.25 - 4.0).collect();
    let batched = activate_all(&xs);
    assert_eq!(batched.len(), xs.len());
    for (b, &x) in batched.iter().zip(&xs) {
        let one = activate(x);
        assert!(
            (b - one).abs() <= 1e-6 * (1.0 + one.abs()),
            "{b} vs {one} at {x}"
        );
    }
}

#[grad(dense_loss_grad, wrt = (w, b))]
fn dense_loss(w: ArrayView2<f32>, b: ArrayView1<f32>, x: ArrayView1<f32>) -> f32 {
    layer(w, b, x).sum()
}

#[jit]
fn two_layers(
    w1: ArrayView2<f32>,
    b1: ArrayView1<f32>,
    w2: ArrayView2<f32>,
    b2: ArrayView1<f32>,
    x: ArrayView1<f32>,
) -> Array1<f32> {
    layer(w2, b2, layer(w1, b1, x))
}

fn inputs(m: usize, n: usize, seed: u32) -> (Array2<f32>, Array1<f32>, Array1<f32>) {
    let v = |i: usize| {
        (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) % 1000) as f32 / 500.0) - 1.0
    };
    (
        Array2::from_shape_fn((m, n), |(i, j)| v(i * n + j)),
        Array1::from_shape_fn(m, |i| v(1000 + i)),
        Array1::from_shape_fn(n, |j| v(2000 + j)),
    )
}

#[test]
fn an_array_helper_is_differentiated_through() {
    let (w, b, x) = inputs(3, 5, 7);
    let (gw, gb) = dense_loss_grad(&w, &b, &x);
    // By hand, in f64: d/dz smooth_relu(z) = sigmoid(z), z = w x + b.
    for i in 0..3 {
        let z: f64 = (0..5).map(|j| w[[i, j]] as f64 * x[j] as f64).sum::<f64>() + b[i] as f64;
        let s = sigmoid(z);
        assert!((gb[i] as f64 - s).abs() < 1e-5, "db[{i}]: {} vs {s}", gb[i]);
        for j in 0..5 {
            let want = s * x[j] as f64;
            assert!(
                (gw[[i, j]] as f64 - want).abs() < 1e-5,
                "dw[{i},{j}]: {} vs {want}",
                gw[[i, j]]
            );
        }
    }
    // Central differences of the compiled loss in one entry.
    let h = 1e-2f32;
    let mut wp = w.clone();
    wp[[1, 2]] += h;
    let mut wm = w.clone();
    wm[[1, 2]] -= h;
    let fd = (dense_loss(wp.view(), b.view(), x.view()) as f64
        - dense_loss(wm.view(), b.view(), x.view()) as f64)
        / (2.0 * h as f64);
    assert!(
        (gw[[1, 2]] as f64 - fd).abs() < 2e-3,
        "{} vs {fd}",
        gw[[1, 2]]
    );
}

#[test]
fn a_helper_calls_compose_and_match_the_helper_called_directly() {
    let (w1, b1, x) = inputs(4, 3, 1);
    let (w2, b2, _) = inputs(2, 4, 2);
    let got = two_layers(w1.view(), b1.view(), w2.view(), b2.view(), x.view());
    let hidden = layer(w1.view(), b1.view(), x.view());
    let want = layer(w2.view(), b2.view(), hidden.view());
    assert_eq!(got.len(), 2);
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-6 * (1.0 + w.abs()), "{g} vs {w}");
    }
}

// A generic helper of another crate, called at f32 and at f64.
#[oxla::grad(generic_caller_grad)]
fn generic_caller<T: oxla::Float>(x: T) -> T {
    oxla_layers_test::generic::log_cosh(x * 2.0)
}

#[oxla::grad(f64_caller_grad)]
fn f64_caller(x: f64) -> f64 {
    oxla_layers_test::generic::log_cosh(x)
}

#[test]
fn a_generic_helper_of_another_crate_takes_each_callers_type() {
    for x in [0.5f64, -1.25, 2.0] {
        let want = (2.0 * x).cosh().ln();
        assert!((generic_caller(x) - want).abs() < 1e-12);
        assert!((generic_caller(x as f32) as f64 - want).abs() < 1e-5);
        let d = 2.0 * (2.0 * x).tanh();
        assert!((generic_caller_grad(x) - d).abs() < 1e-12);
        assert!((generic_caller_grad(x as f32) as f64 - d).abs() < 1e-5);
        assert!((f64_caller_grad(x) - x.tanh()).abs() < 1e-14);
        // The helper itself, called from Rust at both types.
        let lc = x.cosh().ln();
        assert!((oxla_layers_test::generic::log_cosh(x as f32) as f64 - lc).abs() < 1e-5);
        assert!((oxla_layers_test::generic::log_cosh(x) - lc).abs() < 1e-14);
    }
}
