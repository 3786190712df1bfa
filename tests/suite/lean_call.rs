//! The lean call (`call_flat`): functions whose parameters are all scalars,
//! slices and one-dimensional fixed arrays run through a plan checked by
//! table lookups. These tests pin what it
//! must keep from the general call: the same bits, the length checks and
//! their messages, every size (empty, partial vector groups, split across
//! threads), fixed lengths, `usize` arguments and several results.

use oxla::jit;
use oxla::ndarray::{Array1, ArrayView1};

/// The lean call's form: slices and a scalar.
#[jit]
fn weighted(x: &[f32], y: &[f32], z: &[f32], a: f32) -> f32 {
    sum(x * a * y + z)
}

/// The same function through views: the general call's form, same kernel.
#[jit]
fn weighted_views(x: ArrayView1<f32>, y: ArrayView1<f32>, z: ArrayView1<f32>, a: f32) -> f32 {
    (&x * a * &y + &z).sum()
}

/// An array result, allocated under the bound length.
#[jit]
fn axpy(x: &[f32], y: &[f32], a: f32) -> Vec<f32> {
    x * a + y
}

/// The same through views.
#[jit]
fn axpy_views(x: ArrayView1<f32>, y: ArrayView1<f32>, a: f32) -> Array1<f32> {
    &x * a + &y
}

/// Two scalar results, an `f64` scalar in the middle of the arguments.
#[jit]
fn moments(x: &[f64], shift: f64, w: &[f64]) -> (f64, f64) {
    let d = x - shift;
    (sum(d * w), sum(d * d * w))
}

/// A fixed length (a constant in the plan) beside a vector of any length.
#[jit]
fn fixed_and_free(c: &[f64; 4], x: &[f64]) -> f64 {
    sum(c) * sum(x)
}

/// A `usize` argument, passed as an `i64` scalar.
#[jit]
fn mean_of(x: &[f64], n: usize) -> f64 {
    sum(x) / (n as f64)
}

fn data(n: usize, seed: f32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as f32 * 0.618 + seed) % 1.0) * 2.0 - 1.0)
        .collect()
}

#[test]
fn the_lean_call_gives_the_general_calls_bits() {
    // Around the native kernels' vector groups (16 and 64 lanes at
    // AVX-512), their blocks (4096) and the size at which a kernel is split
    // across threads (2^17).
    for n in [
        0, 1, 3, 15, 16, 17, 31, 63, 64, 65, 79, 1000, 1023, 4095, 4097, 131_075,
    ] {
        let (x, y, z) = (data(n, 0.1), data(n, 0.4), data(n, 0.7));
        let lean = weighted(&x, &y, &z, 0.5);
        let general = weighted_views(
            ArrayView1::from(&x[..]),
            ArrayView1::from(&y[..]),
            ArrayView1::from(&z[..]),
            0.5,
        );
        assert_eq!(lean.to_bits(), general.to_bits(), "n = {n}");
        let want: f64 = (0..n)
            .map(|i| x[i] as f64 * 0.5 * y[i] as f64 + z[i] as f64)
            .sum();
        // Each term is below 2 in magnitude: the error bound of a pairwise
        // f32 sum with 64 values per lane, relative to the terms' sum.
        let tol = 2.0 * (64.0 + (n.max(1) as f64).log2()) * f32::EPSILON as f64 * n as f64;
        assert!(
            (lean as f64 - want).abs() <= tol.max(1e-6),
            "n = {n}: {lean} vs {want}"
        );
    }
}

#[test]
fn array_results_are_the_general_calls() {
    // The last size is split across threads.
    for n in [0, 1, 17, 1000, 131_075] {
        let (x, y) = (data(n, 0.2), data(n, 0.9));
        let lean = axpy(&x, &y, -1.5);
        let general = axpy_views(ArrayView1::from(&x[..]), ArrayView1::from(&y[..]), -1.5);
        assert_eq!(lean, general.to_vec(), "n = {n}");
    }
}

#[test]
#[should_panic(expected = "argument `y`")]
fn an_array_results_mismatch_names_the_argument() {
    axpy(&[1.0, 2.0], &[1.0, 2.0, 3.0], 1.0);
}

#[test]
fn several_scalar_results_and_a_scalar_between_slices() {
    let x: Vec<f64> = (0..37).map(|i| i as f64 * 0.25).collect();
    let w: Vec<f64> = (0..37).map(|i| 1.0 / (1.0 + i as f64)).collect();
    let (m1, m2) = moments(&x, 2.0, &w);
    let (mut w1, mut w2) = (0.0, 0.0);
    for i in 0..37 {
        let d = x[i] - 2.0;
        w1 += d * w[i];
        w2 += d * d * w[i];
    }
    assert!((m1 - w1).abs() <= 1e-12 * w1.abs().max(1.0), "{m1} vs {w1}");
    assert!((m2 - w2).abs() <= 1e-12 * w2.abs().max(1.0), "{m2} vs {w2}");
}

#[test]
fn fixed_lengths_and_usize_arguments() {
    let x = [1.0, 2.0, 3.5];
    assert_eq!(fixed_and_free(&[1.0, 2.0, 3.0, 4.0], &x), 10.0 * 6.5);
    assert_eq!(fixed_and_free(&[1.0; 4], &[]), 0.0);
    assert_eq!(mean_of(&x, 2), 3.25);
}

#[test]
#[should_panic(expected = "argument `z`")]
fn a_mismatch_in_the_third_slice_names_it() {
    weighted(&[1.0, 2.0], &[1.0, 2.0], &[1.0, 2.0, 3.0], 1.0);
}

#[test]
#[should_panic(expected = "argument `y`")]
fn a_mismatch_in_the_second_slice_names_it() {
    // (Length 1 would broadcast, as numpy does: see `size_one`.)
    weighted(&[1.0, 2.0], &[1.0, 2.0, 3.0], &[1.0, 2.0], 1.0);
}

#[test]
#[should_panic(expected = "argument `w`")]
fn a_mismatch_after_a_scalar_names_the_slice() {
    moments(&[1.0, 2.0], 0.0, &[1.0, 2.0, 3.0]);
}
