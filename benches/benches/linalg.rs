//! `cholesky` and `solve` of a 1000×1000 f64 matrix: oxla (the linear
//! algebra host step, `oxla_core::ops::linalg::dense`) beside a
//! hand-written textbook Cholesky and Gaussian elimination with partial
//! pivoting (one thread, as oxla's are). Run: `cargo bench -p
//! oxla-benches --bench linalg`.

use criterion::{criterion_group, criterion_main, Criterion};
use oxla::ndarray::{Array1, Array2};
use oxla_benches::linalg::{factor, solve_vector};
use std::hint::black_box;
use std::time::Duration;

/// A symmetric, diagonally dominant (so positive definite) matrix.
fn spd(n: usize) -> Array2<f64> {
    Array2::from_shape_fn((n, n), |(i, j)| {
        let off = (((i * 31 + j * 17) % 13) as f64 - 6.0) / 600.0;
        let sym = (((j * 31 + i * 17) % 13) as f64 - 6.0) / 600.0;
        if i == j {
            n as f64 / 50.0 + 1.0
        } else {
            off + sym
        }
    })
}

/// The textbook Cholesky–Banachiewicz loop, row-major, lower.
fn hand_cholesky(a: &[f64], n: usize) -> Vec<f64> {
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = if i == j { s.sqrt() } else { s / l[j * n + j] };
        }
    }
    l
}

/// Gaussian elimination with partial pivoting on a copy, then back
/// substitution.
fn hand_solve(a: &[f64], b: &[f64], n: usize) -> Vec<f64> {
    let (mut m, mut x) = (a.to_vec(), b.to_vec());
    for j in 0..n {
        let p = (j..n)
            .max_by(|&r, &s| m[r * n + j].abs().total_cmp(&m[s * n + j].abs()))
            .unwrap();
        if p != j {
            for k in 0..n {
                m.swap(j * n + k, p * n + k);
            }
            x.swap(j, p);
        }
        for i in j + 1..n {
            let f = m[i * n + j] / m[j * n + j];
            for k in j..n {
                m[i * n + k] -= f * m[j * n + k];
            }
            x[i] -= f * x[j];
        }
    }
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|k| m[i * n + k] * x[k]).sum();
        x[i] = (x[i] - s) / m[i * n + i];
    }
    x
}

fn bench_linalg(c: &mut Criterion) {
    let n = 1000;
    let a = spd(n);
    let b = Array1::from_shape_fn(n, |i| (i as f64 * 0.37).sin());
    let flat = a.as_slice().unwrap();
    // The two agree before either is timed.
    let l = factor(a.view());
    let hand_l = hand_cholesky(flat, n);
    let err = l
        .iter()
        .zip(&hand_l)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(err < 1e-10, "cholesky differs by {err}");
    let x = solve_vector(a.view(), b.view());
    let hand_x = hand_solve(flat, b.as_slice().unwrap(), n);
    let err = x
        .iter()
        .zip(&hand_x)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(err < 1e-10, "solve differs by {err}");

    let mut group = c.benchmark_group("linalg_1000");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    group.bench_function("cholesky/oxla", |bch| {
        bch.iter(|| factor(black_box(a.view())))
    });
    group.bench_function("cholesky/hand", |bch| {
        bch.iter(|| hand_cholesky(black_box(flat), n))
    });
    group.bench_function("solve/oxla", |bch| {
        bch.iter(|| solve_vector(black_box(a.view()), black_box(b.view())))
    });
    group.bench_function("solve/hand", |bch| {
        bch.iter(|| hand_solve(black_box(flat), black_box(b.as_slice().unwrap()), n))
    });
    group.finish();
}

criterion_group!(benches, bench_linalg);
criterion_main!(benches);
