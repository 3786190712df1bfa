//! Kernels split across threads: results do not depend on the number of
//! threads (bit for bit), and agree with an f64 reference.

use ndarray::{Array1, Array2, ArrayView2, Axis};
use oxla::grad;
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

// ---- Order-sensitive work on data that rounds ---------------------------
//
// The functions above sum hash-derived floats, but `row_sums` adds small
// integers, exact in any order, and none of them multiplies matrices, takes
// a gradient, a softmax, a cumulative sum or a loop. Below, every input is
// random f32 or f64 values with full mantissas, so that a different order
// of additions would change the last bits (checked: `order_matters`).

#[jit]
fn product32(a: ArrayView2<f32>, b: ArrayView2<f32>) -> Array2<f32> {
    a.dot(&b)
}

#[jit]
fn product64(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Array2<f64> {
    matmul(a, b)
}

/// A one-layer model's loss; its gradient holds two products (one
/// transposed), a reduction over every axis and elementwise math.
#[grad(layer_grad, wrt = w)]
fn layer_loss(w: ArrayView2<f32>, x: ArrayView2<f32>) -> f32 {
    x.dot(&w).tanh().square().mean()
}

#[jit]
fn softmaxes(x: ArrayView2<f32>) -> (Array2<f32>, Array2<f32>, Array2<f32>) {
    (
        softmax(x, Axis(1)),
        softmax(x, Axis(0)),
        log_softmax(x, Axis(1)),
    )
}

#[jit]
fn cumulative(x: ArrayView2<f32>) -> (Array2<f32>, Array2<f32>, Array2<f32>) {
    (x.cumsum(Axis(0)), cumsum(x, Axis(1)), cumprod(x, Axis(1)))
}

/// A loop carrying an array and a sum (`lax.scan`'s shape), and its
/// gradient by the reverse sweep.
#[grad(looped_grad, wrt = x)]
fn looped(x: &[f64], n: usize) -> f64 {
    let mut y = x * 0.0;
    let mut s = 0.0;
    for i in 0..n {
        y = y * 0.5 + (x * (i as f64 + 1.0)).sin();
        s += sum(&y * &y);
    }
    s
}

/// Uniform in [lo, hi), full 24-bit mantissas.
fn matrix32(rows: usize, cols: usize, seed: u32, lo: f32, hi: f32) -> Array2<f32> {
    let v = data(rows * cols, seed);
    Array2::from_shape_vec((rows, cols), v)
        .expect("shape")
        .mapv(|t| lo + (t + 3.0) / 6.0 * (hi - lo))
}

/// Bits of every element, for bitwise comparison (NaN-safe).
fn bits32(a: &Array2<f32>) -> Vec<u32> {
    a.iter().map(|v| v.to_bits()).collect()
}

fn bits64<'a>(a: impl IntoIterator<Item = &'a f64>) -> Vec<u64> {
    a.into_iter().map(|v| v.to_bits()).collect()
}

/// The data rounds: summing a row forwards and backwards in f32 gives
/// different results for some row, so a result that did not depend on
/// the order would be a property of the code, not of the data.
fn order_matters(x: &Array2<f32>) -> bool {
    x.rows().into_iter().any(|r| {
        let fwd = r.iter().fold(0f32, |s, v| s + v);
        let bwd = r.iter().rev().fold(0f32, |s, v| s + v);
        fwd != bwd
    })
}

/// Matrix products, a gradient, softmax, cumsum/cumprod and a loop with its
/// gradient, on random floats: bit for bit the same at 1, 2, 3 and 5
/// threads, as ARCHITECTURE "Threads" says, and each close to an f64
/// reference (so the equal results are right ones).
#[test]
fn products_gradients_softmax_and_scans_do_not_depend_on_the_thread_count() {
    // Kernels of at least 2^17 elements are split; odd extents make uneven parts.
    let a = matrix32(523, 301, 11, -1.0, 1.0);
    let b = matrix32(301, 419, 12, -1.0, 1.0);
    let a64 = a.mapv(|v| v as f64 + 1e-9 * v as f64);
    let b64 = b.mapv(|v| v as f64 - 1e-9 * v as f64);
    let w = matrix32(301, 257, 13, -0.1, 0.1);
    let logits = matrix32(1001, 263, 14, -8.0, 8.0);
    let near_one = matrix32(1001, 263, 15, 0.9, 1.1);
    let xs: Vec<f64> = data(200_003, 16).iter().map(|v| *v as f64 * 0.37).collect();
    assert!(order_matters(&a) && order_matters(&logits) && order_matters(&near_one));

    let run = || {
        let (s1, s0, ls) = softmaxes(logits.view());
        let (c0, c1, cp) = cumulative(near_one.view());
        let g = layer_grad(&w, &a);
        (
            bits32(&product32(a.view(), b.view())),
            bits64(&product64(a64.view(), b64.view())),
            (bits32(&g), layer_loss(w.view(), a.view()).to_bits()),
            (bits32(&s1), bits32(&s0), bits32(&ls)),
            (bits32(&c0), bits32(&c1), bits32(&cp)),
            (looped(&xs, 7).to_bits(), bits64(&looped_grad(&xs, 7))),
        )
    };
    set_num_threads(1);
    let one = run();
    for threads in [2, 3, 5] {
        set_num_threads(threads);
        let got = run();
        let parts = [
            got.0 == one.0,
            got.1 == one.1,
            got.2 == one.2,
            got.3 == one.3,
            got.4 == one.4,
            got.5 == one.5,
        ];
        let names = [
            "f32 product",
            "f64 product",
            "gradient",
            "softmax",
            "cumsum/cumprod",
            "loop",
        ];
        for (ok, name) in parts.iter().zip(names) {
            assert!(ok, "{name}: {threads} threads differ from 1");
        }
    }

    // The results are the right ones, against f64 loops (loose: this test
    // is about equality across thread counts; accuracy is tested elsewhere).
    let p = Array2::from_shape_vec(
        (523, 419),
        one.0.iter().map(|b| f32::from_bits(*b)).collect(),
    )
    .expect("shape");
    for (i, j) in [(0, 0), (522, 418), (261, 200), (100, 7)] {
        let want: f64 = (0..301).map(|k| a[[i, k]] as f64 * b[[k, j]] as f64).sum();
        assert!(
            (p[[i, j]] as f64 - want).abs() <= 1e-5 * 301.0,
            "product [{i}, {j}]"
        );
    }
    let s1 = Array2::from_shape_vec(
        (1001, 263),
        one.3 .0.iter().map(|b| f32::from_bits(*b)).collect(),
    )
    .expect("shape");
    for i in [0, 500, 1000] {
        let row = logits.row(i).mapv(|v| v as f64);
        let m = row.fold(f64::NEG_INFINITY, |m, v| m.max(*v));
        let z: f64 = row.iter().map(|v| (v - m).exp()).sum();
        for j in [0, 131, 262] {
            let want = (row[j] - m).exp() / z;
            assert!(
                (s1[[i, j]] as f64 - want).abs() <= 1e-6 * want.max(1e-3),
                "softmax [{i}, {j}]"
            );
        }
    }
    let c1 = Array2::from_shape_vec(
        (1001, 263),
        one.4 .1.iter().map(|b| f32::from_bits(*b)).collect(),
    )
    .expect("shape");
    for i in [0, 777] {
        let want: f64 = near_one.row(i).iter().map(|v| *v as f64).sum();
        assert!((c1[[i, 262]] as f64 - want).abs() <= 1e-4, "cumsum row {i}");
    }
    let mut y = vec![0.0; xs.len()];
    let mut s = 0.0;
    for i in 0..7 {
        for (yk, xk) in y.iter_mut().zip(&xs) {
            *yk = *yk * 0.5 + (xk * (i as f64 + 1.0)).sin();
        }
        s += y.iter().map(|v| v * v).sum::<f64>();
    }
    let got = f64::from_bits(one.5 .0);
    assert!((got - s).abs() <= 1e-9 * s, "loop {got} vs {s}");
}
