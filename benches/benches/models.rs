//! The model workloads (see `oxla_benches::models`), oxla beside hand-written
//! Rust on the same data. Run: `cargo bench -p oxla-benches --bench models`.
//! Each result is checked against the baseline before it is timed.

use criterion::{criterion_group, criterion_main, Criterion};
use oxla::ndarray::{Array1, Array2};
use oxla_benches::models::*;
use std::hint::black_box;
use std::time::Duration;

fn max_rel_diff(a: &[f32], b: &[f32]) -> f32 {
    let scale = b.iter().fold(0.0f32, |m, v| m.max(v.abs())).max(1e-30);
    a.iter()
        .zip(b)
        .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

fn logistic(c: &mut Criterion) {
    let (n, d) = (4096, 256);
    let x = uniform((n, d), 1.0, 1);
    let w: Array1<f32> = uniform((1, d), 0.1, 2).into_shape_with_order(d).unwrap();
    let y: Array1<f32> = (0..n)
        .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
        .collect();
    let (xs, ws, ys) = (
        x.as_slice().unwrap(),
        w.as_slice().unwrap(),
        y.as_slice().unwrap(),
    );

    let (l, g) = logistic_loss_and_grad(&w, &x, &y);
    let (lr, gr) = logistic_loss_and_grad_rust(ws, xs, ys);
    assert!((l - lr).abs() <= 1e-5 * lr.abs(), "loss {l} vs {lr}");
    assert!(max_rel_diff(g.as_slice().unwrap(), &gr) <= 1e-4, "gradient");

    let mut group = c.benchmark_group("logistic_4096x256");
    group.measurement_time(Duration::from_secs(4));
    group.bench_function("oxla", |b| {
        b.iter(|| logistic_loss_and_grad(black_box(&w), black_box(&x), black_box(&y)))
    });
    group.bench_function("rust", |b| {
        b.iter(|| logistic_loss_and_grad_rust(black_box(ws), black_box(xs), black_box(ys)))
    });
    group.finish();

    let mut out = vec![0.0f32; n * d];
    let got = per_example_grads(ws, &x, ys);
    per_example_grads_rust(ws, xs, ys, &mut out);
    assert!(
        max_rel_diff(got.as_slice().unwrap(), &out) <= 1e-5,
        "per-example gradients"
    );
    let mut group = c.benchmark_group("per_example_4096x256");
    group.measurement_time(Duration::from_secs(4));
    group.bench_function("oxla", |b| {
        b.iter(|| per_example_grads(black_box(ws), black_box(&x), black_box(ys)))
    });
    // The training-loop form: results into a buffer the caller owns, as the
    // hand-written baseline does (no 4 MB allocation, no page faults).
    let mut into = Array2::<f32>::zeros((n, d));
    per_example_grads_into(ws, &x, ys, &mut into);
    assert!(max_rel_diff(into.as_slice().unwrap(), &out) <= 1e-5);
    group.bench_function("oxla_into", |b| {
        b.iter(|| per_example_grads_into(black_box(ws), black_box(&x), black_box(ys), &mut into))
    });
    group.bench_function("rust", |b| {
        b.iter(|| {
            per_example_grads_rust(
                black_box(ws),
                black_box(xs),
                black_box(ys),
                black_box(&mut out),
            )
        })
    });
    group.finish();
}

fn mlp(c: &mut Criterion) {
    let (batch, d_in, d_hidden, d_out) = (256, 784, 512, 10);
    let x: Array2<f32> = uniform((batch, d_in), 1.0, 3);
    let y = one_hot_targets(batch, d_out);
    let lr = 0.01;
    let mut a = Mlp::new(d_in, d_hidden, d_out);
    let mut b = MlpRust::new(Mlp::new(d_in, d_hidden, d_out), batch);
    // Two steps each from the same start agree.
    for _ in 0..2 {
        let la = a.step_oxla(&x, &y, lr);
        let lb = b.step(x.as_slice().unwrap(), y.as_slice().unwrap(), lr);
        assert!((la - lb).abs() <= 1e-4 * lb.abs(), "loss {la} vs {lb}");
    }
    assert!(
        max_rel_diff(a.w1.as_slice().unwrap(), b.p.w1.as_slice().unwrap()) <= 1e-4,
        "w1 after two steps"
    );

    let mut group = c.benchmark_group("mlp_step_784_512_10_b256");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(6));
    group.bench_function("oxla", |bn| {
        bn.iter(|| a.step_oxla(black_box(&x), black_box(&y), lr))
    });
    let mut g = Mlp::new(d_in, d_hidden, d_out);
    let mut a_into = Mlp::new(d_in, d_hidden, d_out);
    let (l_alloc, l_into) = (
        Mlp::new(d_in, d_hidden, d_out).step_oxla(&x, &y, lr),
        a_into.step_oxla_into(&x, &y, lr, &mut g),
    );
    assert_eq!(l_alloc, l_into, "the _into step computes the same loss");
    group.bench_function("oxla_into", |bn| {
        bn.iter(|| a_into.step_oxla_into(black_box(&x), black_box(&y), lr, &mut g))
    });
    let (xs, ys) = (x.as_slice().unwrap(), y.as_slice().unwrap());
    group.bench_function("rust_gemm_1core", |bn| {
        bn.iter(|| b.step(black_box(xs), black_box(ys), lr))
    });
    group.finish();
}

/// The step data-parallel over 1 and 2 CPU devices (`#[pmap]`, gradients
/// `pmean`'d), beside the plain step (no pmap) of the same run. JAX's
/// figures: `benches/reference/pmap.py`.
fn mlp_pmap(c: &mut Criterion) {
    let (batch, d_in, d_hidden, d_out) = (256, 784, 512, 10);
    let x: Array2<f32> = uniform((batch, d_in), 1.0, 3);
    let y = one_hot_targets(batch, d_out);
    oxla::set_cpu_device_count(2);
    // One step over 1 and 2 devices from the same start gives the plain
    // step's loss and parameters (to rounding: the sums run in another
    // order).
    let mut plain = Mlp::new(d_in, d_hidden, d_out);
    let l_plain = plain.step_oxla(&x, &y, 0.01);
    for n in [1, 2] {
        let mut m = Mlp::new(d_in, d_hidden, d_out);
        let l = m.step_pmap(&shards(&x, n), &shards(&y, n));
        assert!(
            (l - l_plain).abs() <= 1e-5 * l_plain.abs(),
            "{n} devices: loss {l} vs {l_plain}"
        );
        let d = max_rel_diff(m.w1.as_slice().unwrap(), plain.w1.as_slice().unwrap());
        assert!(d <= 1e-4, "{n} devices: w1 after a step differs by {d}");
    }

    let mut group = c.benchmark_group("mlp_pmap_784_512_10_b256");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(6));
    let mut a = Mlp::new(d_in, d_hidden, d_out);
    group.bench_function("no_pmap", |bn| {
        bn.iter(|| a.step_oxla(black_box(&x), black_box(&y), 0.01))
    });
    for n in [1, 2] {
        let (xs, ys) = (shards(&x, n), shards(&y, n));
        let mut m = Mlp::new(d_in, d_hidden, d_out);
        group.bench_function(format!("pmap_{n}_devices"), |bn| {
            bn.iter(|| m.step_pmap(black_box(&xs), black_box(&ys)))
        });
    }
    group.finish();
}

criterion_group!(benches, logistic, mlp, mlp_pmap);
criterion_main!(benches);
