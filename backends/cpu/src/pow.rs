//! `powf`: `x^y` for float lanes, branch-free, with Rust's (C's `pow`)
//! special values.
//!
//! `e^(y·ln x)` loses `|y·ln x|` ulps when `ln x` is rounded to the type
//! (up to 709 in f64), so:
//! - f32 lanes compute in f64 (`log`, the product, `exp`), rounded once:
//!   the f64 error, about |y·ln x|·2^-52 ≤ 2^-43 relative, is far below half
//!   an f32 ulp, so results are within an ulp of the correctly rounded one
//!   and exact where the power is representable.
//! - f64 computes `ln x` as a double-double `hi + lo` (relative error about
//!   2^-66: `ln_dd`), the product `y·(hi + lo)` as a double-double
//!   (an exact two-product: FMA where the ISA has it, Dekker's splitting on
//!   baseline SSE2), and `e^(hi + lo)` with the reduced argument kept as a
//!   double-double and `1 + r` added exactly (`exp_dd`), so the result is
//!   rounded essentially once.
//!
//! The PTX backend (`oxla-ptx`'s `pow.rs`) emits the same steps.
//!
//! # Accuracy
//!
//! Measured by `tests/suite/pow.rs` (`OXLA_POW_SAMPLES=1000000`, `--nocapture`):
//! 10^6 random pairs in each of five domains — x = 10^U(±30) (f32) or
//! 10^U(±300) (f64) with y = U(-4, 4); x = 10^U(-6, 6) with y = ±10^U(-3, 2);
//! x = U(0, 4) and x = 1 + U(±2^-10) with y spread so that |y·ln x| covers
//! [0, ln MAX] (the case that loses |y·ln x| ulps in a plain `exp(y·log x)`);
//! x = -U(0, 10) with integer y in [-40, 40] — at each ISA level.
//!
//! | type | ISA | max error | how measured |
//! |---|---|---|---|
//! | f32 | host (FMA) and baseline SSE2 | 0.500 ulp | against the exact f64 power of the f32 inputs |
//! | f64 | host (FMA) and baseline SSE2 | 1 ulp from std in 0.7–1.5% of the inputs, the same result elsewhere | against Rust std (glibc's `pow`, itself within 0.52 ulp) |
//! | f64 | both | 0.734 ulp (normal results), 0.751 ulp (subnormal results, rounded twice) | every input that differs from std, against mpmath at 200 bits (`tests/accuracy/pow_mpmath.py` on the `OXLA_POW_DUMP` file) |
//!
//! Integer powers that are representable are exact (`integer_exponents_are_exact`:
//! bases -60..=60 to the powers 0..=12, powers of two to every exponent in
//! range), and C's special values are bit for bit Rust's
//! (`special_values_bit_exact`).

use crate::math::{exp, fast_two_sum, in_f64_lanes_n, log, split_mantissa, taylor, two_sum, Num};
use cranelift_codegen::ir::{condcodes::FloatCC, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// Exponents are clamped to ±2^70 before the core: Dekker's splitting of
/// `y` must not overflow, and for x ≠ 1, |ln x| ≥ 2^-53, so |y·ln x| ≥ 2^17
/// there and the result has long saturated to 0 or inf.
const Y_LIMIT: f64 = 1.180_591_620_717_411_3e21; // 2^70

/// 2/3 = TWO_THIRDS.0 + TWO_THIRDS.1 (the tail is exactly 2^-53/3 rounded).
const TWO_THIRDS: (f64, f64) = (2.0 / 3.0, 3.700_743_415_417_188e-17);

/// `x^y` for every x and y, as Rust's `powf`.
pub(crate) fn pow(n: Num, b: &mut FunctionBuilder, x: Value, y: Value) -> Value {
    if n.is_f32() {
        in_f64_lanes_n(n, b, &[x, y], |n64, b, v| {
            pow_all(n64, b, v[0], v[1], false)
        })
    } else {
        pow_all(n, b, x, y, true)
    }
}

/// `v` rounded to an integer for `v ≥ 0` (ties to even; values from 2^52 on
/// are integers already and kept), in f64 lanes.
fn round_nonneg(n: Num, b: &mut FunctionBuilder, v: Value) -> Value {
    let two52 = n.fconst(b, 4_503_599_627_370_496.0);
    let t = b.ins().fadd(v, two52);
    let r = b.ins().fsub(t, two52);
    let big = n.cmp(b, FloatCC::GreaterThanOrEqual, v, two52);
    n.select(b, big, v, r)
}

/// The special values around a core for positive finite `|x|` and finite
/// `y`; `precise` picks the double-double core (f64), else `exp(y·log|x|)`
/// in these (f64) lanes for f32 values.
fn pow_all(n: Num, b: &mut FunctionBuilder, x: Value, y: Value, precise: bool) -> Value {
    let zero = n.fconst(b, 0.0);
    let one = n.fconst(b, 1.0);
    let inf = n.fconst(b, f64::INFINITY);
    let a = b.ins().fabs(x);
    let ay = b.ins().fabs(y);

    // y's parity: an integer iff it rounds to itself; odd iff y/2 does not
    // (±inf counts as even; NaN as neither).
    let yi = round_nonneg(n, b, ay);
    let is_int = n.cmp(b, FloatCC::Equal, yi, ay);
    let not_int = n.cmp(b, FloatCC::NotEqual, yi, ay);
    let half = n.fconst(b, 0.5);
    let h = b.ins().fmul(ay, half);
    let hi = round_nonneg(n, b, h);
    let half_not_int = n.cmp(b, FloatCC::NotEqual, hi, h);
    let odd = b.ins().band(is_int, half_not_int);

    // The core sees safe operands everywhere; its result is used only where
    // `general` holds.
    let a_pos = n.cmp(b, FloatCC::GreaterThan, a, zero);
    let a_fin = n.cmp(b, FloatCC::LessThan, a, inf);
    let y_fin = n.cmp(b, FloatCC::LessThan, ay, inf);
    let general = b.ins().band(a_pos, a_fin);
    let general = b.ins().band(general, y_fin);
    let a_safe = n.select(b, general, a, one);
    let lim = n.fconst(b, Y_LIMIT);
    let over = n.cmp(b, FloatCC::GreaterThan, ay, lim);
    let lim_y = n.with_sign_of(b, lim, y);
    let y_c = n.select(b, over, lim_y, y);
    let y_safe = n.select(b, general, y_c, zero);
    let core = if precise {
        pow_dd(n, b, a_safe, y_safe)
    } else {
        let l = log(n, b, a_safe);
        let p = b.ins().fmul(y_safe, l);
        exp(n, b, p)
    };

    // |x| ∈ {0, inf} or y = ±inf: 0 or inf by the sign of y·ln|x|.
    let a_gt1 = n.cmp(b, FloatCC::GreaterThan, a, one);
    let a_lt1 = n.cmp(b, FloatCC::LessThan, a, one);
    let y_pos = n.cmp(b, FloatCC::GreaterThan, y, zero);
    let y_neg = n.cmp(b, FloatCC::LessThan, y, zero);
    let grows = b.ins().band(a_gt1, y_pos);
    let shrinks_neg = b.ins().band(a_lt1, y_neg);
    let big = b.ins().bor(grows, shrinks_neg);
    let saturated = n.select(b, big, inf, zero);
    let mag = n.select(b, general, core, saturated);

    // A negative x (or -0, -inf) with an odd integer y gives a negative result.
    let sign_src = n.select(b, odd, x, one);
    let r = n.with_sign_of(b, mag, sign_src);
    // A negative finite x with a non-integer y: NaN.
    let x_neg = n.cmp(b, FloatCC::LessThan, x, zero);
    let neg_inf = n.fconst(b, f64::NEG_INFINITY);
    let x_above_neg_inf = n.cmp(b, FloatCC::GreaterThan, x, neg_inf);
    let neg_finite = b.ins().band(x_neg, x_above_neg_inf);
    let undefined = b.ins().band(neg_finite, not_int);
    let nan = n.fconst(b, f64::NAN);
    let r = n.select(b, undefined, nan, r);
    let any_nan = n.cmp(b, FloatCC::Unordered, x, y);
    let sum = b.ins().fadd(x, y);
    let r = n.select(b, any_nan, sum, r);
    // (±1)^(±inf) = 1; 1^y = 1 for every y; x^(±0) = 1 for every x.
    let a_one = n.cmp(b, FloatCC::Equal, a, one);
    let y_inf = n.cmp(b, FloatCC::Equal, ay, inf);
    let one_inf = b.ins().band(a_one, y_inf);
    let r = n.select(b, one_inf, one, r);
    let x_one = n.cmp(b, FloatCC::Equal, x, one);
    let r = n.select(b, x_one, one, r);
    let y_zero = n.cmp(b, FloatCC::Equal, y, zero);
    n.select(b, y_zero, one, r)
}

/// `(p, e)` with p = fl(x·y) and p + e = x·y exactly: one FMA where the ISA
/// has it, else Dekker's product of the 26-bit halves (no overflow for
/// |x|, |y| < 2^995).
fn two_prod(n: Num, b: &mut FunctionBuilder, x: Value, y: Value) -> (Value, Value) {
    let p = b.ins().fmul(x, y);
    if n.fma {
        let minus_p = b.ins().fneg(p);
        let e = b.ins().fma(x, y, minus_p);
        return (p, e);
    }
    let (xh, xl) = split(n, b, x);
    let (yh, yl) = split(n, b, y);
    let hh = b.ins().fmul(xh, yh);
    let e = b.ins().fsub(hh, p);
    let hl = b.ins().fmul(xh, yl);
    let e = b.ins().fadd(e, hl);
    let lh = b.ins().fmul(xl, yh);
    let e = b.ins().fadd(e, lh);
    let ll = b.ins().fmul(xl, yl);
    let e = b.ins().fadd(e, ll);
    (p, e)
}

/// x = hi + lo with hi of 26 significant bits and lo of 26 (Veltkamp).
fn split(n: Num, b: &mut FunctionBuilder, x: Value) -> (Value, Value) {
    let c = n.fconst(b, 134_217_729.0); // 2^27 + 1
    let t = b.ins().fmul(x, c);
    let d = b.ins().fsub(t, x);
    let hi = b.ins().fsub(t, d);
    let lo = b.ins().fsub(x, hi);
    (hi, lo)
}

/// `(xh + xl)·(yh + yl)` as a normalized double-double (xl·yl dropped).
fn dd_mul(n: Num, b: &mut FunctionBuilder, x: (Value, Value), y: (Value, Value)) -> (Value, Value) {
    let (p, e) = two_prod(n, b, x.0, y.0);
    let t = b.ins().fmul(x.0, y.1);
    let e = b.ins().fadd(e, t);
    let t = b.ins().fmul(x.1, y.0);
    let e = b.ins().fadd(e, t);
    fast_two_sum(b, p, e)
}

/// `ln a` = hi + lo for a positive finite f64 `a`, relative error about
/// 2^-66. a = m·2^e, m ∈ [√½, √2); ln m = 2·atanh(s), s = (m−1)/(m+1) =
/// 2s + (2/3)s³ + s⁵·P(s²): s is carried as s_hi + s_lo (the division's
/// remainder, exact by a two-product), 2s and (2/3)s³ in double-double, and
/// the rest (≤ 2^-12.5 of the result) in double, to s^25 (truncation below
/// 2^-71 with |s| ≤ 0.1716). e·ln2 adds as e·ln2_hi (exact) + e·ln2_lo.
fn ln_dd(n: Num, b: &mut FunctionBuilder, a: Value) -> (Value, Value) {
    let (m, e) = split_mantissa(n, b, a);
    let one = n.fconst(b, 1.0);
    let f = b.ins().fsub(m, one); // exact: m ∈ [½, 2]
    let (d, dl) = fast_two_sum(b, one, m);
    let s_hi = b.ins().fdiv(f, d);
    let (p, pe) = two_prod(n, b, s_hi, d);
    let rem = b.ins().fsub(f, p); // exact: p ≈ f
    let rem = b.ins().fsub(rem, pe);
    let t = b.ins().fmul(s_hi, dl);
    let rem = b.ins().fsub(rem, t);
    let s_lo = b.ins().fdiv(rem, d);
    let s = (s_hi, s_lo);

    let z = dd_mul(n, b, s, s);
    let s3 = dd_mul(n, b, s, z);
    let two_thirds = (n.fconst(b, TWO_THIRDS.0), n.fconst(b, TWO_THIRDS.1));
    let t3 = dd_mul(n, b, s3, two_thirds);
    let coeffs: Vec<f64> = (2..=12).map(|k| 2.0 / (2 * k + 1) as f64).collect();
    let series = n.poly(b, z.0, &coeffs);
    let zp = b.ins().fmul(z.0, series);
    let rest = b.ins().fmul(s3.0, zp);

    let two = n.fconst(b, 2.0);
    let s2_hi = b.ins().fmul(s_hi, two);
    let s2_lo = b.ins().fmul(s_lo, two);
    let (h, l) = fast_two_sum(b, s2_hi, t3.0);
    let tail = b.ins().fadd(t3.1, rest);
    let tail = b.ins().fadd(s2_lo, tail);
    let l = b.ins().fadd(l, tail);
    let (lnm_h, lnm_l) = fast_two_sum(b, h, l);

    let (ln2_hi, ln2_lo) = n.ln2_split();
    let c_hi = n.fconst(b, ln2_hi);
    let c_lo = n.fconst(b, ln2_lo);
    let eh = b.ins().fmul(e, c_hi); // exact: ln2_hi has 32 bits, |e| < 2^11
    let (h, l) = two_sum(b, eh, lnm_h);
    let el = b.ins().fmul(e, c_lo);
    let tail = b.ins().fadd(lnm_l, el);
    let l = b.ins().fadd(l, tail);
    fast_two_sum(b, h, l)
}

/// `a^y` for positive finite `a` and finite |y| ≤ 2^70 (f64 lanes):
/// `exp_dd(y·ln_dd(a))`.
fn pow_dd(n: Num, b: &mut FunctionBuilder, a: Value, y: Value) -> Value {
    let (lh, ll) = ln_dd(n, b, a);
    let (p, pe) = two_prod(n, b, y, lh);
    let t = b.ins().fmul(y, ll);
    let pe = b.ins().fadd(pe, t);
    let (ph, pl) = fast_two_sum(b, p, pe);
    exp_dd(n, b, ph, pl)
}

/// `e^(ph + pl)` for |pl| ≤ ulp(ph): ph is clamped to [-746, 710] (beyond,
/// the result is 0 or inf, and pl is dropped); ph + pl = k·ln2 + r with r
/// kept as a double-double (ph − k·ln2_hi is exact), e^r = 1 + r + r²·Q(r)
/// with the Taylor polynomial to degree 14 (truncation below 2^-63 for
/// |r| ≤ 0.35) and `1 + r` added exactly, so the only large rounding is the
/// last addition; then 2^k in two halves as in `exp`.
fn exp_dd(n: Num, b: &mut FunctionBuilder, ph: Value, pl: Value) -> Value {
    let zero = n.fconst(b, 0.0);
    let hi_c = n.fconst(b, 710.0);
    let lo_c = n.fconst(b, -746.0);
    let over = n.cmp(b, FloatCC::GreaterThan, ph, hi_c);
    let under = n.cmp(b, FloatCC::LessThan, ph, lo_c);
    let x = n.select(b, over, hi_c, ph);
    let x = n.select(b, under, lo_c, x);
    let out = b.ins().bor(over, under);
    let xl = n.select(b, out, zero, pl);

    let (ln2_hi, ln2_lo) = n.ln2_split();
    let log2e = n.fconst(b, std::f64::consts::LOG2_E);
    let t = b.ins().fmul(x, log2e);
    let k = n.round(b, t);
    let c_hi = n.fconst(b, ln2_hi);
    let c_lo = n.fconst(b, ln2_lo);
    let kh = b.ins().fmul(k, c_hi);
    let rh = b.ins().fsub(x, kh); // exact (Sterbenz)
    let kl = b.ins().fmul(k, c_lo);
    let c = b.ins().fsub(xl, kl);
    let (r, rl) = two_sum(b, rh, c);

    let q = n.poly(b, r, &taylor(2, 14, 1, false));
    let r2 = b.ins().fmul(r, r);
    let one = n.fconst(b, 1.0);
    let (h, l) = fast_two_sum(b, one, r);
    // e^(r + rl) ≈ e^r + rl·(1 + r).
    let rl_term = n.mul_add(b, rl, r, rl);
    let tail = n.mul_add(b, r2, q, rl_term);
    let tail = b.ins().fadd(l, tail);
    let e_r = b.ins().fadd(h, tail);

    let half = n.fconst(b, 0.5);
    let k_half = b.ins().fmul(k, half);
    let k1 = n.round(b, k_half);
    let k2 = b.ins().fsub(k, k1);
    let s1 = n.pow2(b, k1);
    let s2 = n.pow2(b, k2);
    let v = b.ins().fmul(e_r, s1);
    b.ins().fmul(v, s2)
}
