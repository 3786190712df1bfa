//! Rounding to an integer and the sign functions. PTX's `cvt.rXi` to the
//! same float type is IEEE `roundToIntegral` (exact, keeps the sign of a
//! zero, passes ±inf and NaN through), so four modes are one instruction;
//! Rust's `round` (halfway away from zero) has none and is built from
//! `trunc`.

use crate::func::{Class, Func};
use crate::values::{float_imm, Ty};
use oxla_core::ops::elementwise::Rounding;

/// `x` (a register of float type `t`) rounded as `mode` says.
pub(crate) fn round(f: &mut Func, t: Ty, x: &str, mode: Rounding) -> String {
    let s = t.suffix();
    let cvt = |f: &mut Func, rounding: &str| {
        let d = f.reg(t.class());
        f.ins(format!("cvt.{rounding}.{s}.{s} {d}, {x}"));
        d
    };
    match mode {
        Rounding::Floor => cvt(f, "rmi"),
        Rounding::Ceil => cvt(f, "rpi"),
        Rounding::Trunc => cvt(f, "rzi"),
        Rounding::HalfEven => cvt(f, "rni"),
        Rounding::HalfAway => {
            // trunc(x) ± 1 where |x − trunc(x)| (exact) is at least ½; the
            // comparison is false for ±inf (inf − inf is NaN) and NaN.
            let tr = cvt(f, "rzi");
            let frac = f.reg(t.class());
            f.ins(format!("sub.rn.{s} {frac}, {x}, {tr}"));
            f.ins(format!("abs.{s} {frac}, {frac}"));
            let up = f.reg(Class::Pred);
            f.ins(format!("setp.ge.{s} {up}, {frac}, {}", float_imm(t, 0.5)));
            let one = signed_one(f, t, x);
            let away = f.reg(t.class());
            f.ins(format!("add.rn.{s} {away}, {tr}, {one}"));
            let d = f.reg(t.class());
            f.ins(format!("selp.{s} {d}, {away}, {tr}, {up}"));
            d
        }
    }
}

/// `jnp.sign`: 1 above 0, -1 below, `x` itself for ±0 and NaN.
pub(crate) fn sign(f: &mut Func, t: Ty, x: &str) -> String {
    let s = t.suffix();
    let (pos, neg) = (f.reg(Class::Pred), f.reg(Class::Pred));
    f.ins(format!("setp.gt.{s} {pos}, {x}, {}", float_imm(t, 0.0)));
    f.ins(format!("setp.lt.{s} {neg}, {x}, {}", float_imm(t, 0.0)));
    let y = f.reg(t.class());
    f.ins(format!("selp.{s} {y}, {}, {x}, {neg}", float_imm(t, -1.0)));
    let d = f.reg(t.class());
    f.ins(format!("selp.{s} {d}, {}, {y}, {pos}", float_imm(t, 1.0)));
    d
}

/// Rust's `signum`: 1 with the sign bit of `x`, NaN for NaN.
pub(crate) fn signum(f: &mut Func, t: Ty, x: &str) -> String {
    let s = t.suffix();
    let one = signed_one(f, t, x);
    let nan = f.reg(Class::Pred);
    f.ins(format!("setp.nan.{s} {nan}, {x}, {x}"));
    let d = f.reg(t.class());
    f.ins(format!("selp.{s} {d}, {x}, {one}, {nan}"));
    d
}

/// 1 with the sign bit of `x` (`copysign` takes registers only).
fn signed_one(f: &mut Func, t: Ty, x: &str) -> String {
    let s = t.suffix();
    let one = f.reg(t.class());
    f.ins(format!("mov.{s} {one}, {}", float_imm(t, 1.0)));
    let d = f.reg(t.class());
    f.ins(format!("copysign.{s} {d}, {x}, {one}"));
    d
}
