//! Every case of the core tests' op catalog on the CUDA runner against the
//! reference interpreter (`common::catalog`: each case's function, its
//! VJP, its transposed-params and batched forms, in f64 and f32, at sizes
//! 0, 1, 3, 33 and 1000): on the host through `oxla_cuda::emulate` (the
//! runner's schedule and host steps, the kernel interpreter in place of
//! the PTX) everywhere, and on the GPU where there is one.

use crate::common;

use common::catalog::{check_catalog_with, gpu_extent, on_the_gpu, on_the_host, Report, FULL};
use common::gpu_or_skip;
use oxla_cuda::Gpu;
use std::time::Instant;

fn assert_all_pass(report: &Report, on: &str, started: Instant) {
    eprintln!(
        "op catalog {on}: {} ({:.1} s)",
        report.summary(),
        started.elapsed().as_secs_f64()
    );
    let failed: Vec<String> = report
        .cases
        .iter()
        .filter_map(|(name, r)| r.as_ref().err().map(|e| format!("{name}: {e}")))
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} cases failed {on}:\n{}",
        failed.len(),
        report.cases.len(),
        failed.join("\n")
    );
    assert!(report.cases.len() > 200 && report.runs > report.programs);
}

/// The whole catalog through the CUDA runner's host logic (binding,
/// allocation and the fills of reductions' outputs, launch order, outputs,
/// loops and conds), uninitialised device memory modelled as poison.
/// About 8 s in a debug build.
#[test]
fn catalog_on_the_host_schedule() {
    let started = Instant::now();
    let report = check_catalog_with(FULL, &on_the_host(), &mut |_, _| {});
    assert_all_pass(&report, "on the host schedule", started);
}

/// The whole catalog on the GPU, each program loaded once and run at every
/// size (`OXLA_GPU_CATALOG=quick`: functions and VJPs in f64 only).
#[test]
fn catalog_on_the_gpu() {
    if !gpu_or_skip() {
        return;
    }
    let gpu = Gpu::open(0).unwrap();
    let started = Instant::now();
    let report = check_catalog_with(gpu_extent(), &on_the_gpu(&gpu), &mut |name, r| {
        if let Err(e) = r {
            eprintln!("FAIL  {name}: {e}");
        }
    });
    assert_all_pass(&report, "on the GPU", started);
}
