//! Kernels split across threads: results do not depend on the number of
//! threads (bit for bit), and agree with an f64 reference.

use ndarray::{Array1, Array2, ArrayView2, Axis};
use oxla::{jit, set_num_threads};

#[jit]
fn tanh_exp_sum(x: &[f32], y: &[f32]) -> f32 {
    sum(x.tanh() * (-(y * y)).exp())
}

#[jit]
fn fused_sum64(x: &[f64], y: &[f64], z: &[f64]) -> f64 {
    sum(x * 2.0 * y + z)
}

#[jit]
fn largest(x: &[f32]) -> f32 {
    x.max()
}

#[jit]
fn softplus_map(x: &[f32]) -> Vec<f32> {
    (x.exp() + 1.0).ln()
}

#[jit]
fn row_sums(x: ArrayView2<f64>) -> Array1<f64> {
    x.sum_axis(Axis(1))
}

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let h = (i as u32 ^ seed).wrapping_mul(2_654_435_761);
            (h >> 8) as f32 / 16_777_216.0 * 6.0 - 3.0
        })
        .collect()
}

/// Every result at 1, 2, 3 and 5 threads, bit for bit.
#[test]
fn results_do_not_depend_on_the_thread_count() {
    // Odd sizes well above the threshold, so blocks and parts are uneven.
    let n = 1_000_003;
    let (x, y) = (data(n, 1), data(n, 2));
    let x64: Vec<f64> = x.iter().map(|v| *v as f64).collect();
    let y64: Vec<f64> = y.iter().map(|v| *v as f64).collect();
    let z64: Vec<f64> = data(n, 3).iter().map(|v| *v as f64).collect();
    let m = Array2::from_shape_fn((1001, 997), |(i, j)| ((i * 7 + j * 3) % 11) as f64 - 5.0);
    let run = || {
        (
            tanh_exp_sum(&x, &y).to_bits(),
            fused_sum64(&x64, &y64, &z64).to_bits(),
            largest(&x).to_bits(),
            softplus_map(&x)
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            row_sums(m.view()).to_vec(),
        )
    };
    set_num_threads(1);
    let one = run();
    for threads in [2, 3, 5] {
        set_num_threads(threads);
        assert!(run() == one, "{threads} threads differ from 1");
    }
    // And each agrees with an f64 reference, within f32 rounding of the
    // terms (the sum cancels: the scale is the sum of magnitudes).
    let terms: Vec<f64> = x64
        .iter()
        .zip(&y64)
        .map(|(a, b)| a.tanh() * (-(b * b)).exp())
        .collect();
    let (want, scale) = (
        terms.iter().sum::<f64>(),
        terms.iter().map(|t| t.abs()).sum::<f64>(),
    );
    let got = f32::from_bits(one.0) as f64;
    assert!((got - want).abs() <= 1e-6 * scale, "{got} vs {want}");
    let want: f64 = (0..n).map(|i| x64[i] * 2.0 * y64[i] + z64[i]).sum();
    let got = f64::from_bits(one.1);
    assert!(
        (got - want).abs() <= 1e-12 * want.abs().max(1.0),
        "{got} vs {want}"
    );
    let want = x.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    assert_eq!(f32::from_bits(one.2), want);
    for (i, b) in one.3.iter().enumerate().step_by(997) {
        let want = (x64[i].exp() + 1.0).ln();
        let got = f32::from_bits(*b) as f64;
        assert!(
            (got - want).abs() <= 4e-7 * want.abs().max(1.0),
            "{i}: {got} vs {want}"
        );
    }
    for (i, got) in one.4.iter().enumerate() {
        assert_eq!(*got, m.row(i).sum(), "row {i}");
    }
}
