//! Rounding to an integer (`floor`, `ceil`, `trunc`, `round`,
//! `round_ties_even`) and the sign functions, with SSE2-level instructions
//! only.
//!
//! Why not Cranelift's `floor`/`ceil`/`nearest`/`trunc`: on x86-64 they are
//! `roundps`/`roundsd`, which need SSE4.1; without it Cranelift 0.135.8
//! (`x64_round` in its `lower.isle`) calls `floorf`/`floor`/... once per
//! lane, four calls in an f32x4 loop, and baseline x86-64 is one of our two
//! ISA levels; nor has any x86 instruction Rust's `round` (halfway away from
//! zero). So one sequence serves both levels. As in `math`, the nearest integer
//! of `a = |x|` is `(a + 2^p) − 2^p` (p = 52 for f64, 23 for f32): for
//! `a < 2^p` the sum lies in `[2^p, 2^(p+1))`, where the spacing is 1, so the
//! addition rounds `a` to an integer, ties to even, and the subtraction is
//! exact. Values with `a ≥ 2^p` are integers already (or ±inf), and NaN
//! fails the `a < 2^p` test, so both are passed through. Each mode is a
//! branch-free fix-up of that result; the sign bit of `x` is put back last,
//! so `(-0.3).trunc()` is -0.0 as in Rust.

use crate::math::Num;
use cranelift_codegen::ir::{condcodes::FloatCC, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;
use oxla_core::ops::elementwise::Rounding;

/// `x` rounded to an integer as `mode` says, exactly, for every input.
pub(crate) fn round(n: Num, b: &mut FunctionBuilder, x: Value, mode: Rounding) -> Value {
    match mode {
        Rounding::HalfEven => {
            let a = b.ins().fabs(x);
            let m = nearest_even_magnitude(n, b, a);
            n.with_sign_of(b, m, x)
        }
        Rounding::Trunc => trunc(n, b, x),
        Rounding::HalfAway => {
            // trunc(a) + 1 where the dropped fraction a − trunc(a) (exact) is
            // at least ½.
            let a = b.ins().fabs(x);
            let t = trunc_magnitude(n, b, a);
            let frac = b.ins().fsub(a, t);
            let half = n.fconst(b, 0.5);
            let up = n.cmp(b, FloatCC::GreaterThanOrEqual, frac, half);
            let one = n.fconst(b, 1.0);
            let t1 = b.ins().fadd(t, one);
            let m = n.select(b, up, t1, t);
            n.with_sign_of(b, m, x)
        }
        Rounding::Floor | Rounding::Ceil => {
            // trunc(x) moved by one toward -inf (floor) or +inf (ceil) where
            // it went the other way; NaN compares false and stays.
            let t = trunc(n, b, x);
            let (cc, step) = if mode == Rounding::Floor {
                (FloatCC::GreaterThan, -1.0)
            } else {
                (FloatCC::LessThan, 1.0)
            };
            let moved = n.cmp(b, cc, t, x);
            let step = n.fconst(b, step);
            let t1 = b.ins().fadd(t, step);
            n.select(b, moved, t1, t)
        }
    }
}

/// `jnp.sign`: 1 above 0, -1 below, the operand itself for ±0 and NaN.
pub(crate) fn sign(n: Num, b: &mut FunctionBuilder, x: Value) -> Value {
    let zero = n.fconst(b, 0.0);
    let one = n.fconst(b, 1.0);
    let minus_one = n.fconst(b, -1.0);
    let pos = n.cmp(b, FloatCC::GreaterThan, x, zero);
    let neg = n.cmp(b, FloatCC::LessThan, x, zero);
    let y = n.select(b, neg, minus_one, x);
    n.select(b, pos, one, y)
}

/// Rust's `signum`: 1 with the sign bit of `x`, NaN for NaN.
pub(crate) fn signum(n: Num, b: &mut FunctionBuilder, x: Value) -> Value {
    let one = n.fconst(b, 1.0);
    let s = n.with_sign_of(b, one, x);
    let nan = n.cmp(b, FloatCC::Unordered, x, x);
    n.select(b, nan, x, s)
}

/// `trunc(x)` with the sign of `x` (so -0.0 for -0.5 < x ≤ -0.0).
fn trunc(n: Num, b: &mut FunctionBuilder, x: Value) -> Value {
    let a = b.ins().fabs(x);
    let m = trunc_magnitude(n, b, a);
    n.with_sign_of(b, m, x)
}

/// `trunc(a)` for `a = |x|`: the nearest integer, less one where that
/// rounded up.
fn trunc_magnitude(n: Num, b: &mut FunctionBuilder, a: Value) -> Value {
    let r = nearest_even_magnitude(n, b, a);
    let up = n.cmp(b, FloatCC::GreaterThan, r, a);
    let one = n.fconst(b, 1.0);
    let r1 = b.ins().fsub(r, one);
    n.select(b, up, r1, r)
}

/// The integer nearest to `a = |x|` (ties to even); `a` itself when it is at
/// least 2^p, inf or NaN.
fn nearest_even_magnitude(n: Num, b: &mut FunctionBuilder, a: Value) -> Value {
    let p = if n.is_f32() { 23 } else { 52 };
    let big = n.fconst(b, 2f64.powi(p));
    let s = b.ins().fadd(a, big);
    let r = b.ins().fsub(s, big);
    let small = n.cmp(b, FloatCC::LessThan, a, big);
    n.select(b, small, r, a)
}
