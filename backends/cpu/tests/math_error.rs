//! Measured accuracy of our exp, log, sin, cos and tanh against f64 std,
//! through the vector loop and the scalar tail, with and without FMA.
//! Run with `--nocapture` to see the table; the bounds asserted here are the
//! ones stated in `src/math.rs`.

mod common;
use common::*;
use oxla_core::ops::elementwise::UnaryOp;
use oxla_core::{Buffer, DType};
use oxla_cpu::{run_checked, IsaLevel, JitModule};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn unary_kernel(op: UnaryOp, ty: DType) -> oxla_core::Kernel {
    let mut kb = KernelBuilder::new("math", &["n"], vec![sym("n")], 0);
    let (x, out) = (kb.arg(ty, false), kb.arg(ty, true));
    let v = kb.load(x, vec![c(1)]);
    let r = kb.unary(op, v);
    kb.store(out, r);
    kb.build()
}

/// Sample points: uniform over `[lo, hi]` plus log-spaced magnitudes.
fn samples(lo: f64, hi: f64, count: usize) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(5);
    let mut xs: Vec<f64> = (0..count).map(|_| rng.gen_range(lo..=hi)).collect();
    for i in 0..count / 4 {
        let mag = 10f64.powf(-30.0 + 32.0 * i as f64 / (count / 4) as f64);
        for x in [mag, -mag] {
            if (lo..=hi).contains(&x) {
                xs.push(x);
            }
        }
    }
    xs.extend([lo, hi, 0.0]);
    xs
}

/// Largest error of `op` on `xs`: in ulp of the exact f32 result (f32), or
/// relative (f64); absolute for sin and cos.
fn max_error(op: UnaryOp, ty: DType, xs: &[f64], level: Option<IsaLevel>) -> (f64, f64) {
    let k = unary_kernel(op, ty);
    let jit = match level {
        None => JitModule::compile(std::slice::from_ref(&k)),
        Some(l) => JitModule::compile_at(std::slice::from_ref(&k), l),
    }
    .expect("compile");
    let input = Buffer::from_f64(ty, xs);
    let xs = input.to_f64(); // the values actually fed in
    let mut bufs = vec![input, Buffer::zeros(ty, xs.len())];
    run_checked(jit.function(0), &k, &mut bufs, &[xs.len() as i64]).expect("run");
    let absolute = matches!(op, UnaryOp::Sin | UnaryOp::Cos);
    let mut worst = (0.0, 0.0);
    for (x, y) in xs.iter().zip(bufs[1].to_f64()) {
        let exact = op.eval(*x);
        if exact.is_nan() || ty.round(exact) == y {
            continue;
        }
        let err = (y - exact).abs();
        let scaled = if absolute {
            err
        } else if ty == DType::F32 {
            let e = exact.abs().max(f32::MIN_POSITIVE as f64 * 2f64.powi(-23));
            let ulp = 2f64.powi(e.log2().floor() as i32 - 23).max(2f64.powi(-149));
            err / ulp
        } else {
            err / exact.abs().max(f64::MIN_POSITIVE)
        };
        if scaled > worst.0 {
            worst = (scaled, *x);
        }
    }
    worst
}

#[test]
fn math_error_bounds() {
    let pi = std::f64::consts::PI;
    // (op, range f32, range f64, bound f32, bound f64)
    let cases = [
        (UnaryOp::Exp, (-104.0, 89.0), (-746.0, 710.0), 1.5, 5e-16),
        (UnaryOp::Log, (0.0, 3e38), (0.0, 1e308), 1.0, 4e-16),
        (
            UnaryOp::Sin,
            (-1e4 * pi, 1e4 * pi),
            (-1e4 * pi, 1e4 * pi),
            1.2e-7,
            2e-16,
        ),
        (
            UnaryOp::Cos,
            (-1e4 * pi, 1e4 * pi),
            (-1e4 * pi, 1e4 * pi),
            1.2e-7,
            2e-16,
        ),
        (UnaryOp::Tanh, (-20.0, 20.0), (-40.0, 40.0), 2.5, 2e-15),
    ];
    let mut failures = vec![];
    for (op, r32, r64, b32, b64) in cases {
        for (ty, (lo, hi), bound) in [(DType::F32, r32, b32), (DType::F64, r64, b64)] {
            let mut xs = samples(lo, hi, 40_000);
            // Small and moderate arguments, where most uses are.
            xs.extend(samples(lo.max(-10.0), hi.min(10.0), 40_000));
            for level in [None, Some(IsaLevel::Baseline)] {
                let (err, at) = max_error(op, ty, &xs, level);
                let isa = if level.is_none() { "host" } else { "baseline" };
                eprintln!(
                    "{:>5} {ty} {isa:>8}: max error {err:.3e} at x = {at:e} (bound {bound:e})",
                    op.name()
                );
                if err > bound {
                    failures.push(format!(
                        "{} {ty} {isa}: {err:e} at {at:e} > {bound:e}",
                        op.name()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
