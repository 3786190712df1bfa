// The math and reduction helpers of native kernels (see `native/mod.rs`).
//
// This file is both a module of `oxla-cpu` (so its functions are tested
// directly) and, verbatim, the head of every generated kernel source, which
// rustc compiles once per ISA level. So it uses `core` only, never panics
// (no indexing that could fail, no overflow checks needed), and branches
// only where LLVM turns them into selects: the same algorithms as the
// Cranelift emitters of `math.rs` (range reduction plus a polynomial, the
// 1.5·2^p rounding trick, integers moved through the bits), written as
// scalar Rust that the loop vectorizer widens to the ISA's full width.
// `fma` is one instruction where the ISA has it (a `cfg!` of the crate being
// compiled) and a multiply and an add elsewhere.

#![allow(dead_code, clippy::excessive_precision, clippy::approx_constant)]

#[inline(always)]
pub fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    if cfg!(target_feature = "fma") {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

#[inline(always)]
pub fn fma_f64(a: f64, b: f64, c: f64) -> f64 {
    if cfg!(target_feature = "fma") {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// `1/k!` for k in 0..N, as f64 (the Taylor coefficients of e^x).
const fn inverse_factorials<const N: usize>() -> [f64; N] {
    let mut c = [0.0; N];
    let mut k = 0;
    while k < N {
        let mut fact = 1.0;
        let mut j = 1;
        while j <= k {
            fact *= j as f64;
            j += 1;
        }
        c[k] = 1.0 / fact;
        k += 1;
    }
    c
}

const INV_FACT: [f64; 14] = inverse_factorials::<14>();

/// `c[from] + x·(c[from+1] + x·(… c[to]))` of the Taylor coefficients
/// `INV_FACT`, by Horner's rule, in f64.
#[inline(always)]
fn taylor_f64(x: f64, from: usize, to: usize) -> f64 {
    let mut acc = INV_FACT[to];
    let mut k = to;
    while k > from {
        k -= 1;
        acc = fma_f64(acc, x, INV_FACT[k]);
    }
    acc
}

const MAGIC_F32: f32 = 12_582_912.0; // 1.5·2^23
const MAGIC_F64: f64 = 6_755_399_441_055_744.0; // 1.5·2^52
const LN2_HI_F32: f32 = 0.693_359_375;
const LN2_LO_F32: f32 = -2.121_944_4e-4;
const LN2_HI_F64: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO_F64: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);

/// Round to the nearest integer (ties to even), |x| < 2^51.
#[inline(always)]
fn round_f64(x: f64) -> f64 {
    (x + MAGIC_F64) - MAGIC_F64
}

/// 2^n for a float `n` holding an integer in the normal exponent range.
#[inline(always)]
fn pow2_f64(n: f64) -> f64 {
    let biased = (n + (MAGIC_F64 + 1023.0))
        .to_bits()
        .wrapping_sub(MAGIC_F64.to_bits());
    f64::from_bits(biased << 52)
}

/// `mag` (non-negative) with the sign bit of `sign`.
#[inline(always)]
fn with_sign_of_f32(mag: f32, sign: f32) -> f32 {
    f32::from_bits(mag.to_bits() | (sign.to_bits() & 0x8000_0000))
}

#[inline(always)]
fn with_sign_of_f64(mag: f64, sign: f64) -> f64 {
    f64::from_bits(mag.to_bits() | (sign.to_bits() & 0x8000_0000_0000_0000))
}

/// `c[0] + x·(c[1] + x·(… c[N-1]))` by Horner's rule, in f32.
#[inline(always)]
fn horner_f32<const N: usize>(x: f32, c: &[f32; N]) -> f32 {
    let mut acc = c[N - 1];
    let mut k = N - 1;
    while k > 0 {
        k -= 1;
        acc = fma_f32(acc, x, c[k]);
    }
    acc
}

// Coefficients fitted by `backends/cpu/tools/fit_native_math.py` (weighted
// least squares iterated to the minimax relative error, each coefficient
// rounded to f32 and the rest refitted), so that f32 arithmetic with FMA
// suffices: the f64 lanes the Cranelift kernels use halve the vector width.

/// e^r ≈ 1 + r + c₂r² + … + c₆r⁶ on |r| ≤ ln2/2: relative error 3.2·10⁻⁹.
const EXP_F32_DEG6: [f32; 7] = [
    1.0,
    1.0,
    0.4999999403953552,
    0.1666652262210846,
    0.041668299585580826,
    0.008368530310690403,
    0.0013817490544170141,
];

/// As `EXP_F32_DEG6`, degree 5: relative error 1.05·10⁻⁷ (for `tanh`).
const EXP_F32_DEG5: [f32; 6] = [
    1.0,
    1.0,
    0.499992311000824,
    0.16667111217975616,
    0.041890162974596024,
    0.008312848396599293,
];

/// tanh a ≈ a + a·t·S(t), t = a², S of degree 6 on 0 ≤ a ≤ 1: relative
/// error 4.7·10⁻⁹.
const TANH_F32_ODD: [f32; 7] = [
    -0.33333295583724976,
    0.13332347571849823,
    -0.0538799948990345,
    0.021487222984433174,
    -0.007946949452161789,
    0.0023019846994429827,
    -0.00035863081575371325,
];

/// `p·2^k` for p in [½, 2) and -150 ≤ k ≤ 129, correctly rounded: k + m
/// is added to p's exponent field (m = 64 where k < 0 and -64 elsewhere,
/// so that product stays normal) and one multiply by 2^-m rounds a
/// subnormal result once or overflows to inf. Integer work only, but for
/// that multiply: the float pipes are the kernels' bottleneck.
#[inline(always)]
fn scale_pow2_f32(p: f32, k: i32) -> f32 {
    let negative = k >> 31; // all ones where k < 0
    let km = k - 64 + (negative & 128);
    let y = f32::from_bits(p.to_bits().wrapping_add((km as u32) << 23));
    let two_to_minus_m =
        f32::from_bits((191u32 << 23).wrapping_sub((negative & (128 << 23)) as u32));
    y * two_to_minus_m
}

/// `e^x`: x = k·ln2 + r, |r| ≤ ln2/2 (k from the 1.5·2^23 rounding trick,
/// whose low bits also give k as an integer), e^r by `EXP_F32_DEG6`, times
/// 2^k by `scale_pow2_f32`. x is clamped to [-104, 89], where the result
/// is 0 or inf; NaN is passed through (the bit arithmetic would lose it).
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    let xc = if x > 89.0 { 89.0 } else { x };
    let xc = if xc < -104.0 { -104.0 } else { xc };
    let t = fma_f32(xc, core::f32::consts::LOG2_E, MAGIC_F32);
    let k = t - MAGIC_F32;
    let r = fma_f32(-k, LN2_HI_F32, xc);
    let r = fma_f32(-k, LN2_LO_F32, r);
    let p = horner_f32(r, &EXP_F32_DEG6);
    let y = scale_pow2_f32(p, t.to_bits().wrapping_sub(MAGIC_F32.to_bits()) as i32);
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// `e^x` in f64: as `exp_f32`, degree 12, ln2 in fdlibm's two pieces.
#[inline(always)]
pub fn exp_f64(x: f64) -> f64 {
    let x = if x > 710.0 { 710.0 } else { x };
    let x = if x < -746.0 { -746.0 } else { x };
    let k = round_f64(x * core::f64::consts::LOG2_E);
    let r = x - k * LN2_HI_F64;
    let r = r - k * LN2_LO_F64;
    let e_r = taylor_f64(r, 0, 12);
    let k1 = round_f64(k * 0.5);
    let k2 = k - k1;
    e_r * pow2_f64(k1) * pow2_f64(k2)
}

/// `ln x`: x = m·2^e with m in [√½, √2), ln m = 2·atanh(s), s = (m-1)/(m+1),
/// by its odd series (to s^9); subnormals are scaled first. Negative x gives
/// NaN, 0 gives -inf, inf gives inf.
#[inline(always)]
pub fn log_f32(x: f32) -> f32 {
    let tiny = x < f32::MIN_POSITIVE;
    let xs = if tiny { x * 8_388_608.0 } else { x };
    let e_adj = if tiny { -23.0 - 127.0 } else { -127.0 };
    const SQRT_HALF: u32 = 0x3f35_04f3;
    let ix = xs
        .to_bits()
        .wrapping_add((127u32 << 23).wrapping_sub(SQRT_HALF));
    let m = f32::from_bits((ix & 0x007f_ffff).wrapping_add(SQRT_HALF));
    let e = (ix >> 23) as i32 as f32 + e_adj;
    let f = m - 1.0;
    let s = f / (f + 2.0);
    let z = s * s;
    let mut series = (2.0 / 9.0) as f32;
    series = fma_f32(series, z, (2.0 / 7.0) as f32);
    series = fma_f32(series, z, (2.0 / 5.0) as f32);
    series = fma_f32(series, z, (2.0 / 3.0) as f32);
    let r = z * series;
    let hfsq = (f * 0.5) * f;
    let t = fma_f32(s, hfsq + r, e * LN2_LO_F32);
    let y = fma_f32(e, LN2_HI_F32, f - (hfsq - t));
    let y = if x == f32::INFINITY { x } else { y };
    let y = if x == 0.0 { f32::NEG_INFINITY } else { y };
    let y = if x < 0.0 { f32::NAN } else { y };
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// `ln x` in f64: as `log_f32`, series to s^19.
#[inline(always)]
pub fn log_f64(x: f64) -> f64 {
    let tiny = x < f64::MIN_POSITIVE;
    let xs = if tiny { x * 4_503_599_627_370_496.0 } else { x };
    let e_adj = if tiny { -52.0 - 1023.0 } else { -1023.0 };
    const SQRT_HALF: u64 = 0x3fe6_a09e_667f_3bcd;
    let ix = xs
        .to_bits()
        .wrapping_add((1023u64 << 52).wrapping_sub(SQRT_HALF));
    let m = f64::from_bits((ix & 0x000f_ffff_ffff_ffff).wrapping_add(SQRT_HALF));
    // The exponent (< 2^12) to float through the bits, as the baseline ISA
    // has no vector i64 -> f64 conversion.
    let e = f64::from_bits((ix >> 52).wrapping_add(MAGIC_F64.to_bits())) - MAGIC_F64 + e_adj;
    let f = m - 1.0;
    let s = f / (f + 2.0);
    let z = s * s;
    let mut series = 2.0 / 19.0;
    let mut k = 8;
    while k >= 1 {
        series = fma_f64(series, z, 2.0 / (2 * k + 1) as f64);
        k -= 1;
    }
    let r = z * series;
    let hfsq = (f * 0.5) * f;
    let t = fma_f64(s, hfsq + r, e * LN2_LO_F64);
    let y = fma_f64(e, LN2_HI_F64, f - (hfsq - t));
    let y = if x == f64::INFINITY { x } else { y };
    let y = if x == 0.0 { f64::NEG_INFINITY } else { y };
    let y = if x < 0.0 { f64::NAN } else { y };
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// e^y - 1 for -45 ≤ y ≤ 40 in f64: y = k·ln2 + r, e^r - 1 = r + r²·(1/2! +
/// …) (degree 8 where an f32 result is wanted, 13 otherwise), then
/// 2^k·(e^r - 1) + (2^k - 1) (see `math::expm1_core` for the error analysis).
#[inline(always)]
fn expm1_core(y: f64, for_f32: bool) -> f64 {
    let k = round_f64(y * core::f64::consts::LOG2_E);
    let (r, q) = if for_f32 {
        let r = fma_f64(k, -core::f64::consts::LN_2, y);
        (r, taylor_f64(r, 2, 8))
    } else {
        let r = (y - k * LN2_HI_F64) - k * LN2_LO_F64;
        (r, taylor_f64(r, 2, 13))
    };
    let em1_r = fma_f64(r * r, q, r);
    let s = pow2_f64(k);
    fma_f64(s, em1_r, s - 1.0)
}

#[inline(always)]
fn expm1_all(x: f64, for_f32: bool) -> f64 {
    let above = x > 40.0;
    let xc = if above { 40.0 } else { x };
    let xc = if xc < -45.0 { -45.0 } else { xc };
    let core = expm1_core(xc, for_f32);
    let y = if above { exp_f64(x) } else { core };
    if x.abs() < 5.551_115_123_125_783e-17 {
        x
    } else {
        y
    }
}

/// `e^x - 1`, in f64 lanes and rounded once.
#[inline(always)]
pub fn expm1_f32(x: f32) -> f32 {
    expm1_all(x as f64, true) as f32
}

#[inline(always)]
pub fn expm1_f64(x: f64) -> f64 {
    expm1_all(x, false)
}

/// `tanh x` for f32, in f32 lanes, a = |x|: below 1, `TANH_F32_ODD`
/// (the final FMA adds a correction under a third of a, so its error stays
/// near half an ulp); from 1 on, 1 - w with w = 2/(1 + e^{2a}) ≤ 0.24,
/// whose own few-ulp error (a one-part ln2 and `EXP_F32_DEG5` are enough:
/// 2 ≤ 2a ≤ 18.2 needs no clamp or subnormal scaling) shrinks fourfold in
/// the result. Both are computed and one selected, so there is no branch.
/// a is clamped at 9.1, where tanh rounds to 1 (±inf gives ±1); NaN fails
/// `a >= 1` and takes the polynomial, which keeps it; ±0 and subnormals
/// come out unchanged. 1.2 ulp at most (see the native math tests).
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let a = x.abs();
    let a = if a > 9.1 { 9.1 } else { a };
    let t = a * a;
    let small = fma_f32(a * t, horner_f32(t, &TANH_F32_ODD), a);
    let a2 = a + a;
    let tt = fma_f32(a2, core::f32::consts::LOG2_E, MAGIC_F32);
    let k = tt - MAGIC_F32;
    let r = fma_f32(-k, core::f32::consts::LN_2, a2);
    let k_bits = tt.to_bits().wrapping_sub(MAGIC_F32.to_bits()) << 23;
    let e = f32::from_bits(horner_f32(r, &EXP_F32_DEG5).to_bits().wrapping_add(k_bits));
    let large = 1.0 - 2.0 / (1.0 + e);
    let y = if a >= 1.0 { large } else { small };
    with_sign_of_f32(y, x)
}

/// `tanh x` in f64: copysign(E/(E + 2), x), E = e^{2|x|} - 1 without
/// cancellation (`expm1_core`), |x| clamped at 20 (±inf gives ±1), and x
/// itself below 2^-27.
#[inline(always)]
pub fn tanh_f64(x: f64) -> f64 {
    let a = x.abs();
    let a = if a > 20.0 { 20.0 } else { a };
    let e = expm1_core(a + a, false);
    let y = with_sign_of_f64(e / (e + 2.0), x);
    if a < 7.450_580_596_923_828e-9 {
        x
    } else {
        y
    }
}

// fdlibm's `erf` (`s_erf.c`, Copyright (C) 1993 by Sun Microsystems, Inc.;
// "Permission to use, copy, modify, and distribute this software is freely
// granted, provided that this notice is preserved."): the coefficients of
// `oxla_core::ops::erf` (which has the method), copied because this file is
// compiled without `oxla-core`; a test checks that the copies are equal.
pub const ERF_ERX: f64 = 8.45062911510467529297e-01;
pub const ERF_NEAR_FAR: u64 = 0x4006_db6d_0000_0000;
pub const ERF_PP: [f64; 5] = [
    1.28379167095512558561e-01,
    -3.25042107247001499370e-01,
    -2.84817495755985104766e-02,
    -5.77027029648944159157e-03,
    -2.37630166566501626084e-05,
];
pub const ERF_QQ: [f64; 6] = [
    1.0,
    3.97917223959155352819e-01,
    6.50222499887672944485e-02,
    5.08130628187576562776e-03,
    1.32494738004321644526e-04,
    -3.96022827877536812320e-06,
];
pub const ERF_PA: [f64; 7] = [
    -2.36211856075265944077e-03,
    4.14856118683748331666e-01,
    -3.72207876035701323847e-01,
    3.18346619901161753674e-01,
    -1.10894694282396677476e-01,
    3.54783043256182359371e-02,
    -2.16637559486879084300e-03,
];
pub const ERF_QA: [f64; 7] = [
    1.0,
    1.06420880400844228286e-01,
    5.40397917702171048937e-01,
    7.18286544141962662868e-02,
    1.26171219808761642112e-01,
    1.36370839120290507362e-02,
    1.19844998467991074170e-02,
];
pub const ERF_RA: [f64; 8] = [
    -9.86494403484714822705e-03,
    -6.93858572707181764372e-01,
    -1.05586262253232909814e+01,
    -6.23753324503260060396e+01,
    -1.62396669462573470355e+02,
    -1.84605092906711035994e+02,
    -8.12874355063065934246e+01,
    -9.81432934416914548592e+00,
];
pub const ERF_SA: [f64; 9] = [
    1.0,
    1.96512716674392571292e+01,
    1.37657754143519042600e+02,
    4.34565877475229228821e+02,
    6.45387271733267880336e+02,
    4.29008140027567833386e+02,
    1.08635005541779435134e+02,
    6.57024977031928170135e+00,
    -6.04244152148580987438e-02,
];
pub const ERF_RB: [f64; 7] = [
    -9.86494292470009928597e-03,
    -7.99283237680523006574e-01,
    -1.77579549177547519889e+01,
    -1.60636384855821916062e+02,
    -6.37566443368389627722e+02,
    -1.02509513161107724954e+03,
    -4.83519191608651397019e+02,
];
pub const ERF_SB: [f64; 8] = [
    1.0,
    3.03380607434824582924e+01,
    3.25792512996573918826e+02,
    1.53672958608443695994e+03,
    3.19985821950859553908e+03,
    2.55305040643316442583e+03,
    4.74528541206955367215e+02,
    -2.24409524465858183362e+01,
];

/// `c[0] + x·(c[1] + x·(… c[N-1]))` by Horner's rule, in f64.
#[inline(always)]
fn horner_f64<const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    let mut acc = c[N - 1];
    let mut k = N - 1;
    while k > 0 {
        k -= 1;
        acc = fma_f64(acc, x, c[k]);
    }
    acc
}

/// `erf x` by fdlibm's method, as the Cranelift kernels compute it: every
/// range evaluated and the right one selected, so that it vectorizes. NaN
/// gives NaN, ±inf gives ±1, -0 stays -0 (`x + x·y`).
#[inline(always)]
pub fn erf_f64(x: f64) -> f64 {
    let a = x.abs();
    // |x| < 0.84375
    let z = x * x;
    let small = fma_f64(x, horner_f64(z, &ERF_PP) / horner_f64(z, &ERF_QQ), x);
    // |x| < 1.25
    let s = a - 1.0;
    let mid = ERF_ERX + horner_f64(s, &ERF_PA) / horner_f64(s, &ERF_QA);
    // |x| < 6
    let s = 1.0 / (a * a);
    let near = a < f64::from_bits(ERF_NEAR_FAR);
    let ra = horner_f64(s, &ERF_RA);
    let rb = horner_f64(s, &ERF_RB);
    let sa = horner_f64(s, &ERF_SA);
    let sb = horner_f64(s, &ERF_SB);
    let r = if near { ra } else { rb };
    let q = if near { sa } else { sb };
    let z = f64::from_bits(a.to_bits() & 0xffff_ffff_0000_0000);
    let e = exp_f64(-(z * z) - 0.5625) * exp_f64((z - a) * (z + a) + r / q) / a;
    let far = 1.0 - e;
    let mag = if a < 6.0 { far } else { 1.0 };
    let mag = if a < 1.25 { mid } else { mag };
    let signed = with_sign_of_f64(mag, x);
    let y = if a < 0.84375 { small } else { signed };
    if x.is_nan() {
        x
    } else {
        y
    }
}

// Fitted by `backends/cpu/tools/fit_native_math.py`, in f64: far below an
// f32 ulp, so that f32 erf needs neither fdlibm's ranges nor its divisions.
/// erf(a)/a in a², 0 < a <= 1: relative error 3.32e-11.
const ERF_F32_SMALL: [f64; 8] = [
    1.1283791670580203,
    -0.3761263843461658,
    0.11283781973406733,
    -0.026865399992256397,
    0.005220945268102056,
    -0.0008482826105530611,
    0.00011256925619821093,
    -9.641445605516471e-06,
];
/// erfc(a) e^(a²) in a - 2.5, 1 <= a <= 4: relative error 2.78e-11.
const ERFCX_F32: [f64; 16] = [
    0.21080636405541336,
    -0.07434734680102074,
    0.0249379974194125,
    -0.008001569244570923,
    0.0024670336676092253,
    -0.0007335912695438594,
    0.0002110310865496183,
    -5.886925067562236e-05,
    1.5942226631108957e-05,
    -4.2123774084290475e-06,
    1.1035945433631733e-06,
    -2.7559279631374585e-07,
    5.779058250081982e-08,
    -1.4526348098681907e-08,
    6.186260255538284e-09,
    -1.358012309867643e-09,
];

/// `erf x` in f32, computed in f64 (where `a²` is exact) and rounded once:
/// `a·P(a²)` below 1 and `1 − e^{−a²}·erfcx(a)` above, with `a` clamped at
/// 4 (erf rounds to 1 in f32 from 3.92). One exp and no division, against
/// two exps and five divisions of the f64 method; within 0.5 ulp plus the
/// fits' 3·10⁻¹¹ (see the native math tests). Not the Cranelift kernels'
/// method (fdlibm's in f64 lanes), whose results it matches within that.
#[inline(always)]
pub fn erf_f32(x: f32) -> f32 {
    let d = x as f64;
    let a = d.abs();
    let a = if a > 4.0 { 4.0 } else { a };
    let s = a * a;
    let small = a * horner_f64(s, &ERF_F32_SMALL);
    let large = 1.0 - exp_f64(-s) * horner_f64(a - 2.5, &ERFCX_F32);
    let mag = if a < 1.0 { small } else { large };
    let y = with_sign_of_f64(mag, d) as f32;
    if x.is_nan() {
        x
    } else {
        y
    }
}

// `powi`, `max`, `min` and `sign` for one float type, under the names the
// emitter uses (`powi_f32`, …).
macro_rules! simple_float_ops {
    ($t:ty, $powi:ident, $max:ident, $min:ident, $sign:ident) => {
        /// `x^n` by repeated squaring (as the Cranelift kernels do).
        #[inline(always)]
        pub fn $powi(x: $t, n: i32) -> $t {
            let mut e = n.unsigned_abs();
            let mut result: $t = 1.0;
            let mut base = x;
            let mut first = true;
            while e > 0 {
                if e & 1 == 1 {
                    result = if first { base } else { result * base };
                    first = false;
                }
                e >>= 1;
                if e > 0 {
                    base = base * base;
                }
            }
            if n < 0 {
                1.0 / result
            } else {
                result
            }
        }

        /// NaN if either is NaN, else the larger (the IR's `max`).
        #[inline(always)]
        pub fn $max(a: $t, b: $t) -> $t {
            if a == b {
                // +0 for zeros of either sign (the IR's rule).
                <$t>::from_bits(a.to_bits() & b.to_bits())
            } else if a > b || a.is_nan() {
                a
            } else {
                b
            }
        }

        /// NaN if either is NaN, else the smaller (the IR's `min`).
        #[inline(always)]
        pub fn $min(a: $t, b: $t) -> $t {
            if a == b {
                // -0 for zeros of either sign (the IR's rule).
                <$t>::from_bits(a.to_bits() | b.to_bits())
            } else if a < b || a.is_nan() {
                a
            } else {
                b
            }
        }

        /// `jnp.sign`: -1, +1, or the operand itself for ±0 and NaN.
        #[inline(always)]
        pub fn $sign(x: $t) -> $t {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                x
            }
        }
    };
}

simple_float_ops!(f32, powi_f32, max_f32, min_f32, sign_f32);
simple_float_ops!(f64, powi_f64, max_f64, min_f64, sign_f64);

/// Pairwise combination of reduction leaves: a binary counter of partial
/// results (leaf `c`, 1-based, is first combined with as many pending
/// partials as `c` has trailing zero bits), so equal-sized subtrees merge
/// pairwise and the rounding error grows like the log of the leaf count.
/// The tree depends only on the number of leaves.
pub struct Cascade<T: Copy> {
    stack: [T; 64],
    depth: usize,
    leaves: u64,
}

impl<T: Copy> Cascade<T> {
    #[inline(always)]
    pub fn new(zero: T) -> Self {
        Cascade {
            stack: [zero; 64],
            depth: 0,
            leaves: 0,
        }
    }

    #[inline(always)]
    pub fn push(&mut self, leaf: T, op: impl Fn(T, T) -> T) {
        self.leaves = self.leaves.wrapping_add(1);
        let mut c = self.leaves;
        let mut v = leaf;
        // `depth` is the number of one bits of `leaves - 1`, at most 63, and
        // each merge below pops one of them: every index is in bounds.
        while c & 1 == 0 && self.depth > 0 {
            self.depth -= 1;
            v = op(self.stack[self.depth & 63], v);
            c >>= 1;
        }
        self.stack[self.depth & 63] = v;
        self.depth += 1;
    }

    /// The combination of every leaf (the newest partial first), or
    /// `identity` when there were none.
    #[inline(always)]
    pub fn finish(&self, identity: T, op: impl Fn(T, T) -> T) -> T {
        if self.depth == 0 {
            return identity;
        }
        let mut d = self.depth - 1;
        let mut v = self.stack[d & 63];
        while d > 0 {
            d -= 1;
            v = op(self.stack[d & 63], v);
        }
        v
    }
}

/// `a[0] ⊕ … ⊕ a[N-1]` as a balanced tree of halvings (lane i meets lane
/// i + N/2, …), which vectorizes: the first steps are whole-vector ops.
#[inline(always)]
pub fn tree<T: Copy, const N: usize>(a: [T; N], op: impl Fn(T, T) -> T + Copy) -> T {
    let mut buf = a;
    let mut n = N;
    while n > 1 {
        let half = n / 2;
        let rest = n - half;
        let mut i = 0;
        while i < half {
            buf[i] = op(buf[i], buf[i + rest]);
            i += 1;
        }
        n = rest;
    }
    buf[0]
}
