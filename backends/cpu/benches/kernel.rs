//! The JIT'd fused kernel `sum(x * 2 * y + z)` over f32 against a hand-written
//! Rust loop (8 accumulators), and the JIT compile time of that kernel.
//! Run: `cargo bench -p oxla-cpu --bench kernel`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use oxla_core::kernel::fusion::fuse;
use oxla_core::{DType, Dim, Function, Kernel, KernelFn, Shape, Type};
use oxla_cpu::JitModule;
use std::hint::black_box;
use std::time::Duration;

/// The one kernel of `fuse(sum(x * 2 * y + z))`, x, y, z: `f32[n]`.
fn fused_sum_kernel() -> Kernel {
    let mut f = Function::new("fused_sum");
    let ty = Type::new(DType::F32, Shape::vector(Dim::sym("n")));
    let x = f.add_param("x", ty.clone());
    let y = f.add_param("y", ty.clone());
    let z = f.add_param("z", ty.clone());
    let two = f.full(2.0, DType::F32, &ty.shape);
    let x2 = f.mul(x, two);
    let x2y = f.mul(x2, y);
    let s = f.add(x2y, z);
    let total = f.reduce_sum(s, vec![0]);
    f.outs.push(total);
    let program = fuse(&f).expect("fuse");
    assert_eq!(program.kernels.len(), 1, "one fused kernel");
    program.kernels[0].clone()
}

fn inputs(n: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let x = (0..n).map(|i| (i % 7) as f32 * 0.25).collect();
    let y = (0..n).map(|i| (i % 5) as f32 * 0.5).collect();
    let z = (0..n).map(|i| (i % 3) as f32 - 1.0).collect();
    (x, y, z)
}

/// A raw call of the compiled kernel (the slices have equal length `n`).
fn call(f: KernelFn, x: &[f32], y: &[f32], z: &[f32]) -> f32 {
    let mut out = 0.0f32;
    let args = [
        x.as_ptr() as *mut u8,
        y.as_ptr() as *mut u8,
        z.as_ptr() as *mut u8,
        &mut out as *mut f32 as *mut u8,
    ];
    let sizes = [x.len() as i64];
    // SAFETY: `f` is the fused-sum kernel (3 f32 inputs of `n` elements, one
    // f32 output, one size `n`); every buffer holds what it reads or writes
    // and the output aliases no input.
    unsafe { f(args.as_ptr(), sizes.as_ptr()) };
    out
}

/// Hand-written baseline: 8 accumulators over `chunks_exact(8)`.
fn baseline(x: &[f32], y: &[f32], z: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (xc, yc, zc) = (x.chunks_exact(8), y.chunks_exact(8), z.chunks_exact(8));
    let (xr, yr, zr) = (xc.remainder(), yc.remainder(), zc.remainder());
    for ((a, b), c) in xc.zip(yc).zip(zc) {
        for l in 0..8 {
            acc[l] += a[l] * 2.0 * b[l] + c[l];
        }
    }
    let mut total: f32 = acc.iter().sum();
    for ((a, b), c) in xr.iter().zip(yr).zip(zr) {
        total += a * 2.0 * b + c;
    }
    total
}

fn bench(c: &mut Criterion) {
    let kernel = fused_sum_kernel();
    let module = JitModule::compile(std::slice::from_ref(&kernel)).expect("compile");
    let f = module.function(0);

    let mut group = c.benchmark_group("fused_sum");
    for n in [1usize, 1_000, 10_000_000] {
        let (x, y, z) = inputs(n);
        let want: f64 = (0..n)
            .map(|i| x[i] as f64 * 2.0 * y[i] as f64 + z[i] as f64)
            .sum();
        for got in [call(f, &x, &y, &z), baseline(&x, &y, &z)] {
            assert!(
                (got as f64 - want).abs() <= 1e-4 * want.abs().max(1.0),
                "{got} vs {want}"
            );
        }
        group.throughput(Throughput::Bytes((3 * n * 4) as u64));
        if n > 100_000 {
            group
                .sample_size(10)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(3));
        } else {
            group
                .sample_size(50)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(2));
        }
        group.bench_with_input(BenchmarkId::new("jit", n), &n, |b, _| {
            b.iter(|| call(f, black_box(&x), black_box(&y), black_box(&z)))
        });
        group.bench_with_input(BenchmarkId::new("rust_8acc", n), &n, |b, _| {
            b.iter(|| baseline(black_box(&x), black_box(&y), black_box(&z)))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("jit_compile");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("fused_sum", |b| {
        b.iter(|| JitModule::compile(black_box(std::slice::from_ref(&kernel))).expect("compile"))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
