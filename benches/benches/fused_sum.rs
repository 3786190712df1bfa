//! `sum(x * 2 * y + z)` (memory-bound), `sum(tanh(x) * exp(-y*y))`
//! (math-heavy) and the exact GELU's `sum(x·(1 + erf(x/√2))/2)` over f32:
//! oxla (kernels compiled by build.rs; on every core, and on one thread)
//! beside hand-written Rust compiled for this CPU (one thread), the
//! iterator, and std's libm. Run: `cargo bench -p oxla-benches --bench
//! fused_sum`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use oxla_benches::{fused_sum, fused_sum_iter, fused_sum_unrolled, gelu_sum, hand, tanh_exp_sum};
use std::hint::black_box;
use std::time::Duration;

fn inputs(n: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let x = (0..n).map(|i| (i % 7) as f32 * 0.25).collect();
    let y = (0..n).map(|i| (i % 5) as f32 * 0.5).collect();
    let z = (0..n).map(|i| (i % 3) as f32 - 1.0).collect();
    (x, y, z)
}

/// Pseudo-random values in [-3, 3): the math runs on varied arguments.
fn spread(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let h = (i as u32 ^ seed).wrapping_mul(2_654_435_761);
            (h >> 8) as f32 / 16_777_216.0 * 6.0 - 3.0
        })
        .collect()
}

fn timing(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, n: usize) {
    if n > 100_000 {
        group
            .sample_size(20)
            .measurement_time(Duration::from_secs(4));
    } else {
        group
            .sample_size(100)
            .measurement_time(Duration::from_secs(3));
    }
}

/// Relative error of `got` against `want`, scaled by `scale` (the sum of
/// the terms' magnitudes, as a sum that cancels is judged by).
fn check(name: &str, got: f32, want: f64, scale: f64, tol: f64) {
    let err = (got as f64 - want).abs() / scale.max(1.0);
    assert!(
        err <= tol,
        "{name}: {got} vs {want} (error {err:.1e} of the scale)"
    );
}

fn bench_fused_sum(c: &mut Criterion) {
    let mut group = c.benchmark_group("fused_sum");
    let threads = oxla::num_threads();
    for n in [1_000usize, 10_000_000] {
        let (x, y, z) = inputs(n);
        let want: f64 = (0..n)
            .map(|i| x[i] as f64 * 2.0 * y[i] as f64 + z[i] as f64)
            .sum();
        let scale = want.abs();
        check("oxla", fused_sum(&x, &y, &z), want, scale, 1e-5);
        check("hand", hand::fused_sum(&x, &y, &z), want, scale, 1e-4);
        check(
            "unrolled",
            fused_sum_unrolled(&x, &y, &z),
            want,
            scale,
            1e-4,
        );
        // The iterator's single f32 accumulator drifts by ~1% at 10^7.
        check("iter", fused_sum_iter(&x, &y, &z), want, scale, 2e-2);
        group.throughput(Throughput::Bytes((3 * n * 4) as u64));
        timing(&mut group, n);
        let id = |name: &str| BenchmarkId::new(name, n);
        oxla::set_num_threads(threads);
        group.bench_function(id("oxla"), |b| {
            b.iter(|| fused_sum(black_box(&x), black_box(&y), black_box(&z)))
        });
        oxla::set_num_threads(1);
        group.bench_function(id("oxla_1_thread"), |b| {
            b.iter(|| fused_sum(black_box(&x), black_box(&y), black_box(&z)))
        });
        oxla::set_num_threads(threads);
        group.bench_function(id("hand"), |b| {
            b.iter(|| hand::fused_sum(black_box(&x), black_box(&y), black_box(&z)))
        });
        group.bench_function(id("unrolled"), |b| {
            b.iter(|| fused_sum_unrolled(black_box(&x), black_box(&y), black_box(&z)))
        });
        group.bench_function(id("iter"), |b| {
            b.iter(|| fused_sum_iter(black_box(&x), black_box(&y), black_box(&z)))
        });
    }
    group.finish();
}

fn bench_tanh_exp(c: &mut Criterion) {
    let mut group = c.benchmark_group("tanh_exp_sum");
    let threads = oxla::num_threads();
    for n in [1_000usize, 10_000_000] {
        let (x, y) = (spread(n, 1), spread(n, 2));
        let terms: Vec<f64> = (0..n)
            .map(|i| (x[i] as f64).tanh() * (-(y[i] as f64).powi(2)).exp())
            .collect();
        let want: f64 = terms.iter().sum();
        let scale: f64 = terms.iter().map(|t| t.abs()).sum();
        let std_iter = |x: &[f32], y: &[f32]| -> f32 {
            x.iter()
                .zip(y)
                .map(|(a, b)| a.tanh() * (-(b * b)).exp())
                .sum()
        };
        check("oxla", tanh_exp_sum(&x, &y), want, scale, 1e-6);
        check("hand", hand::tanh_exp_sum(&x, &y), want, scale, 1e-5);
        check("std", std_iter(&x, &y), want, scale, 1e-3);
        group.throughput(Throughput::Elements(n as u64));
        timing(&mut group, n);
        let id = |name: &str| BenchmarkId::new(name, n);
        oxla::set_num_threads(threads);
        group.bench_function(id("oxla"), |b| {
            b.iter(|| tanh_exp_sum(black_box(&x), black_box(&y)))
        });
        oxla::set_num_threads(1);
        group.bench_function(id("oxla_1_thread"), |b| {
            b.iter(|| tanh_exp_sum(black_box(&x), black_box(&y)))
        });
        oxla::set_num_threads(threads);
        group.bench_function(id("hand"), |b| {
            b.iter(|| hand::tanh_exp_sum(black_box(&x), black_box(&y)))
        });
        group.bench_function(id("std"), |b| {
            b.iter(|| std_iter(black_box(&x), black_box(&y)))
        });
    }
    group.finish();
}

fn bench_gelu(c: &mut Criterion) {
    let mut group = c.benchmark_group("gelu_sum");
    let threads = oxla::num_threads();
    let n = 1_000_000usize;
    let x = spread(n, 3);
    let terms: Vec<f64> = x
        .iter()
        .map(|&v| {
            let v = v as f64;
            v * (libm::erf(v * std::f64::consts::FRAC_1_SQRT_2) + 1.0) * 0.5
        })
        .collect();
    let want: f64 = terms.iter().sum();
    let scale: f64 = terms.iter().map(|t| t.abs()).sum();
    check("oxla", gelu_sum(&x), want, scale, 1e-6);
    // Eight f32 accumulators of 125000 terms each.
    check("hand", hand::gelu_sum(&x), want, scale, 1e-4);
    group.throughput(Throughput::Elements(n as u64));
    timing(&mut group, n);
    let id = |name: &str| BenchmarkId::new(name, n);
    oxla::set_num_threads(threads);
    group.bench_function(id("oxla"), |b| b.iter(|| gelu_sum(black_box(&x))));
    oxla::set_num_threads(1);
    group.bench_function(id("oxla_1_thread"), |b| b.iter(|| gelu_sum(black_box(&x))));
    oxla::set_num_threads(threads);
    group.bench_function(id("hand"), |b| b.iter(|| hand::gelu_sum(black_box(&x))));
    group.finish();
}

criterion_group!(benches, bench_fused_sum, bench_tanh_exp, bench_gelu);
criterion_main!(benches);
