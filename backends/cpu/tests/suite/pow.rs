//! `pow` kernels against Rust std's `powf` at both ISA levels and on the
//! kernel interpreter: every pair of a table of special values bit for bit,
//! integer powers exact where the result is representable, and the error
//! in ulp on random inputs over many decades of `x` and `y`.
//!
//! `OXLA_POW_SAMPLES=n` sets the number of random inputs per domain (run
//! with `--nocapture` to reproduce the table in `src/pow.rs`);
//! `OXLA_POW_DUMP=file` writes the results that differ from std, to be
//! measured against a high-precision reference.

use crate::accuracy;
use crate::common;
use accuracy::{ulp_f32, ulp_f64, SplitMix};
use common::*;
use oxla_core::kernel::interp;
use oxla_core::ops::elementwise::BinaryOp;
use oxla_core::{Buffer, DType, Kernel};
use oxla_cpu::{run_checked, IsaLevel, JitModule};

fn pow_kernel(ty: DType) -> Kernel {
    let mut kb = KernelBuilder::new(&format!("pow_{ty}"), &["n"], vec![sym("n")], 0);
    let (x, y) = (kb.arg(ty, false), kb.arg(ty, false));
    let out = kb.arg(ty, true);
    let (a, b) = (kb.load(x, vec![c(1)]), kb.load(y, vec![c(1)]));
    let r = kb.binary(BinaryOp::Pow, a, b);
    kb.store(out, r);
    kb.build()
}

/// The JIT for the host ISA (FMA where the CPU has it) or baseline SSE2.
#[derive(Clone, Copy)]
enum Exec {
    Host,
    Baseline,
}

/// `x^y` elementwise on the JIT at `level` (or the kernel interpreter).
struct PowFn {
    ty: DType,
    kernel: Kernel,
    jit: Option<JitModule>,
}

impl PowFn {
    fn new(ty: DType, level: Option<Exec>) -> PowFn {
        let kernel = pow_kernel(ty);
        let one = std::slice::from_ref(&kernel);
        let jit = match level {
            Some(Exec::Host) => Some(JitModule::compile(one).expect("compile")),
            Some(Exec::Baseline) => {
                Some(JitModule::compile_at(one, IsaLevel::Baseline).expect("compile"))
            }
            None => None,
        };
        PowFn { ty, kernel, jit }
    }

    fn run(&self, xs: &[f64], ys: &[f64]) -> Vec<f64> {
        let n = xs.len();
        let mut bufs = vec![
            Buffer::from_f64(self.ty, xs),
            Buffer::from_f64(self.ty, ys),
            sentinel(self.ty, n),
        ];
        let sizes = [n as i64];
        match &self.jit {
            Some(jit) => {
                run_checked(jit.function(0), &self.kernel, &mut bufs, &sizes).expect("run")
            }
            None => interp::run(&self.kernel, &mut bufs, &sizes).expect("interpreter"),
        }
        bufs[2].to_f64()
    }
}

fn executors(ty: DType) -> Vec<(&'static str, PowFn)> {
    let mut v = vec![
        ("host", PowFn::new(ty, Some(Exec::Host))),
        ("baseline", PowFn::new(ty, Some(Exec::Baseline))),
    ];
    v.push(("interpreter", PowFn::new(ty, None)));
    v
}

fn std_pow(ty: DType, x: f64, y: f64) -> f64 {
    match ty {
        DType::F32 => (x as f32).powf(y as f32) as f64,
        _ => x.powf(y),
    }
}

fn same(ty: DType, got: f64, want: f64) -> bool {
    if want.is_nan() {
        return got.is_nan();
    }
    match ty {
        DType::F32 => (got as f32).to_bits() == (want as f32).to_bits(),
        _ => got.to_bits() == want.to_bits(),
    }
}

/// The special values of `pow` for `ty`: zeros, infinities, NaN, ±1, odd
/// and even integers (also the largest odd integer the type holds), halves,
/// subnormals, the extremes, values next to 1.
fn specials(ty: DType) -> Vec<f64> {
    let (eps, max, tiny, big_odd) = match ty {
        DType::F32 => (
            f32::EPSILON as f64,
            f32::MAX as f64,
            f32::from_bits(1) as f64,
            16_777_215.0,
        ),
        _ => (
            f64::EPSILON,
            f64::MAX,
            f64::from_bits(1),
            9_007_199_254_740_991.0,
        ),
    };
    let mut v = vec![
        0.0,
        f64::INFINITY,
        f64::NAN,
        1.0,
        0.5,
        2.0,
        3.0,
        2.5,
        0.1,
        10.0,
        1.0 + eps,
        1.0 - eps / 2.0,
        tiny,
        max,
        big_odd,
        2.0 * big_odd + 2.0,
        1e6,
        7.0,
    ];
    let neg: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(neg);
    v
}

/// Whether `pow(x, y)` is one of the cases C's `pow` defines exactly: an
/// operand that is ±0, ±inf or NaN, x = ±1, y = 1 (x itself), or a NaN,
/// infinite or zero result.
/// The other pairs of the table are ordinary powers (`pow(MAX, 0.5)`),
/// held to the ulp bound instead.
fn defined_case(x: f64, y: f64, want: f64) -> bool {
    let special = |v: f64| v == 0.0 || v.is_infinite() || v.is_nan();
    special(x) || x.abs() == 1.0 || special(y) || y == 1.0 || !want.is_finite() || want == 0.0
}

/// Whether two finite values of the same sign are at most one ulp apart.
fn adjacent(ty: DType, a: f64, b: f64) -> bool {
    let (a, b) = match ty {
        DType::F32 => ((a as f32).to_bits() as i64, (b as f32).to_bits() as i64),
        _ => (a.to_bits() as i64, b.to_bits() as i64),
    };
    (a - b).abs() <= 1
}

/// Every pair of `specials`: the cases C defines bit for bit (NaN only as
/// NaN), the others within one ulp of std.
#[test]
fn special_values_bit_exact() {
    for ty in [DType::F32, DType::F64] {
        let s = specials(ty);
        let (mut xs, mut ys) = (vec![], vec![]);
        for &x in &s {
            for &y in &s {
                xs.push(x);
                ys.push(y);
            }
        }
        // Every pair at every lane position and in the scalar tail.
        for shift in 0..4 {
            let (xs, ys) = (&xs[shift..], &ys[shift..]);
            for (name, f) in executors(ty) {
                let got = f.run(xs, ys);
                let mut bad = vec![];
                for i in 0..xs.len() {
                    let want = std_pow(ty, xs[i], ys[i]);
                    if !same(ty, got[i], want)
                        && (defined_case(xs[i], ys[i], want) || !adjacent(ty, got[i], want))
                    {
                        bad.push(format!(
                            "pow({:e}, {:e}) = {:e}, std {:e}",
                            xs[i], ys[i], got[i], want
                        ));
                    }
                }
                assert!(
                    bad.is_empty(),
                    "{ty} {name}: {} mismatches:\n{}",
                    bad.len(),
                    bad[..bad.len().min(30)].join("\n")
                );
            }
        }
    }
}

/// Integer powers whose value is representable come out exact: small
/// integer bases (positive and negative) to the powers 0–12 and -1, -2
/// of powers of two, and powers of two to every integer in range.
#[test]
fn integer_exponents_are_exact() {
    for ty in [DType::F32, DType::F64] {
        let limit = if ty == DType::F32 {
            2f64.powi(24)
        } else {
            2f64.powi(53)
        };
        let (mut xs, mut ys, mut want) = (vec![], vec![], vec![]);
        for base in -60i64..=60 {
            for k in 0u32..=12 {
                let Some(p) = (base as i128).checked_pow(k) else {
                    continue;
                };
                if (p.unsigned_abs() as f64) <= limit {
                    xs.push(base as f64);
                    ys.push(k as f64);
                    want.push(p as f64);
                }
            }
        }
        let e_range = if ty == DType::F32 {
            -149..=127
        } else {
            -1074..=1023
        };
        for e in e_range {
            for (base, k, w) in [
                (2.0, e, exact_pow2(e)),
                (0.5, -e, exact_pow2(e)),
                (4.0, e / 2, exact_pow2(2 * (e / 2))),
                (
                    -2.0,
                    e,
                    if e % 2 != 0 {
                        -exact_pow2(e)
                    } else {
                        exact_pow2(e)
                    },
                ),
            ] {
                xs.push(base);
                ys.push(k as f64);
                want.push(w);
            }
        }
        for (name, f) in executors(ty) {
            let got = f.run(&xs, &ys);
            for i in 0..xs.len() {
                assert!(
                    same(ty, got[i], want[i]),
                    "{ty} {name}: pow({}, {}) = {:e}, exactly {:e}",
                    xs[i],
                    ys[i],
                    got[i],
                    want[i]
                );
            }
        }
    }
}

/// 2^e for any e in the f64 range, subnormals included.
fn exact_pow2(e: i32) -> f64 {
    if e >= -1022 {
        2f64.powi(e)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

/// Random (x, y) pairs: name and inputs.
fn domains(ty: DType, count: usize) -> Vec<(&'static str, Vec<(f64, f64)>)> {
    let mut rng = SplitMix(0x9077);
    let f32_ty = ty == DType::F32;
    let (decades, ln_max) = if f32_ty { (30.0, 88.0) } else { (300.0, 709.0) };
    let round = |v: f64| if f32_ty { v as f32 as f64 } else { v };
    let mut out = vec![];
    let mut gen = |name, g: &mut dyn FnMut(&mut SplitMix) -> (f64, f64)| {
        let v: Vec<(f64, f64)> = (0..count)
            .map(|_| {
                let (x, y) = g(&mut rng);
                (round(x), round(y))
            })
            .collect();
        out.push((name, v));
    };
    gen("x = 10^U(±decades), y = U(-4, 4)", &mut |r| {
        (
            10f64.powf(r.uniform(-decades, decades)),
            r.uniform(-4.0, 4.0),
        )
    });
    gen("x = 10^U(-6, 6), y = ±10^U(-3, 2)", &mut |r| {
        let y = 10f64.powf(r.uniform(-3.0, 2.0));
        (
            10f64.powf(r.uniform(-6.0, 6.0)),
            if r.next() & 1 == 0 { y } else { -y },
        )
    });
    gen("x = U(0, 4), |y·ln x| = U(0, ln max)", &mut |r| {
        let x = r.uniform(0.0, 4.0);
        (x, r.uniform(-ln_max, ln_max) / x.ln())
    });
    gen("x = 1 + U(±2^-10), |y·ln x| = U(0, ln max)", &mut |r| {
        let x = round(1.0 + r.uniform(-1.0, 1.0) / 1024.0);
        (x, r.uniform(-ln_max, ln_max) / x.ln())
    });
    gen("x = -U(0, 10), y = integer U(±40)", &mut |r| {
        (-r.uniform(0.0, 10.0), r.uniform(-40.0, 40.0).round())
    });
    out
}

/// Error of `got` for `pow(x, y)` in ulp of the type against Rust std in
/// f64 (for f32: the exact f64 power of the f32 inputs, before rounding),
/// as `accuracy::compare` defines it; a special mismatch is an error.
fn error(ty: DType, x: f64, y: f64, got: f64) -> Result<f64, String> {
    let exact = x.powf(y);
    let rounded = if ty == DType::F32 {
        exact as f32 as f64
    } else {
        exact
    };
    if rounded.is_nan()
        || got.is_nan()
        || rounded.is_infinite()
        || got.is_infinite()
        || rounded == 0.0
    {
        return if same(ty, got, rounded) {
            Ok(0.0)
        } else {
            Err(format!("pow({x:e}, {y:e}) = {got:e}, std {rounded:e}"))
        };
    }
    let ulp = if ty == DType::F32 {
        ulp_f32(rounded as f32)
    } else {
        ulp_f64(rounded)
    };
    Ok((got - exact).abs() / ulp)
}

#[test]
fn error_in_ulp() {
    let count = std::env::var("OXLA_POW_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    // `OXLA_POW_DUMP=file`: the inputs and results that differ from std
    // (type, then the f64 bits of x, y and the result), for a check against
    // a high-precision reference.
    let mut dump = std::env::var_os("OXLA_POW_DUMP")
        .map(|p| std::io::BufWriter::new(std::fs::File::create(p).expect("create the dump")));
    for (ty, bound) in [(DType::F32, 1.0), (DType::F64, 2.0)] {
        for (name, f) in executors(ty) {
            if name == "interpreter" {
                continue;
            }
            for (domain, pairs) in domains(ty, count) {
                let (xs, ys): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
                let got = f.run(&xs, &ys);
                let (mut worst, mut at) = (0.0f64, (0.0, 0.0));
                let mut differ = 0usize;
                for i in 0..xs.len() {
                    if !same(ty, got[i], std_pow(ty, xs[i], ys[i])) {
                        differ += 1;
                        if let Some(out) = dump.as_mut() {
                            use std::io::Write;
                            writeln!(
                                out,
                                "{ty} {:016x} {:016x} {:016x}",
                                xs[i].to_bits(),
                                ys[i].to_bits(),
                                got[i].to_bits()
                            )
                            .expect("write the dump");
                        }
                    }
                    match error(ty, xs[i], ys[i], got[i]) {
                        Ok(e) if e > worst => {
                            worst = e;
                            at = (xs[i], ys[i]);
                        }
                        Ok(_) => {}
                        Err(e) => panic!("{ty} {name} {domain}: {e}"),
                    }
                }
                println!(
                    "{ty} {name:8} {domain:45} {count} inputs: max {worst:.3} ulp at pow({:e}, {:e}), {differ} differ from std",
                    at.0, at.1
                );
                assert!(
                    worst <= bound,
                    "{ty} {name} {domain}: {worst} ulp at {at:?}"
                );
            }
        }
    }
}
