//! Our own branch-free `exp`, `expm1`, `erf`, `log`, `sin`, `cos` and `tanh` (libm calls do
//! not vectorize): range reduction plus a polynomial, emitted for any float
//! type — `f32`, `f64`, `f32x4` or `f64x2` — with the same instructions.
//!
//! Only SSE2-level operations are used (no rounding instructions, no 64-bit
//! lane compares or conversions): integers are rounded with the
//! add-and-subtract-1.5·2^p trick and moved between the float and integer
//! domains through their bits, so the baseline x86-64 ISA runs the same code.
//!
//! sin and cos are correct over the whole range: a fast path for |x| ≤ 2^27
//! (f32, computed in f64 and rounded once) or 2^20 (f64) with exact
//! Cody–Waite reduction, and above it (and for ±inf) a cold block that calls
//! `oxla_cpu_{sin,cos}_{f32,f64}`, which use Rust std (see `sin_cos`). All
//! other functions are branch-free. f32 tanh is also evaluated in f64 lanes
//! and rounded once.
//!
//! # Accuracy
//!
//! Maximum error in ulp against Rust std's f64 functions, measured by
//! `cargo run --release -p oxla-cpu --example accuracy` (the ulp and the
//! special failures are defined in `tests/accuracy/mod.rs`: the gap to the
//! next larger magnitude of the exactly rounded reference; NaN/inf/signed-zero
//! mismatches are counted apart). f32: every one of the 2^32 inputs on the
//! host ISA (x86-64 with FMA), every 17th bit pattern on the SSE2 baseline
//! (all of them for tanh);
//! f64: 10^7 inputs uniform over finite bit patterns and 10^7 uniform in the
//! range shown, plus special values, error against std (itself within about
//! half an ulp, so 1.000 there means a last-bit difference). Max ulp is
//! printed to 3 decimals (f32 sin/cos: 0.5000..., i.e. the rounded result
//! but for a few last-bit cases). Special failures: none anywhere. The host
//! run (every function, f32 and f64) takes 6.5 min on 2 idle cores (sin/cos
//! the longest, as 40% of all f32 patterns exceed 2^27 and take the slow
//! path).
//! `tests/suite/math_error.rs` asserts these bounds (as printed) on a dense
//! sample that holds each maximum's input, both ISAs.
//!
//! | function | type | ISA | domain | inputs | max ulp | at input | NaN / inf / ±0 failures |
//! |---|---|---|---|---|---|---|---|
//! | exp | f32 | host (FMA) | all 2^32 f32 | 4294967296 | 0.939 | 2.6688921e1 | 0 / 0 / 0 |
//! | exp | f32 | baseline SSE2 | every 17-th f32 pattern | 252645136 | 1.209 | 4.8181538e1 | 0 / 0 / 0 |
//! | exp | f32 | baseline SSE2 | all 2^32 f32 | 4294967296 | 1.218 | -5.9954247e1 | 0 / 0 / 0 |
//! | exp | f64 | host (FMA) | finite bit patterns | 10000000 | 2.000 | -3.1115842893133094e0 | 0 / 0 / 0 |
//! | exp | f64 | host (FMA) | uniform [-7.46e2, 7.1e2] + specials | 10004046 | 2.000 | -2.3046639957791558e2 | 0 / 0 / 0 |
//! | exp | f64 | baseline SSE2 | finite bit patterns | 10000000 | 2.000 | -3.4224249075839214e-1 | 0 / 0 / 0 |
//! | exp | f64 | baseline SSE2 | uniform [-7.46e2, 7.1e2] + specials | 10004046 | 3.000 | 4.7168710339939344e2 | 0 / 0 / 0 |
//! | log | f32 | host (FMA) | all 2^32 f32 | 4294967296 | 0.854 | 1.4066552e0 | 0 / 0 / 0 |
//! | log | f32 | baseline SSE2 | every 17-th f32 pattern | 252645136 | 0.826 | 1.4110483e0 | 0 / 0 / 0 |
//! | log | f32 | baseline SSE2 | all 2^32 f32 | 4294967296 | 0.858 | 6.9991034e-1 | 0 / 0 / 0 |
//! | log | f64 | host (FMA) | finite bit patterns | 10000000 | 1.000 | 2.1150019783406567e26 | 0 / 0 / 0 |
//! | log | f64 | host (FMA) | uniform [0e0, 1e3] + specials | 10004046 | 1.000 | 6.747969247085724e2 | 0 / 0 / 0 |
//! | log | f64 | baseline SSE2 | finite bit patterns | 10000000 | 1.000 | 2.1150019783406567e26 | 0 / 0 / 0 |
//! | log | f64 | baseline SSE2 | uniform [0e0, 1e3] + specials | 10004046 | 1.000 | 6.747969247085724e2 | 0 / 0 / 0 |
//! | sin | f32 | host (FMA) | all 2^32 f32 | 4294967296 | 0.500 | 1.4923352e1 | 0 / 0 / 0 |
//! | sin | f32 | baseline SSE2 | every 17-th f32 pattern | 252645136 | 0.500 | 9.764847e3 | 0 / 0 / 0 |
//! | sin | f64 | host (FMA) | finite bit patterns | 10000000 | 1.000 | -8.770877157928397e2 | 0 / 0 / 0 |
//! | sin | f64 | host (FMA) | uniform [-1e3, 1e3] + specials | 10004046 | 1.000 | -7.543236541837928e2 | 0 / 0 / 0 |
//! | sin | f64 | baseline SSE2 | finite bit patterns | 10000000 | 1.000 | -8.770877157928397e2 | 0 / 0 / 0 |
//! | sin | f64 | baseline SSE2 | uniform [-1e3, 1e3] + specials | 10004046 | 1.000 | -7.543236541837928e2 | 0 / 0 / 0 |
//! | cos | f32 | host (FMA) | all 2^32 f32 | 4294967296 | 0.500 | 1.409075e5 | 0 / 0 / 0 |
//! | cos | f32 | baseline SSE2 | every 17-th f32 pattern | 252645136 | 0.500 | 1.409075e5 | 0 / 0 / 0 |
//! | cos | f64 | host (FMA) | finite bit patterns | 10000000 | 1.000 | -1.3304960800103405e1 | 0 / 0 / 0 |
//! | cos | f64 | host (FMA) | uniform [-1e3, 1e3] + specials | 10004046 | 1.000 | -6.498165862750245e2 | 0 / 0 / 0 |
//! | cos | f64 | baseline SSE2 | finite bit patterns | 10000000 | 1.000 | -1.3304960800103405e1 | 0 / 0 / 0 |
//! | cos | f64 | baseline SSE2 | uniform [-1e3, 1e3] + specials | 10004046 | 1.000 | -3.5558697376410134e2 | 0 / 0 / 0 |
//! | tanh | f32 | host (FMA) | all 2^32 f32 | 4294967296 | 0.509 | 1.7343463e-1 | 0 / 0 / 0 |
//! | tanh | f32 | baseline SSE2 | all 2^32 f32 | 4294967296 | 0.509 | 1.7343463e-1 | 0 / 0 / 0 |
//! | tanh | f64 | host (FMA) | finite bit patterns | 10000000 | 3.000 | 2.097682172097664e-1 | 0 / 0 / 0 |
//! | tanh | f64 | host (FMA) | uniform [-2e1, 2e1] + specials | 10004046 | 4.000 | 2.1450572540249624e-1 | 0 / 0 / 0 |
//! | tanh | f64 | baseline SSE2 | finite bit patterns | 10000000 | 3.000 | -2.0331244964628564e-1 | 0 / 0 / 0 |
//! | tanh | f64 | baseline SSE2 | uniform [-2e1, 2e1] + specials | 10004046 | 3.000 | -2.200771661774823e-1 | 0 / 0 / 0 |
//! | expm1 | f32 | host (FMA) | all 2^32 f32 | 4294967296 | 0.513 | 3.4668168e-1 | 0 / 0 / 0 |
//! | expm1 | f64 | host (FMA) | finite bit patterns | 10000000 | 2.000 | 3.4954243648679384e-1 | 0 / 0 / 0 |
//! | expm1 | f64 | host (FMA) | uniform [-4e1, 4e1] + specials | 10004046 | 2.000 | 3.724556694235872e-1 | 0 / 0 / 0 |
//! | expm1 | f64 | host (FMA) | uniform [-1e0, 1e0] | 10000000 | 2.000 | 3.592411054621092e-1 | 0 / 0 / 0 |
//! | erf | f32 | host (FMA) | all 2^32 f32 (vs `libm`) | 4294967296 | 0.500 | 1.839803e-4 | 0 / 0 / 0 |
//! | erf | f64 | host (FMA) | finite bit patterns (vs `libm`) | 10000000 | 1.000 | -3.9895569154880637e-249 | 0 / 0 / 0 |
//! | erf | f64 | host (FMA) | uniform [-6e0, 6e0] + specials (vs `libm`) | 10004046 | 1.000 | -5.370660296305241e-1 | 0 / 0 / 0 |
//! | expm1 | f32 | host (FMA) | every 4099-th f32 pattern (sampled test) | 1047881 | 0.506 | 3.7159324e-1 | 0 / 0 / 0 |
//! | expm1 | f32 | baseline SSE2 | every 4099-th f32 pattern (sampled test) | 1047881 | 0.506 | 3.7159324e-1 | 0 / 0 / 0 |
//! | expm1 | f32 | baseline SSE2 | all 2^32 f32 | 4294967296 | 0.513 | 3.4668168e-1 | 0 / 0 / 0 |
//! | expm1 | f64 | host (FMA) | finite bit patterns (sampled test) | 100000 | 2.000 | 2.1175701032681752e2 | 0 / 0 / 0 |
//! | expm1 | f64 | host (FMA) | uniform [-4e1, 4e1] + specials (sampled test) | 104046 | 2.000 | 3.6681794649716437e-1 | 0 / 0 / 0 |
//! | expm1 | f64 | host (FMA) | uniform [-1, 1] (sampled test) | 100000 | 2.000 | 3.8884908586437117e-1 | 0 / 0 / 0 |
//! | expm1 | f64 | baseline SSE2 | finite bit patterns (sampled test) | 100000 | 2.000 | 2.1175701032681752e2 | 0 / 0 / 0 |
//! | expm1 | f64 | baseline SSE2 | uniform [-4e1, 4e1] + specials (sampled test) | 104046 | 2.000 | 3.9444688304064357e-1 | 0 / 0 / 0 |
//! | expm1 | f64 | baseline SSE2 | uniform [-1, 1] (sampled test) | 100000 | 2.000 | 4.031744743801402e-1 | 0 / 0 / 0 |
//! | erf | f32 | host (FMA) | every 4099-th f32 pattern (sampled test, vs `libm`) | 1047881 | 0.500 | -1.345377e-31 | 0 / 0 / 0 |
//! | erf | f32 | baseline SSE2 | every 4099-th f32 pattern (sampled test, vs `libm`) | 1047881 | 0.500 | -1.345377e-31 | 0 / 0 / 0 |
//! | erf | f32 | baseline SSE2 | all 2^32 f32 (vs `libm`) | 4294967296 | 0.500 | 1.839803e-4 | 0 / 0 / 0 |
//! | erf | f64 | host (FMA) | finite bit patterns (sampled test, vs `libm`) | 100000 | 1.000 | -1.2718038961529313e-244 | 0 / 0 / 0 |
//! | erf | f64 | host (FMA) | uniform [-6, 6] + specials (sampled test, vs `libm`) | 104046 | 1.000 | 9.957307177368495e-1 | 0 / 0 / 0 |
//! | erf | f64 | baseline SSE2 | finite bit patterns (sampled test, vs `libm`) | 100000 | 1.000 | -5.5385458019361047e-303 | 0 / 0 / 0 |
//! | erf | f64 | baseline SSE2 | uniform [-6, 6] + specials (sampled test, vs `libm`) | 104046 | 1.000 | 9.957307177368495e-1 | 0 / 0 / 0 |
//! | sqrt | f32 | host (FMA) | all 2^32 f32 | 4294967296 | 0.500 | 4.701977e-38 | 0 / 0 / 0 |
//! | sqrt | f32 | baseline SSE2 | every 17-th f32 pattern | 252645136 | 0.500 | 3.0814877e-33 | 0 / 0 / 0 |
//! | sqrt | f64 | host (FMA) | finite bit patterns | 10000000 | 0.000 | 0e0 | 0 / 0 / 0 |
//! | sqrt | f64 | host (FMA) | uniform [0e0, 1e3] + specials | 10004046 | 0.000 | 0e0 | 0 / 0 / 0 |
//! | sqrt | f64 | baseline SSE2 | finite bit patterns | 10000000 | 0.000 | 0e0 | 0 / 0 / 0 |
//! | sqrt | f64 | baseline SSE2 | uniform [0e0, 1e3] + specials | 10004046 | 0.000 | 0e0 | 0 / 0 / 0 |
//!
//! exp gives 0 below the underflow and inf above the overflow threshold; log
//! of a negative number is NaN, of 0 is -inf; tanh saturates to ±1; NaN gives
//! NaN everywhere; sin/cos of ±inf are NaN; sin keeps the sign of ±0 and
//! returns subnormals unchanged.

use cranelift_codegen::ir::Endianness;
use cranelift_codegen::ir::{
    condcodes::FloatCC, types, AbiParam, ConstantData, ExtFuncData, ExternalName, FuncRef,
    InstBuilder, MemFlagsData, Signature, Type, UserExternalName, Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::FunctionBuilder;
use cranelift_module::{Linkage, Module};

/// How to emit arithmetic on one float type (scalar or vector).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Num {
    /// `F32`, `F64`, `F32X4` or `F64X2`.
    pub ty: Type,
    /// Emit `fma` (only where it is one instruction).
    pub fma: bool,
}

impl Num {
    pub fn is_f32(self) -> bool {
        self.ty.lane_type() == types::F32
    }

    /// The integer type of the same shape (`I32X4` for `F32X4`).
    pub fn int(self) -> Type {
        self.ty.as_int()
    }

    pub(crate) fn mantissa_bits(self) -> i64 {
        if self.is_f32() {
            23
        } else {
            52
        }
    }

    pub(crate) fn bias(self) -> i64 {
        if self.is_f32() {
            127
        } else {
            1023
        }
    }

    /// 1.5·2^mantissa_bits: adding and subtracting it rounds to an integer.
    pub(crate) fn magic(self) -> f64 {
        1.5 * (2f64).powi(self.mantissa_bits() as i32)
    }

    pub(crate) fn magic_bits(self) -> i64 {
        if self.is_f32() {
            (self.magic() as f32).to_bits() as i64
        } else {
            self.magic().to_bits() as i64
        }
    }

    pub fn fconst(self, b: &mut FunctionBuilder, c: f64) -> Value {
        let s = if self.is_f32() {
            b.ins().f32const(c as f32)
        } else {
            b.ins().f64const(c)
        };
        self.splat(b, s)
    }

    /// An integer constant of the lane width, given as its bit pattern.
    pub fn iconst(self, b: &mut FunctionBuilder, c: i64) -> Value {
        let lane = self.int().lane_type();
        let c = if lane == types::I32 {
            c as u32 as i64
        } else {
            c
        };
        let s = b.ins().iconst(lane, c);
        self.splat(b, s)
    }

    fn splat(self, b: &mut FunctionBuilder, s: Value) -> Value {
        let ty = if b.func.dfg.value_type(s).is_int() {
            self.int()
        } else {
            self.ty
        };
        if ty.is_vector() {
            b.ins().splat(ty, s)
        } else {
            s
        }
    }

    pub fn bits(self, b: &mut FunctionBuilder, x: Value) -> Value {
        b.ins().bitcast(self.int(), bitcast_flags(self.ty), x)
    }

    pub fn float_of_bits(self, b: &mut FunctionBuilder, i: Value) -> Value {
        b.ins().bitcast(self.ty, bitcast_flags(self.ty), i)
    }

    /// `x * y + z`, fused where the ISA has FMA.
    pub fn mul_add(self, b: &mut FunctionBuilder, x: Value, y: Value, z: Value) -> Value {
        if self.fma {
            b.ins().fma(x, y, z)
        } else {
            let p = b.ins().fmul(x, y);
            b.ins().fadd(p, z)
        }
    }

    /// `c[0] + x * (c[1] + x * (...))` by Horner's rule.
    pub fn poly(self, b: &mut FunctionBuilder, x: Value, c: &[f64]) -> Value {
        let mut acc = self.fconst(b, c[c.len() - 1]);
        for &k in c[..c.len() - 1].iter().rev() {
            let k = self.fconst(b, k);
            acc = self.mul_add(b, acc, x, k);
        }
        acc
    }

    /// Compare; the result is a lane mask (vectors) or an `i8` 0/1 (scalars).
    pub fn cmp(self, b: &mut FunctionBuilder, cc: FloatCC, x: Value, y: Value) -> Value {
        b.ins().fcmp(cc, x, y)
    }

    /// `if mask { a } else { c }` lane by lane; `a` and `c` are floats or
    /// integers of this shape.
    pub fn select(self, b: &mut FunctionBuilder, mask: Value, a: Value, c: Value) -> Value {
        let ty = b.func.dfg.value_type(a);
        if !ty.is_vector() {
            return b.ins().select(mask, a, c);
        }
        let mask = if b.func.dfg.value_type(mask) == ty {
            mask
        } else {
            b.ins().bitcast(ty, bitcast_flags(ty), mask)
        };
        b.ins().bitselect(mask, a, c)
    }

    /// Round to the nearest integer (ties to even); |x| < 2^(mantissa_bits-1).
    pub(crate) fn round(self, b: &mut FunctionBuilder, x: Value) -> Value {
        let m = self.fconst(b, self.magic());
        let t = b.ins().fadd(x, m);
        b.ins().fsub(t, m)
    }

    /// `n + offset` as an integer, for a float `n` holding an integer.
    pub(crate) fn to_int(self, b: &mut FunctionBuilder, n: Value, offset: i64) -> Value {
        let shifted = self.fconst(b, self.magic() + offset as f64);
        let t = b.ins().fadd(n, shifted);
        let t = self.bits(b, t);
        let mb = self.iconst(b, self.magic_bits());
        b.ins().isub(t, mb)
    }

    /// A small non-negative integer to float.
    pub(crate) fn int_to_float(self, b: &mut FunctionBuilder, i: Value) -> Value {
        let mb = self.iconst(b, self.magic_bits());
        let t = b.ins().iadd(i, mb);
        let t = self.float_of_bits(b, t);
        let m = self.fconst(b, self.magic());
        b.ins().fsub(t, m)
    }

    /// 2^n for a float `n` holding an integer in the normal exponent range.
    pub(crate) fn pow2(self, b: &mut FunctionBuilder, n: Value) -> Value {
        let e = self.to_int(b, n, self.bias());
        let e = b.ins().ishl_imm_u(e, self.mantissa_bits());
        self.float_of_bits(b, e)
    }

    /// ln 2 = hi + lo, with hi short enough that k·hi is exact for every
    /// exponent k (fdlibm's split for f64).
    pub(crate) fn ln2_split(self) -> (f64, f64) {
        if self.is_f32() {
            (0.693_359_375, -2.121_944_4e-4)
        } else {
            (
                f64::from_bits(0x3fe6_2e42_fee0_0000),
                f64::from_bits(0x3dea_39ef_3579_3c76),
            )
        }
    }

    fn sign_mask(self) -> i64 {
        if self.is_f32() {
            0x8000_0000
        } else {
            i64::MIN
        }
    }

    /// `|mag|` with the sign of `sign`, for a non-negative `mag`.
    pub(crate) fn with_sign_of(self, b: &mut FunctionBuilder, mag: Value, sign: Value) -> Value {
        let m = self.iconst(b, self.sign_mask());
        let s = self.bits(b, sign);
        let s = b.ins().band(s, m);
        let v = self.bits(b, mag);
        let v = b.ins().bor(v, s);
        self.float_of_bits(b, v)
    }
}

/// Vector bitcasts name their lane order; scalar ones take no flags.
fn bitcast_flags(ty: Type) -> MemFlagsData {
    if ty.is_vector() {
        MemFlagsData::new().with_endianness(Endianness::Little)
    } else {
        MemFlagsData::new()
    }
}

/// `1/k!` for k in `from..=to` stepping by `step`; with `alternating`, signed
/// `(-1)^(k/2)` as in the sin and cos series.
pub(crate) fn taylor(from: u32, to: u32, step: usize, alternating: bool) -> Vec<f64> {
    let fact = |k: u32| (1..=k).map(f64::from).product::<f64>();
    let sign = |k: u32| {
        if alternating && (k / 2) % 2 == 1 {
            -1.0
        } else {
            1.0
        }
    };
    (from..=to)
        .step_by(step)
        .map(|k| sign(k) / fact(k))
        .collect()
}

/// `e^x`: x = n·ln2 + r with |r| ≤ ln2/2, e^r by its Taylor polynomial
/// (degree 7 for f32, 12 for f64), times 2^n applied in two halves so that
/// results in the subnormal range round once and large x overflow to inf.
pub(crate) fn exp(n: Num, b: &mut FunctionBuilder, x: Value) -> Value {
    let (lo, hi, degree) = if n.is_f32() {
        (-104.0, 89.0, 7)
    } else {
        (-746.0, 710.0, 12)
    };
    let (ln2_hi, ln2_lo) = n.ln2_split();
    // Clamp; a NaN fails both compares and passes through.
    let hi_c = n.fconst(b, hi);
    let over = n.cmp(b, FloatCC::GreaterThan, x, hi_c);
    let x = n.select(b, over, hi_c, x);
    let lo_c = n.fconst(b, lo);
    let under = n.cmp(b, FloatCC::LessThan, x, lo_c);
    let x = n.select(b, under, lo_c, x);

    let log2e = n.fconst(b, std::f64::consts::LOG2_E);
    let t = b.ins().fmul(x, log2e);
    let k = n.round(b, t);
    let c_hi = n.fconst(b, ln2_hi);
    let c_lo = n.fconst(b, ln2_lo);
    let p = b.ins().fmul(k, c_hi);
    let r = b.ins().fsub(x, p);
    let p = b.ins().fmul(k, c_lo);
    let r = b.ins().fsub(r, p);
    let e_r = n.poly(b, r, &taylor(0, degree, 1, false));

    let half = n.fconst(b, 0.5);
    let k_half = b.ins().fmul(k, half);
    let k1 = n.round(b, k_half);
    let k2 = b.ins().fsub(k, k1);
    let s1 = n.pow2(b, k1);
    let s2 = n.pow2(b, k2);
    let y = b.ins().fmul(e_r, s1);
    b.ins().fmul(y, s2)
}

/// `ln x`: x = m·2^e with m in [√½, √2), ln m = 2·atanh(s) with
/// s = (m-1)/(m+1), |s| ≤ 0.172, by its odd series (to s^9 for f32, s^19 for
/// f64); subnormals are scaled first. x < 0 gives NaN, 0 gives -inf.
pub(crate) fn log(n: Num, b: &mut FunctionBuilder, x: Value) -> Value {
    let terms = if n.is_f32() { 5 } else { 10 };
    let (ln2_hi, ln2_lo) = n.ln2_split();
    let (m, e) = split_mantissa(n, b, x);

    // ln(1+f) = f - (f²/2 - s·(f²/2 + R)) with R = 2s³/3 + 2s⁵/5 + ...: the
    // rounding of s only touches the small correction terms.
    let one = n.fconst(b, 1.0);
    let two = n.fconst(b, 2.0);
    let half = n.fconst(b, 0.5);
    let f = b.ins().fsub(m, one);
    let den = b.ins().fadd(f, two);
    let s = b.ins().fdiv(f, den);
    let z = b.ins().fmul(s, s);
    let coeffs: Vec<f64> = (1..terms).map(|k| 2.0 / (2 * k + 1) as f64).collect();
    let series = n.poly(b, z, &coeffs);
    let r = b.ins().fmul(z, series);
    let hf = b.ins().fmul(f, half);
    let hfsq = b.ins().fmul(hf, f);
    let hr = b.ins().fadd(hfsq, r);
    let c_lo = n.fconst(b, ln2_lo);
    let lo_part = b.ins().fmul(e, c_lo);
    let t = n.mul_add(b, s, hr, lo_part);
    let corr = b.ins().fsub(hfsq, t);
    let ln_m = b.ins().fsub(f, corr);
    let c_hi = n.fconst(b, ln2_hi);
    let y = n.mul_add(b, e, c_hi, ln_m);

    let inf = n.fconst(b, f64::INFINITY);
    let is_inf = n.cmp(b, FloatCC::Equal, x, inf);
    let y = n.select(b, is_inf, inf, y);
    let zero = n.fconst(b, 0.0);
    let is_zero = n.cmp(b, FloatCC::Equal, x, zero);
    let neg_inf = n.fconst(b, f64::NEG_INFINITY);
    let y = n.select(b, is_zero, neg_inf, y);
    let nan = n.fconst(b, f64::NAN);
    let negative = n.cmp(b, FloatCC::LessThan, x, zero);
    let y = n.select(b, negative, nan, y);
    let is_nan = n.cmp(b, FloatCC::NotEqual, x, x);
    n.select(b, is_nan, x, y)
}

/// `x = m·2^e` with m in [√½, √2) and `e` an integer held as a float, for a
/// positive finite x (subnormals are scaled by 2^mantissa_bits first).
pub(crate) fn split_mantissa(n: Num, b: &mut FunctionBuilder, x: Value) -> (Value, Value) {
    let (min_normal, scale, sqrt_half_bits) = if n.is_f32() {
        (f32::MIN_POSITIVE as f64, 2f64.powi(23), 0x3f35_04f3_i64)
    } else {
        (f64::MIN_POSITIVE, 2f64.powi(52), 0x3fe6_a09e_667f_3bcd_i64)
    };
    let mbits = n.mantissa_bits();
    let one_bits = n.bias() << mbits;

    let min_c = n.fconst(b, min_normal);
    let tiny = n.cmp(b, FloatCC::LessThan, x, min_c);
    let scale_c = n.fconst(b, scale);
    let scaled = b.ins().fmul(x, scale_c);
    let xs = n.select(b, tiny, scaled, x);
    let adj_tiny = n.fconst(b, -(mbits as f64) - n.bias() as f64);
    let adj = n.fconst(b, -(n.bias() as f64));
    let e_adj = n.select(b, tiny, adj_tiny, adj);

    // Offset the bits so that the exponent field rounds m into [√½, √2).
    let bits = n.bits(b, xs);
    let off = n.iconst(b, one_bits - sqrt_half_bits);
    let ix = b.ins().iadd(bits, off);
    let e_biased = b.ins().ushr_imm_u(ix, mbits);
    let mant_mask = n.iconst(b, (1i64 << mbits) - 1);
    let mant = b.ins().band(ix, mant_mask);
    let sqrt_half = n.iconst(b, sqrt_half_bits);
    let m_bits = b.ins().iadd(mant, sqrt_half);
    let m = n.float_of_bits(b, m_bits);
    let e = n.int_to_float(b, e_biased);
    let e = b.ins().fadd(e, e_adj);
    (m, e)
}

/// Above this |x| an f32 sin/cos goes to the slow path: k = round(x·2/π) then
/// has at most 27 bits, so k times each 26-bit piece of `PIO2_F32` is exact.
pub(crate) const SIN_FAST_LIMIT_F32: f64 = 134_217_728.0; // 2^27

/// Above this |x| an f64 sin/cos goes to the slow path: k < 2^20, so k times
/// each 33-bit piece of `PIO2_F64` is exact.
pub(crate) const SIN_FAST_LIMIT_F64: f64 = 1_048_576.0; // 2^20

/// π/2 = P1 + P2 + P3 + (|rest| < 1.5e-33), P1 and P2 of at most 26
/// significant bits (so that k·P1 and k·P2 are exact for k < 2^27), P3
/// rounded.
const PIO2_F32: [f64; 3] = [
    f64::from_bits(0x3ff9_21fb_5000_0000),
    f64::from_bits(0x3e51_10b4_6000_0000),
    f64::from_bits(0x3c91_a626_3314_5c07),
];

/// π/2 = P1 + P2 + P3 + P4 + (|rest| < 1e-48), P1..P3 of at most 33
/// significant bits (fdlibm's medium-range split), P4 rounded.
const PIO2_F64: [f64; 4] = [
    f64::from_bits(0x3ff9_21fb_5440_0000),
    f64::from_bits(0x3dd0_b461_1a60_0000),
    f64::from_bits(0x3ba3_198a_2e00_0000),
    f64::from_bits(0x397b_839a_2520_49c1),
];

/// The full-range sin/cos of the slow path, called by compiled code with the
/// C ABI (object files import them by name; the JIT registers their
/// addresses). f32 rounds Rust std's f64 result once more; std reduces any
/// argument correctly.
#[no_mangle]
pub extern "C" fn oxla_cpu_sin_f32(x: f32) -> f32 {
    (x as f64).sin() as f32
}

/// See `oxla_cpu_sin_f32`.
#[no_mangle]
pub extern "C" fn oxla_cpu_cos_f32(x: f32) -> f32 {
    (x as f64).cos() as f32
}

/// See `oxla_cpu_sin_f32`.
#[no_mangle]
pub extern "C" fn oxla_cpu_sin_f64(x: f64) -> f64 {
    x.sin()
}

/// See `oxla_cpu_sin_f32`.
#[no_mangle]
pub extern "C" fn oxla_cpu_cos_f64(x: f64) -> f64 {
    x.cos()
}

/// Names and addresses of the slow-path helpers, in `Helpers::ids` order.
pub(crate) fn helper_symbols() -> [(&'static str, *const u8); 4] {
    [
        ("oxla_cpu_sin_f32", oxla_cpu_sin_f32 as *const u8),
        ("oxla_cpu_cos_f32", oxla_cpu_cos_f32 as *const u8),
        ("oxla_cpu_sin_f64", oxla_cpu_sin_f64 as *const u8),
        ("oxla_cpu_cos_f64", oxla_cpu_cos_f64 as *const u8),
    ]
}

/// The slow-path helpers as functions of the module being built (their
/// cranelift-module function ids), for calls from a kernel.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Helpers {
    call_conv: CallConv,
    /// sin f32, cos f32, sin f64, cos f64.
    ids: [u32; 4],
}

impl Helpers {
    /// Declare the helpers in `module` as imports.
    pub fn declare<M: Module>(module: &mut M) -> Result<Helpers, String> {
        let call_conv = module.isa().default_call_conv();
        let mut ids = [0; 4];
        for (i, (name, _)) in helper_symbols().into_iter().enumerate() {
            let sig = helper_signature(call_conv, if i < 2 { types::F32 } else { types::F64 });
            ids[i] = module
                .declare_function(name, Linkage::Import, &sig)
                .map_err(|e| format!("{name}: {e}"))?
                .as_u32();
        }
        Ok(Helpers { call_conv, ids })
    }

    /// Placeholder ids, for IR that is only printed.
    pub fn unlinked(call_conv: CallConv) -> Helpers {
        Helpers {
            call_conv,
            ids: [0, 1, 2, 3],
        }
    }

    fn import(&self, b: &mut FunctionBuilder, ty: Type, cos: bool) -> FuncRef {
        let id = self.ids[(ty == types::F64) as usize * 2 + cos as usize];
        let signature = b.import_signature(helper_signature(self.call_conv, ty));
        let name = b
            .func
            .declare_imported_user_function(UserExternalName::new(0, id));
        b.import_function(ExtFuncData {
            name: ExternalName::user(name),
            signature,
            colocated: false,
            patchable: false,
        })
    }
}

fn helper_signature(call_conv: CallConv, ty: Type) -> Signature {
    let mut sig = Signature::new(call_conv);
    sig.params.push(AbiParam::new(ty));
    sig.returns.push(AbiParam::new(ty));
    sig
}

/// `sin x` (`cos = false`) or `cos x`, correct over the whole range.
///
/// The fast path (|x| ≤ `SIN_FAST_LIMIT_F32` / `_F64`, and NaN) reduces
/// x = k·π/2 + r by Cody–Waite in f64 with exact products (f32 lanes are
/// promoted to f64 and rounded once at the end), then evaluates the sin or
/// cos polynomial on |r| ≲ π/4 chosen and signed by the quadrant. If any lane
/// is above the limit (or infinite), a cold block recomputes every lane with
/// the `oxla_cpu_{sin,cos}_*` helpers.
pub(crate) fn sin_cos(
    n: Num,
    b: &mut FunctionBuilder,
    x: Value,
    cos: bool,
    helpers: &Helpers,
) -> Value {
    let fast = if n.is_f32() {
        sin_cos_f32(n, b, x, cos)
    } else {
        let pre = sin_cos_reduce_f64(n, b, x, cos);
        sin_cos_kernel_f64(n, b, pre)
    };
    let fast = if cos {
        fast
    } else {
        // sin x = x, correctly rounded, below 2^-12 (f32) / 2^-26 (f64):
        // x³/6 < ulp(x)/4. This also keeps the sign of -0, which the
        // polynomial's `r + r³·S` (S < 0) and f64's `hi + lo` lose.
        let a = b.ins().fabs(x);
        let tiny = n.fconst(b, 2f64.powi(if n.is_f32() { -12 } else { -26 }));
        let small = n.cmp(b, FloatCC::LessThan, a, tiny);
        n.select(b, small, x, fast)
    };

    let limit = if n.is_f32() {
        SIN_FAST_LIMIT_F32
    } else {
        SIN_FAST_LIMIT_F64
    };
    let a = b.ins().fabs(x);
    let limit = n.fconst(b, limit);
    // NaN compares false and stays on the fast path, which propagates it.
    let big = n.cmp(b, FloatCC::GreaterThan, a, limit);
    let any = if n.ty.is_vector() {
        b.ins().vany_true(big)
    } else {
        big
    };
    let (cold, join) = (b.create_block(), b.create_block());
    b.set_cold_block(cold);
    let result = b.append_block_param(join, n.ty);
    b.ins().brif(any, cold, &[], join, &[fast.into()]);

    b.switch_to_block(cold);
    let lane_ty = n.ty.lane_type();
    let f = helpers.import(b, lane_ty, cos);
    let slow = if n.ty.is_vector() {
        let mut v = fast;
        for lane in 0..n.ty.lane_count() as u8 {
            let xi = b.ins().extractlane(x, lane);
            let call = b.ins().call(f, &[xi]);
            let yi = b.inst_results(call)[0];
            v = b.ins().insertlane(v, yi, lane);
        }
        v
    } else {
        let call = b.ins().call(f, &[x]);
        b.inst_results(call)[0]
    };
    b.ins().jump(join, &[slow.into()]);
    b.switch_to_block(join);
    result
}

/// The f32 fast path: promote to f64 (two halves of a vector), reduce with
/// `PIO2_F32`, evaluate in f64 and round once.
fn sin_cos_f32(n: Num, b: &mut FunctionBuilder, x: Value, cos: bool) -> Value {
    in_f64_lanes(n, b, x, |n64, b, wide| {
        sin_cos_f32_in_f64(n64, b, wide, cos)
    })
}

/// sin/cos of f64 lanes holding f32 values with |x| ≤ 2^27: r = x - k·P1 -
/// k·P2 is exact and P3 leaves an error far below an f32 ulp of the result;
/// Taylor polynomials to degree 11 (sin) and 12 (cos), truncation < 2^-36.
fn sin_cos_f32_in_f64(n: Num, b: &mut FunctionBuilder, x: Value, cos: bool) -> Value {
    let two_over_pi = n.fconst(b, std::f64::consts::FRAC_2_PI);
    let t = b.ins().fmul(x, two_over_pi);
    let k = n.round(b, t);
    let mut r = x;
    for piece in PIO2_F32 {
        let c = n.fconst(b, piece);
        let p = b.ins().fmul(k, c);
        r = b.ins().fsub(r, p);
    }
    let q = n.to_int(b, k, cos as i64);
    let z = b.ins().fmul(r, r);
    let s_poly = n.poly(b, z, &taylor(3, 11, 2, true));
    let r3 = b.ins().fmul(r, z);
    let s = n.mul_add(b, r3, s_poly, r);
    let c = n.poly(b, z, &taylor(0, 12, 2, true));
    by_quadrant(n, b, q, s, c)
}

/// The f64 reduction: r = hi + lo with |r| ≲ π/4 and the quadrant (plus one
/// for cos).
struct Reduced {
    hi: Value,
    lo: Value,
    q: Value,
}

/// `(s, e)` with s = fl(x - y) and s + e = x - y exactly (Knuth's TwoSum).
fn two_diff(b: &mut FunctionBuilder, x: Value, y: Value) -> (Value, Value) {
    let s = b.ins().fsub(x, y);
    let y_part = b.ins().fsub(s, x); // ≈ -y
    let x_part = b.ins().fsub(s, y_part); // ≈ x
    let y_err = b.ins().fadd(y_part, y); // -(error of -y)
    let x_err = b.ins().fsub(x, x_part);
    let e = b.ins().fsub(x_err, y_err);
    (s, e)
}

/// `(s, e)` with s = fl(x + y) and s + e = x + y exactly (Knuth's TwoSum).
pub(crate) fn two_sum(b: &mut FunctionBuilder, x: Value, y: Value) -> (Value, Value) {
    let s = b.ins().fadd(x, y);
    let y_part = b.ins().fsub(s, x);
    let x_part = b.ins().fsub(s, y_part);
    let y_err = b.ins().fsub(y, y_part);
    let x_err = b.ins().fsub(x, x_part);
    let e = b.ins().fadd(x_err, y_err);
    (s, e)
}

/// TwoSum for |x| ≥ |y| (or x's exponent at least y's): three operations.
pub(crate) fn fast_two_sum(b: &mut FunctionBuilder, x: Value, y: Value) -> (Value, Value) {
    let s = b.ins().fadd(x, y);
    let moved = b.ins().fsub(s, x);
    let e = b.ins().fsub(y, moved);
    (s, e)
}

/// x = k·π/2 + hi + lo for |x| ≤ 2^20: k·P1, k·P2, k·P3 are exact, x - k·P1
/// is exact, the next two subtractions keep their rounding errors (TwoSum),
/// so when r is tiny (x near a multiple of π/2) it is exact but for k·P4.
fn sin_cos_reduce_f64(n: Num, b: &mut FunctionBuilder, x: Value, cos: bool) -> Reduced {
    let two_over_pi = n.fconst(b, std::f64::consts::FRAC_2_PI);
    let t = b.ins().fmul(x, two_over_pi);
    let k = n.round(b, t);
    let [p1, p2, p3, p4] = PIO2_F64.map(|p| n.fconst(b, p));
    let t1 = b.ins().fmul(k, p1);
    let d1 = b.ins().fsub(x, t1);
    let t2 = b.ins().fmul(k, p2);
    let (d2, e2) = two_diff(b, d1, t2);
    let t3 = b.ins().fmul(k, p3);
    let (d3, e3) = two_diff(b, d2, t3);
    let t4 = b.ins().fmul(k, p4);
    let e = b.ins().fadd(e2, e3);
    let lo = b.ins().fsub(e, t4);
    // |lo| ≤ |d3|: a fast two-sum renormalizes.
    let (hi, lo) = fast_two_sum(b, d3, lo);
    let q = n.to_int(b, k, cos as i64);
    Reduced { hi, lo, q }
}

/// sin(hi + lo) ≈ hi + (hi³·S(z) + lo·(1 - z/2)) and
/// cos(hi + lo) ≈ w + ((1 - w - z/2) + (z²·C(z) - hi·lo)) with z = hi²,
/// w = 1 - z/2 (fdlibm's arrangement, keeping the rounding of 1 - z/2);
/// Taylor polynomials to degree 17 and 18.
fn sin_cos_kernel_f64(n: Num, b: &mut FunctionBuilder, red: Reduced) -> Value {
    let Reduced { hi, lo, q } = red;
    let z = b.ins().fmul(hi, hi);
    let half = n.fconst(b, 0.5);
    let hz = b.ins().fmul(z, half);

    let s_poly = n.poly(b, z, &taylor(3, 17, 2, true));
    let r3 = b.ins().fmul(hi, z);
    let one = n.fconst(b, 1.0);
    let one_minus_hz = b.ins().fsub(one, hz);
    let lo_cos = b.ins().fmul(lo, one_minus_hz);
    let tail = n.mul_add(b, r3, s_poly, lo_cos);
    let s = b.ins().fadd(hi, tail);

    let c_poly = n.poly(b, z, &taylor(4, 18, 2, true));
    let z2 = b.ins().fmul(z, z);
    let hl = b.ins().fmul(hi, lo);
    let minus_hl = b.ins().fneg(hl);
    let small = n.mul_add(b, z2, c_poly, minus_hl);
    let w = b.ins().fsub(one, hz);
    let lost = b.ins().fsub(one, w);
    let lost = b.ins().fsub(lost, hz);
    let corr = b.ins().fadd(lost, small);
    let c = b.ins().fadd(w, corr);
    by_quadrant(n, b, q, s, c)
}

/// sin or cos of r by quadrant q: odd q takes the cos polynomial, q & 2
/// flips the sign.
fn by_quadrant(n: Num, b: &mut FunctionBuilder, q: Value, s: Value, c: Value) -> Value {
    let one_i = n.iconst(b, 1);
    let odd = b.ins().band(q, one_i);
    let odd_mask = b.ins().ineg(odd);
    let v = n.select(b, odd_mask, c, s);
    let two_i = n.iconst(b, 2);
    let neg = b.ins().band(q, two_i);
    let sign = b.ins().ishl_imm_u(neg, n.int().lane_bits() as i64 - 2);
    let v = n.bits(b, v);
    let v = b.ins().bxor(v, sign);
    n.float_of_bits(b, v)
}

/// `tanh x` = copysign(E/(E + 2), x) with E = e^{2|x|} - 1 computed without
/// cancellation (`expm1_pos`), so small and large |x| share one branch-free
/// formula with no subtraction of nearby values. |x| is clamped where tanh
/// rounds to 1 (9.01 for f32, 19.06 for f64), which also makes ±inf give ±1;
/// NaN fails the compare and propagates. f32 lanes evaluate E/(E + 2) in f64
/// (as sin/cos) and round once: its ~2^-30 relative error is far below half
/// an f32 ulp. f64 returns x itself below 2^-27 (x³/3 is then under a
/// quarter ulp), keeping subnormals exact.
pub(crate) fn tanh(n: Num, b: &mut FunctionBuilder, x: Value) -> Value {
    let a = b.ins().fabs(x);
    let limit = n.fconst(b, if n.is_f32() { 10.0 } else { 20.0 });
    let over = n.cmp(b, FloatCC::GreaterThan, a, limit);
    let a = n.select(b, over, limit, a);
    let t = if n.is_f32() {
        in_f64_lanes(n, b, a, |n64, b, a64| tanh_pos(n64, b, a64, true))
    } else {
        tanh_pos(n, b, a, false)
    };
    let y = n.with_sign_of(b, t, x);
    if n.is_f32() {
        return y;
    }
    let tiny = n.fconst(b, 2f64.powi(-27));
    let small = n.cmp(b, FloatCC::LessThan, a, tiny);
    n.select(b, small, x, y)
}

/// E/(E + 2), E = e^{2a} - 1, for 0 ≤ a ≤ 20 in f64 lanes; `for_f32` as in
/// `expm1_core`.
fn tanh_pos(n: Num, b: &mut FunctionBuilder, a: Value, for_f32: bool) -> Value {
    let a2 = b.ins().fadd(a, a);
    let e = expm1_core(n, b, a2, for_f32);
    let two = n.fconst(b, 2.0);
    let den = b.ins().fadd(e, two);
    b.ins().fdiv(e, den)
}

/// e^y - 1 for -45 ≤ y ≤ 40 (f64 lanes): y = k·ln2 + r, |r| ≤ ln2/2;
/// e^r - 1 = r + r²·(1/2! + r/3! + ... + r^(d-2)/d!) (Taylor, relative
/// truncation below r^d/(d+1)!), then e^y - 1 = 2^k·(e^r - 1) + (2^k - 1).
/// k = 0 (|y| < 0.35) leaves e^r - 1 alone, so small results keep their
/// relative accuracy; for k ≥ 1, 2^k - 1 ≥ 1 and |2^k·(e^r - 1)| ≤
/// 0.6·(2^k - 1), so the sum loses at most about a bit; for k ≤ -1,
/// 2^k - 1 ≤ -½ is exact (k ≥ -53; below, -1 is the rounded result) and
/// |2^k·(e^r - 1)| ≤ 0.21, so the sum cancels at most a factor 1.7. f64:
/// d = 13 (truncation 2^-56) and ln2 in two pieces; `for_f32` (a relative
/// error of ~2^-30 suffices): d = 8 (2^-30.7) and one rounded ln2 (k·ln2
/// off by < 2^-48).
fn expm1_core(n: Num, b: &mut FunctionBuilder, y: Value, for_f32: bool) -> Value {
    let log2e = n.fconst(b, std::f64::consts::LOG2_E);
    let t = b.ins().fmul(y, log2e);
    let k = n.round(b, t);
    let (r, degree) = if for_f32 {
        let minus_ln2 = n.fconst(b, -std::f64::consts::LN_2);
        (n.mul_add(b, k, minus_ln2, y), 8)
    } else {
        let (ln2_hi, ln2_lo) = n.ln2_split();
        let c_hi = n.fconst(b, ln2_hi);
        let c_lo = n.fconst(b, ln2_lo);
        // k·ln2_hi is exact and so is y - k·ln2_hi (Sterbenz for k ≥ 1).
        let p = b.ins().fmul(k, c_hi);
        let r = b.ins().fsub(y, p);
        let p = b.ins().fmul(k, c_lo);
        (b.ins().fsub(r, p), 13)
    };
    let q = n.poly(b, r, &taylor(2, degree, 1, false));
    let r2 = b.ins().fmul(r, r);
    let em1_r = n.mul_add(b, r2, q, r);
    let s = n.pow2(b, k);
    let one = n.fconst(b, 1.0);
    let s_m1 = b.ins().fsub(s, one);
    n.mul_add(b, s, em1_r, s_m1)
}

/// `e^x - 1` for every x: f32 in f64 lanes, rounded once. Arguments are
/// clamped to [-45, 40] for `expm1_core` (NaN kept: the comparisons are
/// false); below -45 the result rounds to -1 in both types, above 40 it is
/// `exp(x)` (e^x - 1 and e^x differ by less than 2^-57 relative there), and
/// for |x| < 2^-54 it is x itself (x²/2 is under a quarter ulp of x), which
/// keeps -0.0 and subnormals exact.
pub(crate) fn expm1(n: Num, b: &mut FunctionBuilder, x: Value) -> Value {
    if n.is_f32() {
        in_f64_lanes(n, b, x, |n64, b, x64| expm1_all(n64, b, x64, true))
    } else {
        expm1_all(n, b, x, false)
    }
}

fn expm1_all(n: Num, b: &mut FunctionBuilder, x: Value, for_f32: bool) -> Value {
    let hi = n.fconst(b, 40.0);
    let lo = n.fconst(b, -45.0);
    let above = n.cmp(b, FloatCC::GreaterThan, x, hi);
    let xc = n.select(b, above, hi, x);
    let below = n.cmp(b, FloatCC::LessThan, xc, lo);
    let xc = n.select(b, below, lo, xc);
    let core = expm1_core(n, b, xc, for_f32);
    let e = exp(n, b, x);
    let y = n.select(b, above, e, core);
    let a = b.ins().fabs(x);
    let tiny = n.fconst(b, 2f64.powi(-54));
    let small = n.cmp(b, FloatCC::LessThan, a, tiny);
    n.select(b, small, x, y)
}

/// `erf(x)` by fdlibm's method (`oxla_core::ops::erf` has the ranges and
/// coefficients), every range evaluated and the right one selected, so
/// there is no branch; f32 in f64 lanes, rounded once. NaN gives NaN, ±inf
/// gives ±1, and -0.0 stays -0.0 (`x + x·y` of a negative zero).
pub(crate) fn erf(n: Num, b: &mut FunctionBuilder, x: Value) -> Value {
    if n.is_f32() {
        in_f64_lanes(n, b, x, erf_f64)
    } else {
        erf_f64(n, b, x)
    }
}

fn erf_f64(n: Num, b: &mut FunctionBuilder, x: Value) -> Value {
    use oxla_core::ops::erf as c;
    let a = b.ins().fabs(x);
    let one = n.fconst(b, 1.0);
    // |x| < 0.84375
    let z = b.ins().fmul(x, x);
    let p = n.poly(b, z, &c::PP);
    let q = n.poly(b, z, &c::QQ);
    let y = b.ins().fdiv(p, q);
    let small = n.mul_add(b, x, y, x);
    // |x| < 1.25
    let s = b.ins().fsub(a, one);
    let p = n.poly(b, s, &c::PA);
    let q = n.poly(b, s, &c::QA);
    let r = b.ins().fdiv(p, q);
    let erx = n.fconst(b, c::ERX);
    let mid = b.ins().fadd(erx, r);
    // |x| < 6
    let a2 = b.ins().fmul(a, a);
    let s = b.ins().fdiv(one, a2);
    let boundary = n.fconst(b, f64::from_bits(c::NEAR_FAR));
    let near = n.cmp(b, FloatCC::LessThan, a, boundary);
    let ra = n.poly(b, s, &c::RA);
    let rb = n.poly(b, s, &c::RB);
    let sa = n.poly(b, s, &c::SA);
    let sb = n.poly(b, s, &c::SB);
    let r = n.select(b, near, ra, rb);
    let q = n.select(b, near, sa, sb);
    let high_word = n.iconst(b, 0xffff_ffff_0000_0000_u64 as i64);
    let bits = n.bits(b, a);
    let bits = b.ins().band(bits, high_word);
    let z = n.float_of_bits(b, bits);
    let zz = b.ins().fmul(z, z);
    let c0 = n.fconst(b, 0.5625);
    let t = b.ins().fadd(zz, c0);
    let t = b.ins().fneg(t);
    let e1 = exp(n, b, t);
    let zm = b.ins().fsub(z, a);
    let zp = b.ins().fadd(z, a);
    let d = b.ins().fmul(zm, zp);
    let rq = b.ins().fdiv(r, q);
    let u = b.ins().fadd(d, rq);
    let e2 = exp(n, b, u);
    let e = b.ins().fmul(e1, e2);
    let e = b.ins().fdiv(e, a);
    let far = b.ins().fsub(one, e);
    // Pick the range.
    let six = n.fconst(b, 6.0);
    let below_six = n.cmp(b, FloatCC::LessThan, a, six);
    let mag = n.select(b, below_six, far, one);
    let five_fourths = n.fconst(b, 1.25);
    let below_mid = n.cmp(b, FloatCC::LessThan, a, five_fourths);
    let mag = n.select(b, below_mid, mid, mag);
    let signed = n.with_sign_of(b, mag, x);
    let lim = n.fconst(b, 0.84375);
    let below_small = n.cmp(b, FloatCC::LessThan, a, lim);
    let y = n.select(b, below_small, small, signed);
    let nan = n.cmp(b, FloatCC::Unordered, x, x);
    n.select(b, nan, x, y)
}

/// `f` (a function of f64 lanes) applied to f32 lanes: promoted to f64 (the
/// two halves of a vector separately), rounded once back to f32.
pub(crate) fn in_f64_lanes(
    n: Num,
    b: &mut FunctionBuilder,
    x: Value,
    f: impl Fn(Num, &mut FunctionBuilder, Value) -> Value,
) -> Value {
    in_f64_lanes_n(n, b, &[x], |n64, b, xs| f(n64, b, xs[0]))
}

/// `in_f64_lanes` for a function of several operands of the same shape.
pub(crate) fn in_f64_lanes_n(
    n: Num,
    b: &mut FunctionBuilder,
    xs: &[Value],
    f: impl Fn(Num, &mut FunctionBuilder, &[Value]) -> Value,
) -> Value {
    if !n.ty.is_vector() {
        let n64 = Num {
            ty: types::F64,
            fma: n.fma,
        };
        let wide: Vec<Value> = xs
            .iter()
            .map(|&x| b.ins().fpromote(types::F64, x))
            .collect();
        let y = f(n64, b, &wide);
        return b.ins().fdemote(types::F32, y);
    }
    let n64 = Num {
        ty: types::F64X2,
        fma: n.fma,
    };
    let bytes = |b: &mut FunctionBuilder, v: Value| {
        b.ins()
            .bitcast(types::I8X16, bitcast_flags(types::I8X16), v)
    };
    let mask = |b: &mut FunctionBuilder, m: [u8; 16]| {
        b.func.dfg.immediates.push(ConstantData::from(m.as_slice()))
    };
    // Lanes 2, 3 moved down to 0, 1.
    let high_down = mask(
        b,
        [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15],
    );
    let highs: Vec<Value> = xs
        .iter()
        .map(|&x| {
            let xb = bytes(b, x);
            let xh = b.ins().shuffle(xb, xb, high_down);
            b.ins()
                .bitcast(types::F32X4, bitcast_flags(types::F32X4), xh)
        })
        .collect();
    let halves = [xs.to_vec(), highs].map(|half| {
        let wide: Vec<Value> = half.iter().map(|&h| b.ins().fvpromote_low(h)).collect();
        let y = f(n64, b, &wide);
        let narrow = b.ins().fvdemote(y);
        bytes(b, narrow)
    });
    // Low 8 bytes of each half: lanes 0, 1 then 2, 3.
    let join = mask(b, [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]);
    let y = b.ins().shuffle(halves[0], halves[1], join);
    b.ins()
        .bitcast(types::F32X4, bitcast_flags(types::F32X4), y)
}

/// `x^k` by binary exponentiation; negative k gives `1/x^|k|`, k = 0 gives 1.
pub(crate) fn powi(n: Num, b: &mut FunctionBuilder, x: Value, k: i32) -> Value {
    let mut e = k.unsigned_abs();
    let mut result: Option<Value> = None;
    let mut base = x;
    while e > 0 {
        if e & 1 == 1 {
            result = Some(match result {
                Some(r) => b.ins().fmul(r, base),
                None => base,
            });
        }
        e >>= 1;
        if e > 0 {
            base = b.ins().fmul(base, base);
        }
    }
    let one = n.fconst(b, 1.0);
    let pos = result.unwrap_or(one);
    if k < 0 {
        b.ins().fdiv(one, pos)
    } else {
        pos
    }
}
