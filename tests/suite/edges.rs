//! Issue 20, "no silent wrong value": each edge gives JAX's value or a
//! clear error. Expected values are JAX's documented rules, computed here
//! by hand or with plain Rust.
//!
//! - a `take_along_axis` label parameter out of range is an error at the
//!   call (as `take`'s index parameters are);
//! - a computed index out of range is clamped into the axis (JAX's gather
//!   default), and its gradient lands at the clamped position;
//! - max, min, argmax, argmin over an empty axis are errors (JAX raises
//!   "zero-size array to reduction operation max which has no identity");
//!   sum, mean, prod, logsumexp, softmax of empty arrays keep their values;
//! - the gradient of a max whose result is NaN is NaN everywhere; max of
//!   ±0 is +0 and min is -0 in either order; softmax of a row holding +inf
//!   is NaN everywhere.

use crate::panic_message;
use oxla::ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use oxla::{grad, jit};

// ---- 1. label parameters are checked at the call -------------------------------

#[jit]
fn pick_label(x: ArrayView2<f64>, labels: ArrayView1<i64>) -> Array1<f64> {
    take_along_axis(x, &labels, Axis(1))
}

#[grad(ce_grad, wrt = logits)]
fn ce(logits: ArrayView2<f64>, labels: ArrayView1<i64>) -> f64 {
    -take_along_axis(log_softmax(logits, Axis(1)), &labels, Axis(1)).mean()
}

#[test]
fn a_label_parameter_out_of_range_is_an_error_at_the_call() {
    let x = Array2::from_shape_vec((2, 3), vec![0.0, 1.0, 2.0, 10.0, 11.0, 12.0]).unwrap();
    // In range: one element per row.
    let got = pick_label(x.view(), Array1::from(vec![2i64, 0]).view());
    assert_eq!(got.to_vec(), vec![2.0, 10.0]);
    for (labels, pos, v) in [
        ([0i64, 3], 1, 3i64),
        ([-1, 1], 0, -1),
        ([i64::MIN, i64::MAX], 0, i64::MIN),
    ] {
        let xc = x.clone();
        let msg = panic_message(move || {
            pick_label(xc.view(), Array1::from(labels.to_vec()).view());
        });
        assert!(
            msg.contains("argument `labels` of `pick_label`")
                && msg.contains(&format!("index {v} at position {pos}"))
                && msg.contains("axis of size 3"),
            "{labels:?}: {msg}"
        );
    }
    // The gradient with the same labels fails the same way, never all zeros.
    let logits = x.clone();
    let msg = panic_message(move || {
        ce_grad(logits.view(), Array1::from(vec![5i64, -3]).view());
    });
    assert!(
        msg.contains("argument `labels`")
            && msg.contains("index 5 at position 0")
            && msg.contains("axis of size 3"),
        "{msg}"
    );
}

// ---- 2. computed indices are clamped -------------------------------------------

#[oxla::func]
fn next_after(x: &[f64], i: usize) -> f64 {
    x[i + 1]
}

#[jit]
fn read_next(x: &[f64], i: usize) -> f64 {
    next_after(x, i)
}

#[grad(read_next_sq_grad, wrt = x)]
fn read_next_sq(x: &[f64], i: usize) -> f64 {
    let v = x[i + 1];
    v * v
}

#[jit]
fn sum_first(x: &[f64], n: usize) -> f64 {
    let mut s = 0.0;
    for k in 0..n {
        s += x[k];
    }
    s
}

#[jit]
fn take_by_argmax(x: ArrayView2<f64>, scores: ArrayView2<f64>) -> Array2<f64> {
    take(x, &argmax(scores, Axis(1)), Axis(0))
}

#[test]
fn a_computed_index_out_of_range_is_clamped_as_jax_does() {
    let x = [1.5, -2.0, 4.25];
    // In range, then past the end: JAX clamps to the last element.
    assert_eq!(read_next(&x, 0), -2.0);
    assert_eq!(read_next(&x, 1), 4.25);
    assert_eq!(read_next(&x, 2), 4.25);
    assert_eq!(read_next(&x, 1000), 4.25);
    // The gradient scatters to the clamped position: d(x[2]²) = 2·x[2].
    let g = read_next_sq_grad(&x, 2);
    assert_eq!(g, vec![0.0, 0.0, 2.0 * 4.25]);
    // A loop past the end: every k ≥ len reads the last element.
    let xs: Vec<f64> = (0..10).map(|i| i as f64 + 0.5).collect();
    let n = 1_000_000usize;
    let want: f64 = (0..n).map(|k| xs[k.min(9)]).sum();
    let got = sum_first(&xs, n);
    assert!((got - want).abs() <= 1e-9 * want, "{got} vs {want}");
    // An index array computed in the body (argmax): 3 is past x's two rows.
    let x = Array2::from_shape_fn((2, 3), |(i, j)| (1 + 3 * i + j) as f64);
    let scores = Array2::from_shape_vec(
        (2, 4),
        vec![
            0.0, 9.0, 0.0, 0.0, //
            0.0, 0.0, 0.0, 9.0,
        ],
    )
    .unwrap();
    let got = take_by_argmax(x.view(), scores.view());
    assert_eq!(got.row(0).to_vec(), vec![4.0, 5.0, 6.0]);
    assert_eq!(got.row(1).to_vec(), vec![4.0, 5.0, 6.0]);
}

// ---- 3. reductions with no identity over an empty axis -------------------------

#[jit]
fn max_all(x: &[f64]) -> f64 {
    x.max()
}

#[jit]
fn min_all(x: &[f64]) -> f64 {
    x.min()
}

#[jit]
fn argmax_all(x: &[f64]) -> i64 {
    argmax(x)
}

#[jit]
fn argmax_cols(x: ArrayView2<f64>) -> Array1<i64> {
    argmax(x, Axis(0))
}

#[jit]
fn max_cols(x: ArrayView2<f64>) -> Array1<f64> {
    x.max_axis(Axis(0))
}

#[jit]
fn identity_reductions(x: &[f64]) -> (f64, f64, f64, f64) {
    (x.sum(), x.mean(), x.product(), logsumexp(x))
}

#[jit]
fn logsumexp_cols(x: ArrayView2<f64>) -> Array1<f64> {
    logsumexp(x, Axis(0))
}

#[jit]
fn softmax_cols(x: ArrayView2<f64>) -> Array2<f64> {
    softmax(x, Axis(0))
}

#[test]
fn max_min_argmax_over_an_empty_axis_are_errors_at_the_call() {
    let empty: [f64; 0] = [];
    let cases: [(&str, Box<dyn Fn() + std::panic::RefUnwindSafe>); 3] = [
        (
            "max_all",
            Box::new(move || {
                let _ = max_all(&empty);
            }),
        ),
        (
            "min_all",
            Box::new(move || {
                let _ = min_all(&empty);
            }),
        ),
        (
            "argmax_all",
            Box::new(move || {
                let _ = argmax_all(&empty);
            }),
        ),
    ];
    for (name, f) in cases {
        // The closure is unwind safe where the boxed function is not.
        #[allow(clippy::redundant_closure)]
        let msg = panic_message(|| f());
        assert!(
            msg.contains(&format!("`{name}`"))
                && msg.contains("axis 0")
                && msg.contains("argument `x`")
                && msg.contains("no identity"),
            "{name}: {msg}"
        );
    }
    let e = Array2::<f64>::zeros((0, 3));
    for (name, f) in [
        (
            "argmax_cols",
            Box::new(|e: Array2<f64>| drop(argmax_cols(e.view())))
                as Box<dyn Fn(Array2<f64>) + std::panic::RefUnwindSafe>,
        ),
        (
            "max_cols",
            Box::new(|e: Array2<f64>| drop(max_cols(e.view()))),
        ),
    ] {
        let e = e.clone();
        let msg = panic_message(|| f(e));
        assert!(
            msg.contains(&format!("`{name}`"))
                && msg.contains("axis 0")
                && msg.contains("argument `x`")
                && msg.contains("no identity"),
            "{name}: {msg}"
        );
    }
    // Non-empty still works, and a 3×0 array reduced along its full axis
    // 0 gives an empty result.
    assert_eq!(max_all(&[1.0, 3.0, 2.0]), 3.0);
    assert_eq!(argmax_cols(Array2::<f64>::zeros((3, 0)).view()).len(), 0);
    // Reductions with an identity keep JAX's values: sum 0, mean NaN
    // (0/0), prod 1, logsumexp -inf; softmax of nothing is empty.
    let (s, m, p, l) = identity_reductions(&empty);
    assert_eq!(s, 0.0);
    assert!(m.is_nan());
    assert_eq!(p, 1.0);
    assert_eq!(l, f64::NEG_INFINITY);
    assert_eq!(
        logsumexp_cols(e.view()).to_vec(),
        vec![f64::NEG_INFINITY; 3]
    );
    assert_eq!(softmax_cols(e.view()).dim(), (0, 3));
}

// ---- 4. NaN and signed zeros ----------------------------------------------------

#[grad(max_grad)]
fn max_of(x: &[f64]) -> f64 {
    x.max()
}

#[jit]
fn softmax_1d(x: ArrayView1<f64>) -> Array1<f64> {
    softmax(x, Axis(0))
}

#[jit]
fn max_pair(x: ArrayView1<f64>, y: ArrayView1<f64>) -> (Array1<f64>, Array1<f64>) {
    (x.max(y), x.min(y))
}

#[test]
fn nan_in_max_gradients_and_signed_zeros_follow_jax() {
    // JAX's chooser JVP: sum(t·(x == ans)) / sum(x == ans) = 0/0 at a NaN
    // result, and its transpose is NaN in every entry.
    let g = max_grad(&[1.0, f64::NAN, 3.0]);
    assert!(g.iter().all(|v| v.is_nan()), "{g:?}");
    // Without a NaN: the tangent to the max's position.
    assert_eq!(max_grad(&[1.0, 5.0, 3.0]), vec![0.0, 1.0, 0.0]);
    // max of ±0 is +0 and min is -0, in either order (IEEE maximum/minimum).
    for v in [[0.0, -0.0], [-0.0, 0.0]] {
        assert_eq!(max_all(&v).to_bits(), 0.0f64.to_bits(), "max {v:?}");
        assert_eq!(min_all(&v).to_bits(), (-0.0f64).to_bits(), "min {v:?}");
        let (a, b) = (Array1::from(vec![v[0]; 5]), Array1::from(vec![v[1]; 5]));
        let (mx, mn) = max_pair(a.view(), b.view());
        assert!(mx.iter().all(|x| x.to_bits() == 0.0f64.to_bits()), "{mx:?}");
        assert!(
            mn.iter().all(|x| x.to_bits() == (-0.0f64).to_bits()),
            "{mn:?}"
        );
    }
    // Equal non-zero operands and NaN are unchanged.
    assert_eq!(max_all(&[-2.5, -2.5]), -2.5);
    assert!(max_all(&[0.0, f64::NAN, -0.0]).is_nan());
    // softmax shifts by the max as it is: x - inf is NaN at the infinities
    // and -inf elsewhere; the sum is NaN, so every entry is NaN.
    let s = softmax_1d(Array1::from(vec![3.0, f64::INFINITY, f64::INFINITY]).view());
    assert!(s.iter().all(|v| v.is_nan()), "{s:?}");
    let s = softmax_1d(Array1::from(vec![0.0, 2f64.ln()]).view());
    assert!((s[0] - 1.0 / 3.0).abs() < 1e-15 && (s[1] - 2.0 / 3.0).abs() < 1e-15);
}
