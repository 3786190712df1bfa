//! Lowering of the arithmetic instructions (`Const`, `Unary`, `Binary`,
//! `Cmp`, `Select`) to PTX, with the interpreter's exact semantics.
//!
//! Arithmetic uses explicit `.rn` rounding so `ptxas` never contracts a
//! multiply and an add into an `fma` (which would differ from the
//! interpreter). Each instruction computes in the wider of its operand and
//! result types, like the interpreter computes in `f64` then rounds.

use crate::func::{Class, Func};
use crate::math;
use crate::pow;
use crate::rounding;
use crate::values::{convert, float_imm, Ty, Val};
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};

/// A constant of type `ty`.
pub(crate) fn constant(f: &mut Func, ty: Ty, c: f64) -> Val {
    let d = f.reg(ty.class());
    match ty {
        // `setp` with equal/unequal immediates yields a constant predicate.
        Ty::Pred => f.ins(format!(
            "setp.{}.u32 {d}, 0, 0",
            if c != 0.0 { "eq" } else { "ne" }
        )),
        t => f.ins(format!("mov.{} {d}, {}", t.suffix(), float_imm(t, c))),
    }
    Val { ty, reg: d }
}

pub(crate) fn unary(f: &mut Func, op: UnaryOp, x: &Val, result: Ty) -> Val {
    let t = x.ty.widen(result);
    let x = convert(f, x, t);
    let r = &x.reg;
    let s = t.suffix();
    let out = match op {
        UnaryOp::Neg => simple(f, t, format!("neg.{s}"), r),
        UnaryOp::Sqrt => simple(f, t, format!("sqrt.rn.{s}"), r),
        UnaryOp::Exp if t == Ty::F32 => math::exp_f32(f, r),
        UnaryOp::Exp => math::exp_f64(f, r),
        UnaryOp::Log if t == Ty::F32 => math::log_f32(f, r),
        UnaryOp::Log => math::log_f64(f, r),
        UnaryOp::Sin if t == Ty::F32 => math::sin_f32(f, r),
        UnaryOp::Sin => math::sincos_f64(f, r, 0),
        UnaryOp::Cos if t == Ty::F32 => math::cos_f32(f, r),
        UnaryOp::Cos => math::sincos_f64(f, r, 1),
        UnaryOp::Tanh if t == Ty::F32 => math::tanh_f32(f, r),
        UnaryOp::Tanh => math::tanh_f64(f, r),
        UnaryOp::Powi(n) => powi(f, t, r, n),
        UnaryOp::ExpM1 if t == Ty::F32 => math::expm1_f32(f, r),
        UnaryOp::ExpM1 => math::expm1_f64(f, r),
        UnaryOp::Erf if t == Ty::F32 => math::erf_f32(f, r),
        UnaryOp::Erf => math::erf_f64(f, r),
        UnaryOp::Round(mode) => rounding::round(f, t, r, mode),
        UnaryOp::Sign => rounding::sign(f, t, r),
        UnaryOp::Signum => rounding::signum(f, t, r),
    };
    convert(f, &Val { ty: t, reg: out }, result)
}

fn simple(f: &mut Func, t: Ty, opcode: String, x: &str) -> String {
    let d = f.reg(t.class());
    f.ins(format!("{opcode} {d}, {x}"));
    d
}

/// `x^n` by repeated squaring, in the order of compiler-rt's `__powidf2`
/// (which Rust's `powi` calls), so `f64` results match bit for bit.
fn powi(f: &mut Func, t: Ty, x: &str, n: i32) -> String {
    let s = t.suffix();
    let mut acc: Option<String> = None;
    let mut base = x.to_string();
    let mut e = n.unsigned_abs();
    while e > 0 {
        if e & 1 == 1 {
            acc = Some(match acc {
                None => base.clone(),
                Some(a) => {
                    let d = f.reg(t.class());
                    f.ins(format!("mul.rn.{s} {d}, {a}, {base}"));
                    d
                }
            });
        }
        e >>= 1;
        if e > 0 {
            let d = f.reg(t.class());
            f.ins(format!("mul.rn.{s} {d}, {base}, {base}"));
            base = d;
        }
    }
    let one = float_imm(t, 1.0);
    let d = f.reg(t.class());
    match acc {
        None => f.ins(format!("mov.{s} {d}, {one}")),
        Some(a) if n < 0 => f.ins(format!("div.rn.{s} {d}, {one}, {a}")),
        Some(a) => f.ins(format!("mov.{s} {d}, {a}")),
    }
    d
}

pub(crate) fn binary(f: &mut Func, op: BinaryOp, a: &Val, b: &Val, result: Ty) -> Val {
    let t = a.ty.widen(b.ty).widen(result);
    let a = convert(f, a, t);
    let b = convert(f, b, t);
    let s = t.suffix();
    let d = f.reg(t.class());
    match op {
        BinaryOp::Add => f.ins(format!("add.rn.{s} {d}, {}, {}", a.reg, b.reg)),
        BinaryOp::Sub => f.ins(format!("sub.rn.{s} {d}, {}, {}", a.reg, b.reg)),
        BinaryOp::Mul => f.ins(format!("mul.rn.{s} {d}, {}, {}", a.reg, b.reg)),
        BinaryOp::Div => f.ins(format!("div.rn.{s} {d}, {}, {}", a.reg, b.reg)),
        // `if a > b || a.is_nan() { a } else { b }` (the interpreter's
        // rule): NaN if either operand is NaN; at a tie the bits ANDed
        // (max) or ORed (min), so `max(±0, ∓0) = +0`, `min = -0` (JAX's).
        // PTX `max` ignores NaN, and `max.NaN` does not promise a sign on
        // signed-zero ties; see `max_min_model` below.
        BinaryOp::Max | BinaryOp::Min => {
            let cmp = if op == BinaryOp::Max { "gt" } else { "lt" };
            let (p, a_nan) = (f.reg(Class::Pred), f.reg(Class::Pred));
            f.ins(format!("setp.{cmp}.{s} {p}, {}, {}", a.reg, b.reg));
            f.ins(format!("setp.nan.{s} {a_nan}, {0}, {0}", a.reg));
            f.ins(format!("or.pred {p}, {p}, {a_nan}"));
            f.ins(format!("selp.{s} {d}, {}, {}, {p}", a.reg, b.reg));
            // At a tie, the bitwise AND (max) or OR (min) of the operands:
            // +0 for max and -0 for min of zeros of either sign (JAX's rule,
            // `BinaryOp::eval`); the operand itself for equal non-zero ones.
            let (tie, z) = (f.reg(Class::Pred), f.reg(t.class()));
            let (bop, bits) = (
                if op == BinaryOp::Max { "and" } else { "or" },
                if t == Ty::F32 { "b32" } else { "b64" },
            );
            f.ins(format!("setp.eq.{s} {tie}, {}, {}", a.reg, b.reg));
            f.ins(format!("{bop}.{bits} {z}, {}, {}", a.reg, b.reg));
            f.ins(format!("selp.{s} {d}, {z}, {d}, {tie}"));
        }
        BinaryOp::Pow => {
            let r = if t == Ty::F32 {
                pow::pow_f32(f, &a.reg, &b.reg)
            } else {
                pow::pow_f64(f, &a.reg, &b.reg)
            };
            f.ins(format!("mov.{s} {d}, {r}"));
        }
    }
    convert(f, &Val { ty: t, reg: d }, result)
}

pub(crate) fn cmp(f: &mut Func, op: CmpOp, a: &Val, b: &Val) -> Val {
    let t = a.ty.widen(b.ty);
    let a = convert(f, a, t);
    let b = convert(f, b, t);
    // Ordered comparisons are false on NaN, like Rust; `!=` is unordered.
    let name = match op {
        CmpOp::Lt => "lt",
        CmpOp::Le => "le",
        CmpOp::Gt => "gt",
        CmpOp::Ge => "ge",
        CmpOp::Eq => "eq",
        CmpOp::Ne => "neu",
    };
    let p = f.reg(Class::Pred);
    f.ins(format!(
        "setp.{name}.{} {p}, {}, {}",
        t.suffix(),
        a.reg,
        b.reg
    ));
    Val {
        ty: Ty::Pred,
        reg: p,
    }
}

pub(crate) fn select(f: &mut Func, c: &Val, a: &Val, b: &Val, result: Ty) -> Val {
    let c = convert(f, c, Ty::Pred);
    let a = convert(f, a, result);
    let b = convert(f, b, result);
    let d = f.reg(result.class());
    if result == Ty::Pred {
        // (c and a) or (not c and b): `selp` has no predicate form.
        let t = f.reg(Class::Pred);
        let nc = f.reg(Class::Pred);
        f.ins(format!("and.pred {t}, {}, {}", c.reg, a.reg));
        f.ins(format!("not.pred {nc}, {}", c.reg));
        f.ins(format!("and.pred {nc}, {nc}, {}", b.reg));
        f.ins(format!("or.pred {d}, {t}, {nc}"));
    } else {
        f.ins(format!(
            "selp.{} {d}, {}, {}, {}",
            result.suffix(),
            a.reg,
            b.reg,
            c.reg
        ));
    }
    Val { ty: result, reg: d }
}

/// The four instructions `binary` emits for `Max`/`Min`, step by step:
/// `setp.gt`/`setp.lt` (false on NaN), `setp.nan a, a`, `or.pred`, `selp`.
#[cfg(test)]
fn max_min_model(max: bool, a: f64, b: f64) -> f64 {
    if a == b {
        let (x, y) = (a.to_bits(), b.to_bits());
        return f64::from_bits(if max { x & y } else { x | y });
    }
    let p = if max { a > b } else { a < b };
    let a_nan = a.is_nan();
    if p || a_nan {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::max_min_model;

    #[test]
    fn max_min_propagate_nan_from_both_operands_and_order_signed_zeros() {
        let vals = [
            f64::NAN,
            f64::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            2.0,
            f64::INFINITY,
        ];
        for &a in &vals {
            for &b in &vals {
                for max in [true, false] {
                    let got = max_min_model(max, a, b);
                    // The project's rule, written independently.
                    let want = if a.is_nan() || b.is_nan() {
                        f64::NAN
                    } else if a == 0.0 && b == 0.0 {
                        // JAX: max(±0, ∓0) = +0, min = -0, in either order.
                        let neg = if max {
                            a.is_sign_negative() && b.is_sign_negative()
                        } else {
                            a.is_sign_negative() || b.is_sign_negative()
                        };
                        if neg {
                            -0.0
                        } else {
                            0.0
                        }
                    } else if (max && a > b) || (!max && a < b) {
                        a
                    } else {
                        b
                    };
                    assert_eq!(got.is_nan(), want.is_nan(), "{max} {a} {b}");
                    if !want.is_nan() {
                        assert_eq!(got.to_bits(), want.to_bits(), "{max} {a} {b}");
                    }
                }
            }
        }
    }
}
