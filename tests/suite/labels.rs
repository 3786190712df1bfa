//! Integer parameters: labels as `i32`/`i64` arrays, picked with
//! `take_along_axis`, in a softmax cross-entropy. The value against a loop
//! in f64, the gradient against its closed form (softmax minus one-hot,
//! over n) and central differences; the labels carry no derivative.

use oxla::ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use oxla::{grad, jit, value_and_grad};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[value_and_grad(ce_and_grad)]
fn softmax_ce(logits: ArrayView2<f64>, labels: ArrayView1<i32>) -> f64 {
    -take_along_axis(log_softmax(logits, Axis(1)), &labels, Axis(1)).mean()
}

#[jit]
fn pick(x: ArrayView2<f32>, idx: &[i64]) -> Array1<f32> {
    take_along_axis(x, idx, Axis(1))
}

#[grad(pick_grad, wrt = x)]
fn pick_weighted(x: ArrayView2<f64>, idx: ArrayView1<i64>, w: ArrayView1<f64>) -> f64 {
    (take_along_axis(x, &idx, Axis(0)) * w).sum()
}

fn reference(logits: &Array2<f64>, labels: &[i32]) -> (f64, Array2<f64>) {
    let (n, c) = logits.dim();
    let mut loss = 0.0;
    let mut g = Array2::zeros((n, c));
    for i in 0..n {
        let m = logits.row(i).fold(f64::NEG_INFINITY, |a, b| a.max(*b));
        let z: f64 = logits.row(i).iter().map(|v| (v - m).exp()).sum();
        loss -= logits[[i, labels[i] as usize]] - m - z.ln();
        for j in 0..c {
            let p = (logits[[i, j]] - m).exp() / z;
            g[[i, j]] = (p - (j == labels[i] as usize) as u8 as f64) / n as f64;
        }
    }
    (loss / n as f64, g)
}

#[test]
fn cross_entropy_with_integer_labels() {
    let mut rng = StdRng::seed_from_u64(8);
    for (n, c) in [(1, 1), (5, 3), (64, 10), (3, 17)] {
        let logits = Array2::from_shape_fn((n, c), |_| rng.gen_range(-4.0..4.0));
        let labels: Array1<i32> = (0..n).map(|_| rng.gen_range(0..c as i32)).collect();
        let (l, g) = ce_and_grad(&logits, &labels);
        let (lw, gw) = reference(&logits, labels.as_slice().unwrap());
        assert!(
            (l - lw).abs() <= 1e-14 * (1.0 + lw.abs()),
            "loss {l} vs {lw}"
        );
        for (a, b) in g.iter().zip(&gw) {
            assert!((a - b).abs() <= 1e-15, "gradient {a} vs {b}");
        }
        // Central differences of the loss, a few coordinates.
        for k in 0..(n * c).min(12) {
            let (i, j) = (k / c, k % c);
            let h = 1e-6;
            let (mut p, mut m) = (logits.clone(), logits.clone());
            p[[i, j]] += h;
            m[[i, j]] -= h;
            let fd = (softmax_ce(p.view(), labels.view()) - softmax_ce(m.view(), labels.view()))
                / (2.0 * h);
            assert!(
                (g[[i, j]] - fd).abs() <= 1e-8,
                "d/dlogits[{i},{j}] {} vs {fd}",
                g[[i, j]]
            );
        }
    }
}

#[test]
fn take_along_axis_picks_and_scatters() {
    let x = Array2::from_shape_fn((4, 5), |(i, j)| (10 * i + j) as f32);
    let idx = [4i64, 0, 2, 2];
    let got = pick(x.view(), &idx);
    assert_eq!(got.to_vec(), vec![4.0, 10.0, 22.0, 32.0]);
    // Along axis 0, one index per column; the gradient is the weights
    // scattered into the picked rows, added where an index repeats.
    let x = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f64);
    let idx = Array1::from(vec![2i64, 0, 2, 1]);
    let w = Array1::from(vec![1.5, -2.0, 0.25, 3.0]);
    let g = pick_grad(&x, &idx, &w);
    let mut want = Array2::<f64>::zeros((3, 4));
    for j in 0..4 {
        want[[idx[j] as usize, j]] += w[j];
    }
    assert_eq!(g, want);
    // An index parameter out of range is an error at the call.
    let e = std::panic::catch_unwind(|| pick(Array2::<f32>::ones((1, 3)).view(), &[7]))
        .expect_err("index 7 of 3");
    let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("argument `idx`") && msg.contains("index 7 at position 0"),
        "{msg}"
    );
}

#[jit]
fn predictions(scores: ArrayView2<f32>) -> Array1<i64> {
    argmax(scores, Axis(1))
}

#[jit]
fn flat_argmin(x: ArrayView2<f64>) -> i64 {
    argmin(x)
}

/// jnp.argmax's answer along a row: the first NaN, else the first max.
fn first_argmax(row: &[f32]) -> i64 {
    if let Some(i) = row.iter().position(|v| v.is_nan()) {
        return i as i64;
    }
    let m = row.iter().fold(f32::NEG_INFINITY, |a, b| a.max(*b));
    row.iter().position(|v| *v == m).unwrap() as i64
}

#[test]
fn argmax_and_argmin_as_jax_computes_them() {
    let mut rng = StdRng::seed_from_u64(9);
    for (n, c) in [(1, 1), (7, 3), (40, 10), (3, 300)] {
        // Few distinct values, so ties are common.
        let mut s = Array2::from_shape_fn((n, c), |_| rng.gen_range(0..4) as f32);
        if n > 2 {
            s[[2, c / 2]] = f32::NAN;
        }
        let got = predictions(s.view());
        for i in 0..n {
            assert_eq!(
                got[i],
                first_argmax(s.row(i).to_slice().unwrap()),
                "row {i} of {n}×{c}"
            );
        }
    }
    let x = Array2::from_shape_fn((4, 5), |(i, j)| ((i * 5 + j) as f64 - 7.3).abs());
    assert_eq!(flat_argmin(x.view()), 7);
    // Empty rows have no argmax: an error at the call, as JAX raises.
    let e = std::panic::catch_unwind(|| predictions(Array2::<f32>::zeros((2, 0)).view()))
        .expect_err("argmax of empty rows");
    let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("`predictions`") && msg.contains("no identity"),
        "{msg}"
    );
}

/// Issue 27: comparisons of integer arrays, as JAX's accuracy
/// `mean(argmax(logits, 1) == labels)` needs.
#[oxla::jit]
fn accuracy(logits: ArrayView2<f32>, labels: ArrayView1<i64>) -> f32 {
    let hits = argmax(logits, Axis(1)) == labels;
    hits.mapv(|h| h as i32 as f32).mean()
}

#[oxla::jit]
fn count_class(labels: ArrayView1<i32>) -> f32 {
    (labels == 2).mapv(|h| h as i32 as f32).sum()
}

#[test]
fn integer_arrays_compare_elementwise() {
    let logits =
        oxla::ndarray::Array2::from_shape_fn((6, 4), |(i, j)| ((i * 7 + j * 3) % 5) as f32);
    let labels = oxla::ndarray::Array1::from(vec![1i64, 0, 3, 2, 2, 1]);
    let mut hits = 0;
    for i in 0..6 {
        let row = logits.row(i);
        let best = (0..4).fold(0, |b, j| if row[j] > row[b] { j } else { b });
        hits += (best as i64 == labels[i]) as i32;
    }
    assert_eq!(accuracy(logits.view(), labels.view()), hits as f32 / 6.0);
    let l32 = oxla::ndarray::Array1::from(vec![2i32, 0, 2, 1, 2]);
    assert_eq!(count_class(l32.view()), 3.0);
}
