//! One-shot GPU check of whole fused programs (`oxla_cuda::CudaProgram`).
//!
//! 1. Runs each function of the program tests (`tests/common/mod.rs`) on the
//!    GPU at lengths 0, 1, 3, 4, 5, 1000, 1001 and compares every output
//!    element with the reference interpreter (`oxla_core::interp::eval`):
//!    one PASS/FAIL line per function.
//! 2. Times `sum(x*2*y+z)` over 10M f32 with the inputs resident on the
//!    device: warm-up, then the median of 20 calls, each `run_device` +
//!    `synchronize`, and prints the read bandwidth (12 bytes per element).
//! 3. Math accuracy: for each of exp, log, sin, cos, tanh, sqrt in f32 and
//!    f64, the sample kernel `unary_<op>_<dtype>` runs on 2^22 inputs (per-op
//!    ranges; for sin/cos |x| up to the largest finite value, near multiples
//!    of π/2, and NaN/±inf/±0) and the worst distance in ulps to the
//!    interpreter (Rust's `std` functions, rounded to the dtype) is printed
//!    with its input. Each fails above its bound in `MATH_ULP_BOUNDS` or
//!    on a NaN mismatch.
//! 4. Reductions: `sum_f32` of 2^29 ones (must be exactly 2^29) and of 2^26
//!    random values, `sum_f64` of 2^26 random values, against host sums
//!    (compensated f64), as relative errors and in units of u·Σ|x|.
//! 5. Max and min: `max_f32`, `min_f32`, `max_f64`, `min_f64` over 2^26
//!    random values (exactly the host's max/min), with one NaN at a random
//!    place (must give NaN), and all -inf / +inf (the output's -inf/+inf
//!    fill and the compare-and-swap merge across blocks).
//!
//! 6. Matrix products on cuBLAS: the products of `tests/suite/cublas.rs` (named
//!    layouts in f64/f32/bf16 and 200 random `dot_general`s, integer inputs)
//!    against the interpreter, exactly, with every launch the plan sends to
//!    cuBLAS counted; then 4096³ products in f32 and bf16 with the inputs
//!    on the device: median of 10 calls in TFLOP/s, 64 random elements
//!    checked against host f64 sums; and the PTX kernel on the same f32
//!    product at 2048³ for comparison.
//! 7. The op catalog (`tests/common/catalog.rs`): every case of the core
//!    tests' catalog — its function, its VJP, its transposed-params and
//!    batched forms, in f64 and f32 — run with shaped arguments at sizes
//!    0, 1, 3, 33, 1000 against the interpreter (the CPU backend's
//!    tolerances): one PASS/FAIL line per case with its worst error as a
//!    fraction of the tolerance (env `OXLA_GPU_CATALOG=quick`: functions
//!    and VJPs in f64 only).
//!
//! Without a GPU it prints "no GPU found" and exits 0. With one, the exit
//! status is 1 if any check failed.
//!
//! Build: `cargo build -p oxla-cuda --example gpu_check --release`; the
//! binary is self-contained (the CUDA driver is loaded at run time).

#[path = "../tests/common/mod.rs"]
mod common;

use common::catalog::{check_catalog_with, gpu_extent, on_the_gpu};
use common::products::{check_on_gpu, named_products, product, random_products, Axes};
use common::{cases, check, fused_sum, LENGTHS};
use oxla_core::kernel::{compensated_sum, interp};
use oxla_core::{Buffer, DType, Kernel};
use oxla_cuda::{gpu_available, measure_bandwidth, CudaKernels, CudaProgram, Gpu};
use oxla_ptx::samples;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

const BENCH_LEN: usize = 10_000_000;
const WARMUP: usize = 3;
const RUNS: usize = 20;

fn main() {
    if !gpu_available() {
        println!("gpu_check: no GPU found (no CUDA driver or device); nothing to check");
        return;
    }
    let mut failed = 0;
    match CudaProgram::from_function(&fused_sum(DType::F32)) {
        Ok(p) => {
            let ctx = p.kernels().context();
            let name = ctx.name().unwrap_or_else(|e| format!("? ({e})"));
            let (ma, mi) = ctx.compute_capability().unwrap_or((0, 0));
            println!(
                "gpu_check: device 0 = {name}, compute capability {ma}.{mi}, PTX for {:?}",
                p.kernels().arch()
            );
        }
        Err(e) => {
            println!("gpu_check: FAIL loading the first program: {e}");
            std::process::exit(1);
        }
    }

    println!("== correctness: GPU program vs interpreter, n in {LENGTHS:?} (vmap batch b = 3)");
    for case in cases() {
        let result = catch_unwind(AssertUnwindSafe(|| -> Result<f64, String> {
            let p = CudaProgram::from_function(&case.f).map_err(|e| format!("loading: {e}"))?;
            let mut worst = 0.0f64;
            for n in LENGTHS {
                worst = worst.max(check(&case, n, |args| p.run(args))?);
            }
            Ok(worst)
        }));
        match result {
            Ok(Ok(worst)) => println!(
                "PASS  {:<45} worst error {:.3} of tolerance",
                case.name, worst
            ),
            Ok(Err(e)) => {
                failed += 1;
                println!("FAIL  {:<45} {e}", case.name);
            }
            Err(_) => {
                failed += 1;
                println!("FAIL  {:<45} panicked (message above)", case.name);
            }
        }
    }

    println!("== bandwidth: sum(x*2*y+z), {BENCH_LEN} f32, inputs on the device");
    match catch_unwind(AssertUnwindSafe(bench)) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            failed += 1;
            println!("FAIL  bandwidth: {e}");
        }
        Err(_) => {
            failed += 1;
            println!("FAIL  bandwidth: panicked (message above)");
        }
    }

    for (title, part) in [
        (
            "== math accuracy: PTX vs interpreter, 2^22 inputs per function",
            math_accuracy as fn() -> Result<usize, String>,
        ),
        (
            "== reductions: sums of 2^29 ones and of random data",
            reductions,
        ),
        (
            "== max and min over 2^26 values: exact, NaN, infinities",
            choosing,
        ),
        (
            "== matrix products on cuBLAS: correctness, then GEMM throughput",
            products,
        ),
        (
            "== op catalog: every case, its VJP and forms on the GPU vs interpreter",
            catalog,
        ),
    ] {
        println!("{title}");
        match catch_unwind(AssertUnwindSafe(part)) {
            Ok(Ok(n)) => failed += n,
            Ok(Err(e)) => {
                failed += 1;
                println!("FAIL  {e}");
            }
            Err(_) => {
                failed += 1;
                println!("FAIL  panicked (message above)");
            }
        }
    }

    if failed == 0 {
        println!("gpu_check: ALL PASS");
    } else {
        println!("gpu_check: {failed} FAILED");
        std::process::exit(1);
    }
}

fn bench() -> Result<(), String> {
    let p = CudaProgram::from_function(&fused_sum(DType::F32))?;
    let host: Vec<Buffer> = (0..3)
        .map(|k| {
            let vals: Vec<f64> = (0..BENCH_LEN)
                .map(|i| ((i * (k + 3)) % 17) as f64 * 0.125 - 1.0)
                .collect();
            Buffer::from_f64(DType::F32, &vals)
        })
        .collect();
    let dev = host
        .iter()
        .map(|b| p.upload(b))
        .collect::<Result<Vec<_>, _>>()?;
    let args: Vec<_> = dev.iter().collect();
    p.synchronize()?;

    let mut result = None;
    for _ in 0..WARMUP {
        result = Some(p.run_device(&args)?);
        p.synchronize()?;
    }
    let mut times = Vec::with_capacity(RUNS);
    let mut enqueue = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let out = p.run_device(&args)?;
        enqueue.push(start.elapsed());
        p.synchronize()?;
        times.push(start.elapsed());
        result = Some(out);
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2].as_secs_f64()
    };
    let secs = median(&mut times);
    let queued = median(&mut enqueue);
    let bytes = 12.0 * BENCH_LEN as f64;

    // The value, against an f64 sum on the host.
    let out = result.ok_or("no run")?;
    let got = p.download(&out[0])?.get(0);
    let (x, y, z) = (host[0].to_f64(), host[1].to_f64(), host[2].to_f64());
    let want: f64 = (0..BENCH_LEN).map(|i| x[i] * 2.0 * y[i] + z[i]).sum();
    let rel = (got - want).abs() / want.abs().max(1.0);
    let ok = rel < 1e-4;
    println!(
        "{}  value {got} (host f64 sum {want}, relative error {rel:.1e}, limit 1e-4)",
        if ok { "PASS" } else { "FAIL" }
    );
    println!(
        "      program: median {:.1} us per call over {RUNS} calls (run_device + synchronize) \
         = {:.0} GB/s read; run_device itself returns in {:.1} us (asynchronous dispatch)",
        secs * 1e6,
        bytes / secs / 1e9,
        queued * 1e6
    );
    // The bare kernel on the same data size, for the program's overhead.
    match measure_bandwidth(BENCH_LEN, RUNS) {
        Ok(gbs) => println!(
            "      bare kernel (CudaKernels::run_device, {RUNS} queued back to back): {gbs:.0} GB/s"
        ),
        Err(e) => println!("      bare kernel: not measured: {e}"),
    }
    if ok {
        Ok(())
    } else {
        Err("wrong value".into())
    }
}

const MATH_LEN: usize = 1 << 22;
const MATH_OPS: [&str; 6] = ["exp", "log", "sin", "cos", "tanh", "sqrt"];
/// The most ulp each of `MATH_OPS` may be off the interpreter (Rust std in
/// f64, rounded to the type), as (f32, f64): the bounds documented in
/// `oxla-ptx`'s crate docs, with the margin of what the code can promise
/// rather than what one run measured. `sqrt` is `sqrt.rn`, IEEE-exact.
const MATH_ULP_BOUNDS: [(u64, u64); 6] = [(2, 2), (2, 3), (2, 2), (2, 2), (3, 4), (0, 0)];

/// The largest finite value of `dtype` (f32 or f64).
fn max_finite(dtype: DType) -> f64 {
    if dtype == DType::F32 {
        f32::MAX as f64
    } else {
        f64::MAX
    }
}

/// `±(1+u)·2^e` with `e` uniform in `[lo, hi)`.
fn log_uniform(rng: &mut SmallRng, lo: i32, hi: i32, signed: bool) -> f64 {
    let x = (1.0 + rng.gen::<f64>()) * 2f64.powi(rng.gen_range(lo..hi));
    if signed && rng.gen_bool(0.5) {
        -x
    } else {
        x
    }
}

/// Inputs for `op`: the ranges where it is interesting, plus specials.
fn math_inputs(op: &str, dtype: DType, rng: &mut SmallRng) -> Vec<f64> {
    let f32_ty = dtype == DType::F32;
    let top = if f32_ty { 127 } else { 1023 };
    let bottom = if f32_ty { -149 } else { -1074 };
    let mut xs: Vec<f64> = (0..MATH_LEN)
        .map(|i| match (op, i % 4) {
            ("sin" | "cos", 0) => rng.gen_range(-10.0..10.0),
            ("sin" | "cos", 1) => log_uniform(rng, -30, 30, true),
            ("sin" | "cos", 2) => log_uniform(rng, 30, top, true),
            ("sin" | "cos", _) => {
                rng.gen_range(-(1i64 << 20)..(1i64 << 20)) as f64 * std::f64::consts::FRAC_PI_2
            }
            ("exp", 0) => log_uniform(rng, -30, 0, true),
            ("exp", _) if f32_ty => rng.gen_range(-105.0..90.0),
            ("exp", _) => rng.gen_range(-746.0..710.0),
            ("log" | "sqrt", 0) => 1.0 + rng.gen_range(-0.01..0.01),
            ("log" | "sqrt", _) => log_uniform(rng, bottom, top, false),
            ("tanh", 0) => log_uniform(rng, -30, 0, true),
            _ => rng.gen_range(-25.0..25.0),
        })
        .collect();
    let max = max_finite(dtype);
    xs.extend([
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        max,
        -max,
    ]);
    xs
}

/// Representable values of `dtype` between `a` and `b` (`u64::MAX` when
/// exactly one is NaN).
fn ulps(dtype: DType, a: f64, b: f64) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    let key = |v: f64| -> i64 {
        let b = if dtype == DType::F32 {
            (v as f32).to_bits() as i32 as i64
        } else {
            v.to_bits() as i64
        };
        let min = if dtype == DType::F32 {
            i32::MIN as i64
        } else {
            i64::MIN
        };
        if b < 0 {
            min - b
        } else {
            b
        }
    };
    key(a).abs_diff(key(b))
}

fn find(name: &str) -> Result<Kernel, String> {
    samples::all()
        .into_iter()
        .find(|k| k.name == name)
        .ok_or(format!("no sample kernel `{name}`"))
}

/// Worst ulp distance per function and dtype, each failing above its
/// `MATH_ULP_BOUNDS` entry (or on a NaN mismatch); returns the failure count.
fn math_accuracy() -> Result<usize, String> {
    let mut kernels = Vec::new();
    for ty in [DType::F32, DType::F64] {
        for op in MATH_OPS {
            kernels.push(find(&format!("unary_{op}_{ty}"))?);
        }
    }
    let ks = CudaKernels::load(&kernels)?;
    let mut rng = SmallRng::seed_from_u64(29);
    let mut failed = 0;
    for (i, k) in kernels.iter().enumerate() {
        let dtype = k.args[0].dtype;
        let op = MATH_OPS[i % MATH_OPS.len()];
        let xs = math_inputs(op, dtype, &mut rng);
        let sizes = samples::size_values(k, xs.len());
        let mut want = vec![Buffer::from_f64(dtype, &xs), Buffer::zeros(dtype, xs.len())];
        let mut got = want.clone();
        interp::run(k, &mut want, &sizes)?;
        ks.run(i, &mut got, &sizes)?;
        let (w, g, x) = (want[1].to_f64(), got[1].to_f64(), want[0].to_f64());
        let (mut worst, mut at) = (0u64, 0usize);
        let mut over1 = 0usize;
        for j in 0..xs.len() {
            let e = ulps(dtype, w[j], g[j]);
            over1 += usize::from(e > 1);
            if e > worst {
                (worst, at) = (e, j);
            }
        }
        let (bound32, bound64) = MATH_ULP_BOUNDS[i % MATH_OPS.len()];
        let bound = if dtype == DType::F32 {
            bound32
        } else {
            bound64
        };
        let bad = worst > bound;
        failed += usize::from(bad);
        let verdict = if bad { "FAIL" } else { "PASS" };
        let worst_text = if worst == u64::MAX {
            "NaN mismatch".to_string()
        } else {
            format!("{worst} ulp")
        };
        println!(
            "{verdict}  {op:<5} {dtype}: worst {worst_text} (bound {bound}) at x = {:e} \
             (GPU {:e}, interpreter {:e}); {over1} of {} inputs over 1 ulp",
            x[at],
            g[at],
            w[at],
            xs.len()
        );
    }
    Ok(failed)
}

/// `sum_f32` of 2^29 ones and of random data, `sum_f64` of random data;
/// returns the failure count.
fn reductions() -> Result<usize, String> {
    let kernels = vec![find("sum_f32")?, find("sum_f64")?];
    let ks = CudaKernels::load(&kernels)?;
    let mut failed = 0;
    let run = |i: usize, input: Buffer| -> Result<f64, String> {
        let sizes = samples::size_values(&kernels[i], input.len());
        let mut bufs = vec![input, Buffer::zeros(kernels[i].args[1].dtype, 1)];
        ks.run(i, &mut bufs, &sizes)?;
        Ok(bufs[1].get(0))
    };

    let n = 1usize << 29;
    let mut ones = Buffer::zeros(DType::F32, n);
    for j in 0..n {
        ones.set(j, 1.0);
    }
    let got = run(0, ones)?;
    let ok = got == n as f64;
    failed += usize::from(!ok);
    println!(
        "{}  sum_f32 of 2^29 ones = {got} (exact: {n})",
        if ok { "PASS" } else { "FAIL" }
    );

    let mut rng = SmallRng::seed_from_u64(30);
    let n = 1usize << 26;
    for (i, dtype) in [(0, DType::F32), (1, DType::F64)] {
        for signed in [false, true] {
            let xs: Vec<f64> = (0..n)
                .map(|_| {
                    if signed {
                        rng.gen_range(-1.0..1.0)
                    } else {
                        rng.gen_range(0.0..1.0)
                    }
                })
                .collect();
            let input = Buffer::from_f64(dtype, &xs);
            let exact = compensated_sum(input.to_f64());
            let abs_sum = compensated_sum(input.to_f64().into_iter().map(f64::abs));
            let got = run(i, input)?;
            let u = if dtype == DType::F32 {
                2f64.powi(-24)
            } else {
                2f64.powi(-53)
            };
            let err = (got - exact).abs();
            println!(
                "INFO  sum_{dtype} of 2^26 random in {}: {got:e} vs {exact:e}: relative error \
                 {:.2e}, = {:.2} u·Σ|x|",
                if signed { "[-1, 1)" } else { "[0, 1)" },
                err / exact.abs(),
                err / (u * abs_sum)
            );
        }
    }
    Ok(failed)
}

/// Max and min over 2^26 values against the host's, with a NaN and with
/// infinities; returns the failure count.
fn choosing() -> Result<usize, String> {
    use oxla_core::kernel::Reduce;
    let names = ["max_f32", "min_f32", "max_f64", "min_f64"];
    let kernels = names
        .iter()
        .map(|n| find(n))
        .collect::<Result<Vec<_>, _>>()?;
    let ks = CudaKernels::load(&kernels)?;
    let mut rng = SmallRng::seed_from_u64(31);
    let n = 1usize << 26;
    let mut failed = 0;
    for (i, k) in kernels.iter().enumerate() {
        let dtype = k.args[0].dtype;
        let r = k.reduce;
        let base: Vec<f64> = (0..n).map(|_| rng.gen_range(-1e3..1e3)).collect();
        let mut with_nan = base.clone();
        with_nan[rng.gen_range(0..n)] = f64::NAN;
        let far = if r == Reduce::Max {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        for (what, xs) in [
            ("random", base),
            ("one NaN", with_nan),
            ("all the identity", vec![far; n]),
            ("all the other infinity", vec![-far; n]),
        ] {
            let input = Buffer::from_f64(dtype, &xs);
            let want = input
                .to_f64()
                .into_iter()
                .fold(r.identity(), |a, x| r.combine(a, x));
            let sizes = samples::size_values(k, n);
            let mut bufs = vec![input, Buffer::zeros(dtype, 1)];
            ks.run(i, &mut bufs, &sizes)?;
            let got = bufs[1].get(0);
            let ok = got == want || (got.is_nan() && want.is_nan());
            failed += usize::from(!ok);
            println!(
                "{}  {} of 2^26, {what}: GPU {got:e}, host {want:e}",
                if ok { "PASS" } else { "FAIL" },
                k.name
            );
        }
    }
    Ok(failed)
}

/// The products of `tests/suite/cublas.rs`, then GEMM throughput; returns the
/// failure count.
fn products() -> Result<usize, String> {
    let mut all = Vec::new();
    for dtype in [DType::F64, DType::F32, DType::BF16] {
        all.extend(named_products(dtype));
    }
    all.extend(random_products(11, 200));
    let mut failed = 0;
    let mut on_cublas = 0;
    for (i, p) in all.iter().enumerate() {
        match catch_unwind(AssertUnwindSafe(|| check_on_gpu(p, i as u64))) {
            Ok(Ok(n)) => on_cublas += n,
            Ok(Err(e)) => {
                failed += 1;
                println!("FAIL  {}: {e}", p.what);
            }
            Err(_) => {
                failed += 1;
                println!("FAIL  {}: panicked (message above)", p.what);
            }
        }
    }
    println!(
        "{}  {} products vs interpreter (exact), {on_cublas} launches on cuBLAS, {failed} failed",
        if failed == 0 { "PASS" } else { "FAIL" },
        all.len()
    );
    for (dtype, n, cublas) in [
        (DType::F32, 4096, true),
        (DType::BF16, 4096, true),
        (DType::F32, 2048, false),
    ] {
        match gemm_throughput(dtype, n, cublas) {
            Ok(true) => {}
            Ok(false) => failed += 1,
            Err(e) => {
                failed += 1;
                println!("FAIL  {dtype} {n}³ product: {e}");
            }
        }
    }
    Ok(failed)
}

/// Every case of the op catalog on the GPU (`common::catalog`), one line
/// per case as it finishes, then a summary line; returns the failure
/// count.
fn catalog() -> Result<usize, String> {
    let gpu = Gpu::open(0)?;
    let started = Instant::now();
    let report = check_catalog_with(gpu_extent(), &on_the_gpu(&gpu), &mut |name, r| match r {
        Ok(worst) => println!("PASS  {name:<45} worst error {worst:.3} of tolerance"),
        Err(e) => println!("FAIL  {name:<45} {e}"),
    });
    // Not a PASS line: the summary stays in a log filtered of those.
    println!(
        "op catalog: {} ({:.1} s)",
        report.summary(),
        started.elapsed().as_secs_f64()
    );
    Ok(report.failures())
}

/// Time `a[n,n] · b[n,n]` in `dtype` (on cuBLAS, or on the PTX kernel) and
/// check 64 elements against host f64 sums; `Ok(false)` on a wrong value.
fn gemm_throughput(dtype: DType, n: usize, cublas: bool) -> Result<bool, String> {
    let axes = Axes {
        batch: vec![],
        contract: vec![n as u64],
        lhs_free: vec![n as u64],
        rhs_free: vec![n as u64],
    };
    let p = product(dtype, &axes, &[1, 0], &[0, 1], None, &[]);
    let program = oxla_core::kernel::fusion::fuse(&p.f)?;
    let cp = if cublas {
        CudaProgram::new(program)?
    } else {
        CudaProgram::new_without_cublas(program)?
    };
    if cublas {
        cp.cublas()?;
    }
    let mut rng = SmallRng::seed_from_u64(41);
    let host: Vec<Buffer> = (0..2)
        .map(|_| {
            let v: Vec<f64> = (0..n * n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            Buffer::from_f64(dtype, &v)
        })
        .collect();
    let dev = host
        .iter()
        .map(|b| cp.upload(b))
        .collect::<Result<Vec<_>, _>>()?;
    let args: Vec<_> = dev.iter().collect();
    let (warmup, runs) = if cublas { (2, 10) } else { (1, 2) };
    let mut out = None;
    for _ in 0..warmup {
        out = Some(cp.run_device(&args)?);
        cp.synchronize()?;
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let o = cp.run_device(&args)?;
        cp.synchronize()?;
        times.push(start.elapsed());
        out = Some(o);
    }
    times.sort();
    let secs = times[times.len() / 2].as_secs_f64();
    let c = cp.download(&out.ok_or("no run")?[0])?;
    let (a, b) = (host[0].to_f64(), host[1].to_f64());
    let (u_out, u_sum) = match dtype {
        DType::BF16 => (2f64.powi(-8), f32::EPSILON as f64),
        DType::F32 => (0.0, f32::EPSILON as f64),
        _ => (0.0, f64::EPSILON),
    };
    let mut worst = 0.0f64;
    for _ in 0..64 {
        let (i, j) = (rng.gen_range(0..n), rng.gen_range(0..n));
        let exact: f64 = (0..n).map(|l| a[i * n + l] * b[l * n + j]).sum();
        let mag: f64 = (0..n).map(|l| (a[i * n + l] * b[l * n + j]).abs()).sum();
        let bound = u_out * exact.abs() + (n as f64 + 2.0) * u_sum * mag;
        worst = worst.max((c.get(i * n + j) - exact).abs() / bound);
    }
    let ok = worst <= 1.0;
    println!(
        "{}  {dtype} {n}³ on {}: median {:.2} ms over {runs} calls = {:.1} TFLOP/s; \
         64 elements within {worst:.3} of the bound u·|c| + (k+2)·eps·Σ|a·b| ({} launches on cuBLAS)",
        if ok { "PASS" } else { "FAIL" },
        if cublas { "cuBLAS" } else { "the PTX kernel" },
        secs * 1e3,
        2.0 * (n as f64).powi(3) / secs / 1e12,
        cp.cublas_launches()
    );
    Ok(ok)
}
