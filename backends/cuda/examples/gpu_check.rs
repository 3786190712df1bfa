//! One-shot GPU check of whole fused programs (`oxla_cuda::CudaProgram`).
//!
//! 1. Runs each function of the program tests (`tests/common/mod.rs`) on the
//!    GPU at lengths 0, 1, 3, 4, 5, 1000, 1001 and compares every output
//!    element with the reference interpreter (`oxla_core::interp::eval`):
//!    one PASS/FAIL line per function.
//! 2. Times `sum(x*2*y+z)` over 10M f32 with the inputs resident on the
//!    device: warm-up, then the median of 20 calls, each `run_device` +
//!    `synchronize`, and prints the read bandwidth (12 bytes per element).
//!
//! Without a GPU it prints "no GPU found" and exits 0. With one, the exit
//! status is 1 if any check failed.
//!
//! Build: `cargo build -p oxla-cuda --example gpu_check --release`; the
//! binary is self-contained (the CUDA driver is loaded at run time).

#[path = "../tests/common/mod.rs"]
mod common;

use common::{cases, check, fused_sum, LENGTHS};
use oxla_core::{Buffer, DType};
use oxla_cuda::{gpu_available, measure_bandwidth, CudaProgram};
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
