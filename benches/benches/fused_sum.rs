//! W1: `sum(x * 2 * y + z)` over f32, oxla (compiled by build.rs) against the
//! iterator and a hand-unrolled loop. Run: `cargo bench -p oxla-benches`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use oxla_benches::{fused_sum, fused_sum_iter, fused_sum_unrolled};
use std::hint::black_box;
use std::time::Duration;

fn inputs(n: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let x = (0..n).map(|i| (i % 7) as f32 * 0.25).collect();
    let y = (0..n).map(|i| (i % 5) as f32 * 0.5).collect();
    let z = (0..n).map(|i| (i % 3) as f32 - 1.0).collect();
    (x, y, z)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("fused_sum");
    for n in [1_000usize, 10_000_000] {
        let (x, y, z) = inputs(n);
        // Check all three against the sum in f64 before timing them. The
        // iterator's single f32 accumulator drifts by ~1% at 10^7 elements.
        let want: f64 = (0..n)
            .map(|i| x[i] as f64 * 2.0 * y[i] as f64 + z[i] as f64)
            .sum();
        for (name, got, tol) in [
            ("oxla", fused_sum(&x, &y, &z), 1e-5),
            ("unrolled", fused_sum_unrolled(&x, &y, &z), 1e-4),
            ("iter", fused_sum_iter(&x, &y, &z), 2e-2),
        ] {
            let err = (got as f64 - want).abs() / want.abs().max(1.0);
            assert!(
                err <= tol,
                "{name}: {got} vs {want} (relative error {err:.1e})"
            );
        }
        group.throughput(Throughput::Bytes((3 * n * 4) as u64));
        if n > 100_000 {
            group
                .sample_size(20)
                .measurement_time(Duration::from_secs(4));
        } else {
            group
                .sample_size(100)
                .measurement_time(Duration::from_secs(3));
        }
        group.bench_with_input(BenchmarkId::new("oxla", n), &n, |b, _| {
            b.iter(|| fused_sum(black_box(&x), black_box(&y), black_box(&z)))
        });
        group.bench_with_input(BenchmarkId::new("iter", n), &n, |b, _| {
            b.iter(|| fused_sum_iter(black_box(&x), black_box(&y), black_box(&z)))
        });
        group.bench_with_input(BenchmarkId::new("unrolled", n), &n, |b, _| {
            b.iter(|| fused_sum_unrolled(black_box(&x), black_box(&y), black_box(&z)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
