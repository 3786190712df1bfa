//! `f16` and `bf16` storage: widening to `f32` on load and rounding back
//! (to nearest, ties to even) on store, with integer and float operations
//! that work alike on `i32`/`f32` scalars and `i32x4`/`f32x4` vectors.
//! Half values travel as `i32` (lanes) holding the 16 bits.

use crate::math::Num;
use cranelift_codegen::ir::{condcodes::FloatCC, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// `f16` bits (in an `i32`) to `f32`.
pub(crate) fn f16_to_f32(n: Num, b: &mut FunctionBuilder, h: Value) -> Value {
    let sign_mask = n.iconst(b, 0x8000);
    let sign = b.ins().band(h, sign_mask);
    let sign = b.ins().ishl_imm_u(sign, 16);
    let abs_mask = n.iconst(b, 0x7fff);
    let abs = b.ins().band(h, abs_mask);
    let shifted = b.ins().ishl_imm_u(abs, 13);
    // Rebias the exponent by a multiply: exact for normals and subnormals.
    let f = n.float_of_bits(b, shifted);
    let rebias = n.fconst(b, 2f64.powi(112));
    let f = b.ins().fmul(f, rebias);
    // Infinities and NaNs keep their payload under an all-ones exponent.
    let exp_ones = n.iconst(b, 0x7f80_0000);
    let special = b.ins().bor(shifted, exp_ones);
    let limit = n.fconst(b, 65536.0);
    let is_special = n.cmp(b, FloatCC::GreaterThanOrEqual, f, limit);
    let f_bits = n.bits(b, f);
    let out = n.select(b, is_special, special, f_bits);
    let out = b.ins().bor(out, sign);
    n.float_of_bits(b, out)
}

/// `f32` to `f16` bits (in an `i32`), rounding to nearest even; overflow
/// gives infinity and NaN a quiet NaN.
pub(crate) fn f32_to_f16(n: Num, b: &mut FunctionBuilder, x: Value) -> Value {
    let bits = n.bits(b, x);
    let sign_mask = n.iconst(b, 0x8000_0000);
    let sign = b.ins().band(bits, sign_mask);
    let sign = b.ins().ushr_imm_u(sign, 16);
    let a = b.ins().fabs(x);
    let a_bits = n.bits(b, a);

    // Normal results: rebias the exponent and round the dropped 13 bits.
    let odd = b.ins().ushr_imm_u(a_bits, 13);
    let one = n.iconst(b, 1);
    let odd = b.ins().band(odd, one);
    let rebias = n.iconst(b, ((15 - 127) << 23) + 0xfff);
    let normal = b.ins().iadd(a_bits, rebias);
    let normal = b.ins().iadd(normal, odd);
    let normal = b.ins().ushr_imm_u(normal, 13);

    // Subnormal results: let a float add by 0.5 do the rounding.
    let half = n.fconst(b, 0.5);
    let sub = b.ins().fadd(a, half);
    let sub = n.bits(b, sub);
    let half_bits = n.iconst(b, 0x3f00_0000);
    let sub = b.ins().isub(sub, half_bits);

    let min_normal = n.fconst(b, 2f64.powi(-14));
    let is_sub = n.cmp(b, FloatCC::LessThan, a, min_normal);
    let out = n.select(b, is_sub, sub, normal);
    let max = n.fconst(b, 65536.0);
    let too_big = n.cmp(b, FloatCC::GreaterThanOrEqual, a, max);
    let inf = n.iconst(b, 0x7c00);
    let out = n.select(b, too_big, inf, out);
    let is_nan = n.cmp(b, FloatCC::NotEqual, x, x);
    let nan = n.iconst(b, 0x7e00);
    let out = n.select(b, is_nan, nan, out);
    b.ins().bor(out, sign)
}

/// `bf16` bits (in an `i32`) to `f32`: the upper half of the `f32` bits.
pub(crate) fn bf16_to_f32(n: Num, b: &mut FunctionBuilder, h: Value) -> Value {
    let bits = b.ins().ishl_imm_u(h, 16);
    n.float_of_bits(b, bits)
}

/// `f32` to `bf16` bits (in an `i32`), rounding to nearest even; NaN stays
/// a (quiet) NaN.
pub(crate) fn f32_to_bf16(n: Num, b: &mut FunctionBuilder, x: Value) -> Value {
    let bits = n.bits(b, x);
    let odd = b.ins().ushr_imm_u(bits, 16);
    let one = n.iconst(b, 1);
    let odd = b.ins().band(odd, one);
    let round = n.iconst(b, 0x7fff);
    let r = b.ins().iadd(bits, round);
    let r = b.ins().iadd(r, odd);
    let r = b.ins().ushr_imm_u(r, 16);
    let quiet = b.ins().ushr_imm_u(bits, 16);
    let quiet_bit = n.iconst(b, 0x40);
    let quiet = b.ins().bor(quiet, quiet_bit);
    let is_nan = n.cmp(b, FloatCC::NotEqual, x, x);
    n.select(b, is_nan, quiet, r)
}
