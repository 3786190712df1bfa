//! Accuracy of our exp, log, sin, cos, tanh (and sqrt) against Rust std,
//! through the vector loop and the scalar tail, with the host ISA (FMA where
//! the CPU has it) and the SSE2 baseline: a sampled version of the
//! exhaustive table in `src/math.rs` (`examples/accuracy.rs`), asserting its
//! documented bounds (f32 in ulp of the correctly rounded result, f64 in
//! ulps from std), and sin/cos pinned at huge arguments and special values.
//! Run with `--nocapture` to see the measured errors.

use crate::accuracy;
use accuracy::*;
use oxla_core::ops::elementwise::UnaryOp;
use oxla_core::DType;
use oxla_cpu::IsaLevel;

fn levels() -> [(Option<IsaLevel>, &'static str); 2] {
    [(None, "host"), (Some(IsaLevel::Baseline), "baseline")]
}

/// The f32 sample: every `STRIDE_F32`-th bit pattern (odd, so every
/// exponent and all low mantissa bits vary: 8.2·10⁶ inputs per function
/// and ISA), plus the documented worst inputs (`worst_f32`) and the
/// special values.
const STRIDE_F32: u64 = 521;

/// The documented bounds are printed to three decimals: a measured
/// 0.9394 is "0.939".
const PRINTED: f64 = 0.0005;

/// Whether the host JIT's code is the FMA column of the tables: Cranelift
/// uses FMA (and the x86-64-v3 code) where the CPU has it.
fn host_is_fma() -> bool {
    oxla_cpu::host_supports_v3()
}

/// The f32 bound in ulp of the correctly rounded result (erf: of `libm`'s)
/// of each function, as documented: the table of `src/math.rs` and
/// docs/ARCHITECTURE.md "Math accuracy" (README "Numerics" quotes its
/// largest entries), for the JIT's host code with FMA (all 2³² inputs) or
/// the SSE2 baseline (`fma` false).
fn bound_f32(op: UnaryOp, fma: bool) -> f64 {
    let b = match (op, fma) {
        (UnaryOp::Exp, true) => 0.939,
        (UnaryOp::Exp, false) => 1.218,
        (UnaryOp::ExpM1, true) => 0.513,
        (UnaryOp::ExpM1, false) => 0.513,
        (UnaryOp::Erf, _) => 0.500,
        (UnaryOp::Log, true) => 0.854,
        (UnaryOp::Log, false) => 0.858,
        (UnaryOp::Sin | UnaryOp::Cos, _) => 0.500,
        (UnaryOp::Tanh, _) => 0.509,
        (UnaryOp::Sqrt, _) => 0.500,
        _ => unreachable!(),
    };
    b + PRINTED
}

/// The f32 inputs at which the documented maxima were measured (the
/// tables' "at input" column; the native kernels' from docs/ARCHITECTURE.md
/// "Native kernels"), with their neighbours: a sample that misses them
/// would understate the error.
fn worst_f32() -> Vec<f32> {
    let at = [
        2.6688921e1f32,
        4.8181538e1,
        -5.9954247e1,
        1.4066552e0,
        1.4110483e0,
        6.9991034e-1,
        1.4923352e1,
        1.409075e5,
        1.7343463e-1,
        3.4668168e-1,
        1.839803e-4,
        4.701977e-38,
        3.0814877e-33,
        -5.926467e1,
        1.0002236,
        3.3797116e-6,
    ];
    at.iter()
        .flat_map(|x| (-2i32..=2).map(move |d| f32::from_bits((x.to_bits() as i32 + d) as u32)))
        .collect()
}

/// The special values, several copies each: through the unrolled body,
/// single vectors and the tail.
fn special_f32(copies: usize) -> Vec<f32> {
    let v: Vec<f32> = [0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN]
        .into_iter()
        .chain([f32::MAX, f32::MIN, f32::MIN_POSITIVE, f32::from_bits(1)])
        .chain([1e4, 1e10, 1e20, 1e30, -1e30, 88.7, 89.0, -103.0, -104.0])
        .collect();
    v.repeat(copies)
}

/// `f` on the strided sample, the worst inputs and the special values.
fn measure_f32(op: UnaryOp, f: &UnaryFn<f32>, stride: u64, copies: usize) -> Tally {
    let mut t = sweep_f32(op, f, stride, 2);
    let xs: Vec<f32> = worst_f32().into_iter().chain(special_f32(copies)).collect();
    let mut y = vec![0f32; xs.len()];
    f.run(&xs, &mut y);
    for (x, y) in xs.iter().zip(&y) {
        t.add(x.to_bits() as u64, error_f32(op, *x, *y));
    }
    t
}

/// The f32 bound of the native kernels' math at `level`, as documented in
/// README "Numerics" and docs/ARCHITECTURE.md "Native kernels": exp and
/// tanh are computed in f32 lanes for twice the vector width, measured over
/// all 2³² inputs at x86-64-v4 and baseline (x86-64-v3, not swept
/// exhaustively, is held to the larger of the two); erf over all 2³² at
/// every level; the others as the JIT's (the same methods in f64 lanes).
fn native_bound_f32(op: UnaryOp, level: IsaLevel) -> f64 {
    let b = match (op, level) {
        (UnaryOp::Exp, IsaLevel::X86_64V4) => 0.901,
        (UnaryOp::Exp, _) => 1.176,
        (UnaryOp::Tanh, IsaLevel::Baseline) => 1.118,
        (UnaryOp::Tanh, _) => 1.134,
        (UnaryOp::Erf, _) => 0.501,
        _ => return bound_f32(op, level != IsaLevel::Baseline),
    };
    b + PRINTED
}

/// The f64 bound: ulps from Rust std's result (not from the exact value;
/// std is itself within about half an ulp to one ulp), as in the table of
/// `src/math.rs`, for the host code with FMA or the baseline.
fn bound_f64(op: UnaryOp, fma: bool) -> f64 {
    let b = match (op, fma) {
        (UnaryOp::Exp, true) => 2.0,
        (UnaryOp::Exp, false) => 3.0,
        (UnaryOp::ExpM1, _) => 2.0,
        (UnaryOp::Erf, _) => 1.0,
        (UnaryOp::Log, _) => 1.0,
        (UnaryOp::Sin | UnaryOp::Cos, _) => 1.0,
        (UnaryOp::Tanh, true) => 4.0,
        (UnaryOp::Tanh, false) => 3.0,
        (UnaryOp::Sqrt, _) => 0.0,
        _ => unreachable!(),
    };
    b + PRINTED
}

/// Every function at its documented bound, on both ISAs: f32 on every
/// `STRIDE_F32`-th bit pattern plus the documented worst inputs, in ulp of
/// the correctly rounded result; f64 on 10⁵ inputs per domain of the table,
/// in ulps from std. NaNs, infinities and zero signs must match std
/// exactly. `OXLA_MATH_STRIDE=1` sweeps all 2³² f32 inputs (release: the
/// `accuracy` example is faster).
#[test]
fn math_error_bounds() {
    let stride = std::env::var("OXLA_MATH_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(STRIDE_F32);
    let mut failures = vec![];
    for (level, isa) in levels() {
        let fma = level.is_none() && host_is_fma();
        for op in OPS {
            let jit = UnaryFn::<f32>::compile(op, level);
            let t = measure_f32(op, &jit, stride, 4);
            let bound = bound_f32(op, fma);
            eprintln!(
                "{:>5} f32 {isa:>8}: max {:.4} ulp at {:e} (bound {bound:.4}), {} special failures over {}",
                op.name(),
                t.max_ulp,
                f32::from_bits(t.at as u32),
                t.specials(),
                t.count
            );
            if t.max_ulp > bound || t.specials() > 0 {
                failures.push(format!("{} f32 {isa}: {t:?} (bound {bound})", op.name()));
            }

            let jit = UnaryFn::<f64>::compile(op, level);
            for (domain, xs) in f64_domains(op, 100_000, 11) {
                let t = measure_f64(op, &jit, &xs);
                let bound = bound_f64(op, fma);
                eprintln!(
                    "{:>5} f64 {isa:>8} {domain}: max {:.3} ulp from std at {:e}, {} special failures",
                    op.name(),
                    t.max_ulp,
                    f64::from_bits(t.at),
                    t.specials()
                );
                if t.max_ulp > bound || t.specials() > 0 {
                    failures.push(format!(
                        "{} f64 {isa} {domain}: {t:?} (bound {bound})",
                        op.name()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The native kernels' math (`oxla_cpu::native`, Rust source compiled by
/// rustc) at every ISA level the host runs, against its documented bounds
/// (`native_bound_f32`), on the same sample as `math_error_bounds`
/// (`OXLA_NATIVE_STRIDE` to change it; 1 is the exhaustive sweep) and 10⁵
/// f64 per domain. `OXLA_NATIVE_OPS=tanh,exp` and `OXLA_NATIVE_LEVEL=v4`
/// narrow it (for the exhaustive sweep).
#[test]
fn native_math_error_bounds() {
    let stride = std::env::var("OXLA_NATIVE_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(STRIDE_F32);
    let only = |var: &str, name: &str| {
        std::env::var(var).map_or(true, |v| v.split(',').any(|x| x.trim() == name))
    };
    let ops = [
        UnaryOp::Exp,
        UnaryOp::ExpM1,
        UnaryOp::Log,
        UnaryOp::Tanh,
        UnaryOp::Sqrt,
        UnaryOp::Erf,
    ];
    let mut failures = vec![];
    let levels = IsaLevel::ALL
        .into_iter()
        .filter(|l| oxla_cpu::host_supports(*l) && only("OXLA_NATIVE_LEVEL", l.suffix()));
    for level in levels {
        let fma = level != IsaLevel::Baseline;
        for op in ops
            .into_iter()
            .filter(|op| only("OXLA_NATIVE_OPS", &op.name()))
        {
            let f = UnaryFn::<f32>::native(op, level);
            let t = measure_f32(op, &f, stride, 5);
            let bound = native_bound_f32(op, level);
            eprintln!(
                "native {:>5} f32 {level:?}: max {:.4} ulp at {:e} (bound {bound:.4}), {} special failures over {}",
                op.name(),
                t.max_ulp,
                f32::from_bits(t.at as u32),
                t.specials(),
                t.count
            );
            if t.max_ulp > bound || t.specials() > 0 {
                failures.push(format!(
                    "native {} f32 {level:?}: {t:?} (bound {bound})",
                    op.name()
                ));
            }
            let f = UnaryFn::<f64>::native(op, level);
            for (domain, xs) in f64_domains(op, 100_000, 11) {
                let t = measure_f64(op, &f, &xs);
                eprintln!(
                    "native {:>5} f64 {level:?} {domain}: max {:.3} ulp from std at {:e}, {} special failures",
                    op.name(),
                    t.max_ulp,
                    f64::from_bits(t.at),
                    t.specials()
                );
                if t.max_ulp > bound_f64(op, fma) || t.specials() > 0 {
                    failures.push(format!(
                        "native {} f64 {level:?} {domain}: {t:?}",
                        op.name()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// `x` at every position of a buffer long enough for the vector body and a
/// scalar tail, and also between small values in the same vector.
fn placements<T: Copy>(x: T, small: T) -> Vec<T> {
    let mut v = vec![x; 19];
    v.extend([small, x, small, small, small, small, x, small, small]);
    v
}

/// sin and cos of huge arguments (the slow path) and of ±0, ±inf, NaN match
/// Rust std: exactly for the special values, within 1 ulp otherwise, in the
/// vector body and the scalar tail, on both ISAs.
#[test]
fn sin_cos_full_range_pinned() {
    let f32s = [
        1e4f32,
        1e10,
        1e20,
        1e30,
        f32::MAX,
        134_217_728.0,
        134_217_736.0,
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(1),
        -f32::MIN_POSITIVE,
    ];
    let f64s = [
        1e100f64,
        1e300,
        f64::MAX,
        1e22,
        1_048_576.0,
        1_048_576.000_000_1,
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::from_bits(1),
        -f64::MIN_POSITIVE,
    ];
    for (level, isa) in levels() {
        for op in [UnaryOp::Sin, UnaryOp::Cos] {
            let jit = UnaryFn::<f32>::compile(op, level);
            for x in f32s.iter().flat_map(|x| [*x, -*x]) {
                let xs = placements(x, 0.75);
                let mut y = vec![0f32; xs.len()];
                jit.run(&xs, &mut y);
                for (i, (x, y)) in xs.iter().zip(&y).enumerate() {
                    let want = reference(op, *x as f64) as f32;
                    // NaN, infinities and signed zeros must match exactly.
                    let ok = matches!(error_f32(op, *x, *y), Ok(e) if e <= 1.0);
                    assert!(
                        ok,
                        "{} f32 {isa} at [{i}] of {x:e}: {y:e}, std {want:e}",
                        op.name()
                    );
                }
            }
            let jit = UnaryFn::<f64>::compile(op, level);
            for x in f64s.iter().flat_map(|x| [*x, -*x]) {
                let xs = placements(x, 0.75);
                let mut y = vec![0f64; xs.len()];
                jit.run(&xs, &mut y);
                for (i, (x, y)) in xs.iter().zip(&y).enumerate() {
                    let want = reference(op, *x);
                    let ok = matches!(error_f64(op, *x, *y), Ok(e) if e <= 1.0);
                    assert!(
                        ok,
                        "{} f64 {isa} at [{i}] of {x:e}: {y:e}, std {want:e}",
                        op.name()
                    );
                }
            }
        }
    }
    // Subnormals: sin x = x exactly.
    let jit = UnaryFn::<f32>::compile(UnaryOp::Sin, None);
    let xs = placements(f32::from_bits(0x0000_1234), -f32::from_bits(7));
    let mut y = vec![0f32; xs.len()];
    jit.run(&xs, &mut y);
    assert_eq!(xs, y);
}

/// Object files (what the build helper links into the user's crate) import
/// the slow-path helpers by name at both ISA levels, for the linker to
/// resolve from this crate (`oxla_cpu_sin_f32` etc. are `#[no_mangle]`).
#[test]
fn object_files_import_the_sin_cos_helpers() {
    let kernels = [
        unary_kernel(UnaryOp::Sin, DType::F32),
        unary_kernel(UnaryOp::Cos, DType::F64),
    ];
    for level in IsaLevel::ALL {
        let bytes = oxla_cpu::emit_object(&kernels, level).expect("object");
        for name in ["oxla_cpu_sin_f32", "oxla_cpu_cos_f64"] {
            assert!(
                bytes.windows(name.len()).any(|w| w == name.as_bytes()),
                "{name} not in the {level:?} object"
            );
        }
    }
    // The helpers are the std functions, rounded once for f32.
    assert_eq!(
        oxla_cpu::oxla_cpu_sin_f32(1e30),
        (1e30f32 as f64).sin() as f32
    );
    assert_eq!(oxla_cpu::oxla_cpu_cos_f64(1e300), (1e300f64).cos());
}

/// tanh where the old `1 - 2/(e^{2|x|}+1)` cancelled (result below 0.5,
/// |x| < 0.5493) and just above: every f32 with |x| in [0.25, 0.75] within
/// the table's 0.509 ulp, and every 1009th pattern below 2^-10 (tiny, subnormal,
/// ±0) rounded once from an f64 result (0.5 ulp plus the reference's own
/// error), on both ISAs; f64 densely over [2^-30, 1] within the table's
/// bound.
#[test]
fn tanh_where_the_result_is_below_one_half() {
    let mut failures = vec![];
    for (level, isa) in levels() {
        let jit = UnaryFn::<f32>::compile(UnaryOp::Tanh, level);
        let ranges = [
            (0.25f32, 0.75f32, 1, bound_f32(UnaryOp::Tanh, false)),
            (0.0, 2f32.powi(-10), 1009, 0.501),
        ];
        for (lo, hi, step, bound) in ranges {
            let xs: Vec<f32> = (lo.to_bits()..=hi.to_bits())
                .step_by(step)
                .map(f32::from_bits)
                .flat_map(|x| [x, -x])
                .collect();
            let mut y = vec![0f32; xs.len()];
            jit.run(&xs, &mut y);
            let mut t = Tally::default();
            for (x, y) in xs.iter().zip(&y) {
                t.add(x.to_bits() as u64, error_f32(UnaryOp::Tanh, *x, *y));
            }
            eprintln!(
                "tanh f32 {isa:>8} [{lo:e}, {hi:e}]: max {:.3} ulp at {:e}",
                t.max_ulp,
                f32::from_bits(t.at as u32)
            );
            if t.max_ulp > bound || t.specials() > 0 {
                failures.push(format!("f32 {isa} [{lo:e}, {hi:e}]: {t:?}"));
            }
        }

        let jit = UnaryFn::<f64>::compile(UnaryOp::Tanh, level);
        // Log-uniform: every binade from 2^-30 to 1 equally.
        let mut rng = SplitMix(3);
        let xs: Vec<f64> = (0..200_000)
            .map(|i| {
                let x = (rng.uniform(-30.0, 0.0) * std::f64::consts::LN_2).exp();
                if i % 2 == 0 {
                    x
                } else {
                    -x
                }
            })
            .collect();
        let t = measure_f64(UnaryOp::Tanh, &jit, &xs);
        eprintln!(
            "tanh f64 {isa:>8} [2^-30, 1]: max {:.3} ulp at {:e}",
            t.max_ulp,
            f64::from_bits(t.at)
        );
        let fma = level.is_none() && host_is_fma();
        if t.max_ulp > bound_f64(UnaryOp::Tanh, fma) || t.specials() > 0 {
            failures.push(format!("f64 {isa}: {t:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The measurement itself cannot miss a bad output: a NaN where std has a
/// number (which `NaN > worst` alone would skip), a wrong infinity and a
/// zero of the wrong sign are each counted, and a NaN expected is no error.
#[test]
fn the_error_measure_counts_nan_infinity_and_signed_zero() {
    let mut t = Tally::default();
    t.add(1, error_f32(UnaryOp::Exp, 1.0, f32::NAN));
    t.add(2, error_f32(UnaryOp::Exp, 100.0, 3.0e38));
    t.add(3, error_f32(UnaryOp::Exp, 1.0, f32::INFINITY));
    t.add(4, error_f32(UnaryOp::Sin, -0.0, 0.0));
    t.add(5, error_f64(UnaryOp::Log, 2.0, f64::NAN));
    assert_eq!((t.nan, t.inf, t.zero_sign), (2, 2, 1), "{t:?}");
    assert_eq!(t.specials(), 5);
    assert_eq!(error_f32(UnaryOp::Log, -1.0, f32::NAN), Ok(0.0));
    assert_eq!(error_f32(UnaryOp::Sin, -0.0, -0.0), Ok(0.0));
    // One ulp off is measured as one ulp.
    let y = 1f32.exp();
    let next = f32::from_bits(y.to_bits() + 1);
    let e = error_f32(UnaryOp::Exp, 1.0, next).unwrap();
    assert!((0.5..=1.5).contains(&e), "{e}");
}
