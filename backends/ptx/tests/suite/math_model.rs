//! A host model of the PTX f32 `log` (`math::log_f32`), checked against
//! Rust `std`: the model performs the emitted instructions one for one (the
//! same constants, read from [`oxla_ptx::log_f32_consts`] as the emitter
//! does; `f32::mul_add` for `fma.rn.f32`, `/` for `div.rn.f32`), so its
//! error is the GPU's. The GPU itself is measured by `oxla-cuda`'s
//! `gpu_check`.
//!
//! The sweep covers both sides of 1 exhaustively (where `lg2.approx` was
//! 24·10⁶ ulp off), the switch points of the mantissa reduction, the
//! subnormals, the smallest and largest normals and a stride over the whole
//! positive range: ~5·10⁶ inputs, under half a second in a debug build.

use oxla_ptx::log_f32_consts as c;
use oxla_ptx::{emit_kernel, samples, Arch};

/// The PTX `log_f32`, operation by operation (the comments name the PTX).
fn log_f32_model(x: f32) -> f32 {
    // setp.lt / mul.rn / selp: subnormals scaled by 2^23.
    let tiny = x < f32::MIN_POSITIVE;
    let xs = if tiny { x * c::SUBNORMAL_SCALE } else { x };
    let eadj: i32 = if tiny {
        -127 - c::SUBNORMAL_SHIFT
    } else {
        -127
    };
    // add.s32 / shr.u32 / and.b32 / add.s32 / cvt.rn.f32.s32
    let ix = xs.to_bits().wrapping_add(c::ONE_BITS - c::SQRT_HALF_BITS);
    let e = ((ix >> 23) as i32).wrapping_add(eadj);
    let m = f32::from_bits((ix & ((1 << 23) - 1)) + c::SQRT_HALF_BITS);
    let ef = e as f32;
    // sub.rn / add.rn / div.rn / mul.rn
    let f = m - 1.0;
    let den = f + 2.0;
    let s = f / den;
    let z = s * s;
    // horner: mov then fma.rn from the highest coefficient down.
    let mut p = c::SERIES[c::SERIES.len() - 1];
    for &k in c::SERIES[..c::SERIES.len() - 1].iter().rev() {
        p = p.mul_add(z, k);
    }
    let r = z * p;
    let hf = f * 0.5;
    let hfsq = hf * f;
    let hr = hfsq + r;
    let lo = ef * c::LN2_LO;
    let t = s.mul_add(hr, lo);
    let corr = hfsq - t;
    let lm = f - corr;
    let mut y = ef.mul_add(c::LN2_HI, lm);
    // The selects, in the emitted order (the last one wins).
    if x == f32::INFINITY {
        y = x;
    }
    if x == 0.0 {
        y = f32::NEG_INFINITY;
    }
    if x < 0.0 {
        y = f32::NAN;
    }
    if x.is_nan() {
        y = x;
    }
    y
}

/// Representable f32 values between `a` and `b` (`u32::MAX` when exactly
/// one is NaN), as `gpu_check` counts them.
fn ulps(a: f32, b: f32) -> u32 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u32::MAX
        };
    }
    let key = |v: f32| -> i64 {
        let b = v.to_bits() as i32 as i64;
        if b < 0 {
            i32::MIN as i64 - b
        } else {
            b
        }
    };
    key(a).abs_diff(key(b)) as u32
}

/// The error of `got` in ulp of the exact `want` (fractional: 0.5 is the
/// correctly rounded result), the ulp being that of f32 at `want`.
fn frac_ulps(got: f32, want: f64) -> f64 {
    let r = want as f32;
    let ulp = if r.is_finite() && r != 0.0 {
        let up = f32::from_bits(r.abs().to_bits() + 1) as f64;
        up - r.abs() as f64
    } else {
        f32::from_bits(1) as f64
    };
    (got as f64 - want).abs() / ulp
}

struct Worst {
    name: &'static str,
    count: usize,
    ulps: u32,
    frac: f64,
    at: f32,
}

fn sweep(name: &'static str, bits: impl Iterator<Item = u32>) -> Worst {
    let mut w = Worst {
        name,
        count: 0,
        ulps: 0,
        frac: 0.0,
        at: f32::NAN,
    };
    for b in bits {
        let x = f32::from_bits(b);
        let want = (x as f64).ln();
        let got = log_f32_model(x);
        let u = ulps(got, want as f32);
        let fr = frac_ulps(got, want);
        w.count += 1;
        if u > w.ulps || (u == w.ulps && fr > w.frac) {
            (w.ulps, w.frac, w.at) = (u, fr, x);
        }
    }
    w
}

#[test]
fn log_f32_model_within_2_ulp_of_std() {
    let one = 1f32.to_bits();
    let sqrt_half = c::SQRT_HALF_BITS;
    let sqrt_two = (2f32.sqrt()).to_bits();
    let inf = f32::INFINITY.to_bits();
    let min_normal = f32::MIN_POSITIVE.to_bits();
    let cpu_worst = 1.406_655_2_f32.to_bits();
    let regions = [
        // [1 − 2⁻⁴, 1) and [1, 1 + 2⁻³): every f32.
        sweep("below 1 (all 2^20)", one - (1 << 20)..one),
        sweep("above 1 (all 2^20)", one..one + (1 << 20)),
        // The mantissa reduction's switch points, and the binade edges.
        sweep(
            "near sqrt(1/2), sqrt(2), 2, 1/2",
            (sqrt_half - 4096..sqrt_half + 4096)
                .chain(sqrt_two - 4096..sqrt_two + 4096)
                .chain(2f32.to_bits() - 4096..2f32.to_bits() + 4096)
                .chain(0.5f32.to_bits() - 4096..0.5f32.to_bits() + 4096),
        ),
        // The smallest subnormals exhaustively, then every 13th.
        sweep(
            "subnormal",
            (1..1 << 16).chain(((1 << 16)..min_normal).step_by(13)),
        ),
        // The CPU backend's worst input over all 2³² (0.854 ulp there):
        // the model is the same computation, so it must find it too.
        sweep("around 1.4066552", cpu_worst - 4096..cpu_worst + 4096),
        sweep("smallest normals", min_normal..min_normal + (1 << 16)),
        sweep("largest finite", inf - (1 << 16)..inf),
        // Everything else, strided (an odd stride reaches every mantissa
        // residue class).
        sweep("all positive, every 1021st", (1..inf).step_by(1021)),
    ];
    println!("| region | inputs | worst ulp (vs std rounded) | worst ulp (exact) | at x |");
    println!("|---|---|---|---|---|");
    for w in &regions {
        println!(
            "| {} | {} | {} | {:.3} | {:e} |",
            w.name, w.count, w.ulps, w.frac, w.at
        );
    }
    // The CPU's measured maximum, reproduced to the last digit it prints.
    let w = &regions[4];
    assert!(
        (w.frac - 0.8535).abs() < 1e-4,
        "{} ulp at {:e}",
        w.frac,
        w.at
    );
    for w in &regions {
        assert!(
            w.ulps <= 2,
            "{}: {} ulp at x = {:e} (model {:e}, std {:e})",
            w.name,
            w.ulps,
            w.at,
            log_f32_model(w.at),
            (w.at as f64).ln() as f32
        );
    }
}

#[test]
fn log_f32_model_special_values_are_exact() {
    let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    let cases = [
        (0.0, f32::NEG_INFINITY),
        (-0.0, f32::NEG_INFINITY),
        (f32::INFINITY, f32::INFINITY),
        (f32::NEG_INFINITY, f32::NAN),
        (-1.0, f32::NAN),
        (-f32::MIN_POSITIVE, f32::NAN),
        (-f32::from_bits(1), f32::NAN),
        (f32::NAN, f32::NAN),
        (1.0, 0.0),
        (2.0, std::f32::consts::LN_2),
        (f32::from_bits(1), (f32::from_bits(1) as f64).ln() as f32),
        (f32::MAX, (f32::MAX as f64).ln() as f32),
    ];
    for (x, want) in cases {
        let got = log_f32_model(x);
        assert!(same(got, want), "log({x:e}) = {got:e}, want {want:e}");
    }
    // log(1) is +0, not -0.
    assert_eq!(log_f32_model(1.0).to_bits(), 0);
    // A NaN's payload passes through, as the `selp` returns the input.
    let payload = f32::from_bits(0x7fc0_1234);
    assert_eq!(log_f32_model(payload).to_bits(), payload.to_bits());
}

/// The emitted f32 `log` uses no hardware approximation and carries every
/// constant the model reads, as exact hexadecimal immediates.
#[test]
fn emitted_log_f32_matches_the_model_constants() {
    let k = samples::all()
        .into_iter()
        .find(|k| k.name == "unary_log_f32")
        .expect("sample unary_log_f32");
    let ptx = emit_kernel(&k, Arch::Sm80).unwrap();
    assert!(
        !ptx.contains(".approx"),
        "an approximate instruction:\n{ptx}"
    );
    let imm = |v: f32| format!("0f{:08X}", v.to_bits());
    for v in [c::LN2_HI, c::LN2_LO, c::SUBNORMAL_SCALE]
        .into_iter()
        .chain(c::SERIES)
    {
        assert!(ptx.contains(&imm(v)), "{} missing:\n{ptx}", imm(v));
    }
    for text in [
        "div.rn.f32",
        &format!("{}", c::ONE_BITS - c::SQRT_HALF_BITS),
        &format!("{}", c::SQRT_HALF_BITS),
    ] {
        assert!(ptx.contains(text), "`{text}` missing:\n{ptx}");
    }
    // The polynomial and the two fused steps: one fma per coefficient but
    // the first, plus `s·hr + lo` and `e·ln2_hi + ln m`.
    assert_eq!(
        ptx.matches("fma.rn.f32").count(),
        c::SERIES.len() - 1 + 2,
        "{ptx}"
    );
}
