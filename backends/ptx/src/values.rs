//! Kernel values in registers: their compute types, conversions between
//! them, and rounding to the instruction's declared type.
//!
//! Floats compute in `f32` or `f64` registers; `f16`/`bf16` values live in
//! `f32` registers and are rounded after every instruction (exactly as the
//! interpreter rounds); `bool` values live in predicates.

use crate::func::{f32_imm, f64_imm, Class, Func};
use oxla_core::DType;

/// The register type a value computes in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Ty {
    F32,
    F64,
    Pred,
}

impl Ty {
    /// The compute type of a kernel value type.
    pub(crate) fn of(dtype: DType) -> Result<Ty, String> {
        match dtype {
            DType::F16 | DType::BF16 | DType::F32 => Ok(Ty::F32),
            DType::F64 => Ok(Ty::F64),
            DType::Bool => Ok(Ty::Pred),
            DType::I32 | DType::I64 => Err(format!(
                "the PTX backend does not compute on {dtype} values"
            )),
        }
    }

    pub(crate) fn class(self) -> Class {
        match self {
            Ty::F32 => Class::F32,
            Ty::F64 => Class::F64,
            Ty::Pred => Class::Pred,
        }
    }

    /// The PTX type suffix of a float compute type.
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::Pred => "pred",
        }
    }

    /// The wider of two types for arithmetic (`bool` computes as `f32`).
    pub(crate) fn widen(self, other: Ty) -> Ty {
        if self == Ty::F64 || other == Ty::F64 {
            Ty::F64
        } else {
            Ty::F32
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Val {
    pub ty: Ty,
    pub reg: String,
}

/// A float immediate of type `ty` (`F32` or `F64`).
pub(crate) fn float_imm(ty: Ty, x: f64) -> String {
    match ty {
        Ty::F64 => f64_imm(x),
        _ => f32_imm(x as f32),
    }
}

/// `v` converted to `to`, following the interpreter: `bool` is 0.0/1.0, a
/// float is true when it is not zero (NaN included).
pub(crate) fn convert(f: &mut Func, v: &Val, to: Ty) -> Val {
    if v.ty == to {
        return v.clone();
    }
    let d = f.reg(to.class());
    match (v.ty, to) {
        (Ty::F32, Ty::F64) => f.ins(format!("cvt.f64.f32 {d}, {}", v.reg)),
        (Ty::F64, Ty::F32) => f.ins(format!("cvt.rn.f32.f64 {d}, {}", v.reg)),
        (Ty::Pred, t) => f.ins(format!(
            "selp.{} {d}, {}, {}, {}",
            t.suffix(),
            float_imm(t, 1.0),
            float_imm(t, 0.0),
            v.reg
        )),
        // `neu` is true for NaN, like Rust's `!=`.
        (t, Ty::Pred) => f.ins(format!(
            "setp.neu.{} {d}, {}, {}",
            t.suffix(),
            v.reg,
            float_imm(t, 0.0)
        )),
        _ => unreachable!("identical types returned above"),
    }
    Val { ty: to, reg: d }
}

/// Round an `f32` register to `dtype` when that is a half type; a no-op for
/// every other type.
pub(crate) fn round_to(f: &mut Func, v: Val, dtype: DType) -> Val {
    if v.ty != Ty::F32 || !matches!(dtype, DType::F16 | DType::BF16) {
        return v;
    }
    let h = f.reg(Class::B16);
    let d = f.reg(Class::F32);
    if dtype == DType::F16 {
        f.ins(format!("cvt.rn.f16.f32 {h}, {}", v.reg));
        f.ins(format!("cvt.f32.f16 {d}, {h}"));
    } else {
        f.ins(format!("cvt.rn.bf16.f32 {h}, {}", v.reg));
        widen_bf16(f, &h, &d);
    }
    Val {
        ty: Ty::F32,
        reg: d,
    }
}

/// `d = f32(bf16 bits in h)`: bf16 is the top half of an f32.
pub(crate) fn widen_bf16(f: &mut Func, h: &str, d: &str) {
    let r = f.reg(Class::B32);
    f.ins(format!("cvt.u32.u16 {r}, {h}"));
    f.ins(format!("shl.b32 {r}, {r}, 16"));
    f.ins(format!("mov.b32 {d}, {r}"));
}

/// Load element at `addr` (a global address) of a buffer of `dtype`.
pub(crate) fn load(f: &mut Func, dtype: DType, addr: &str) -> Val {
    match dtype {
        DType::F32 | DType::F64 => {
            let ty = if dtype == DType::F32 {
                Ty::F32
            } else {
                Ty::F64
            };
            let d = f.reg(ty.class());
            f.ins(format!("ld.global.nc.{} {d}, [{addr}]", ty.suffix()));
            Val { ty, reg: d }
        }
        DType::F16 | DType::BF16 => {
            let h = f.reg(Class::B16);
            let d = f.reg(Class::F32);
            f.ins(format!("ld.global.nc.b16 {h}, [{addr}]"));
            if dtype == DType::F16 {
                f.ins(format!("cvt.f32.f16 {d}, {h}"));
            } else {
                widen_bf16(f, &h, &d);
            }
            Val {
                ty: Ty::F32,
                reg: d,
            }
        }
        DType::Bool => {
            let r = f.reg(Class::B32);
            let p = f.reg(Class::Pred);
            f.ins(format!("ld.global.nc.u8 {r}, [{addr}]"));
            f.ins(format!("setp.ne.u32 {p}, {r}, 0"));
            Val {
                ty: Ty::Pred,
                reg: p,
            }
        }
        DType::I32 | DType::I64 => {
            let (w, class) = if dtype == DType::I32 {
                ("s32", Class::B32)
            } else {
                ("s64", Class::B64)
            };
            let r = f.reg(class);
            let d = f.reg(Class::F64);
            f.ins(format!("ld.global.nc.{w} {r}, [{addr}]"));
            f.ins(format!("cvt.rn.f64.{w} {d}, {r}"));
            Val {
                ty: Ty::F64,
                reg: d,
            }
        }
    }
}

/// Store `v` at `addr` into a buffer of `dtype`, converting like
/// `oxla_core::buffer::write_raw`.
pub(crate) fn store(f: &mut Func, dtype: DType, addr: &str, v: &Val) {
    match dtype {
        DType::F32 | DType::F64 => {
            let ty = if dtype == DType::F32 {
                Ty::F32
            } else {
                Ty::F64
            };
            let c = convert(f, v, ty);
            f.ins(format!("st.global.{} [{addr}], {}", ty.suffix(), c.reg));
        }
        DType::F16 | DType::BF16 => {
            // f64 → f16 rounds once, like `f16::from_f64`; f64 → bf16 goes
            // through f32 (a direct cvt needs sm_90), which can differ from
            // one rounding only at exact ties of the second rounding.
            let src = if v.ty == Ty::Pred || (v.ty == Ty::F64 && dtype == DType::BF16) {
                convert(f, v, Ty::F32)
            } else {
                v.clone()
            };
            let h = f.reg(Class::B16);
            let name = if dtype == DType::F16 { "f16" } else { "bf16" };
            f.ins(format!(
                "cvt.rn.{name}.{} {h}, {}",
                src.ty.suffix(),
                src.reg
            ));
            f.ins(format!("st.global.b16 [{addr}], {h}"));
        }
        DType::Bool => {
            let p = convert(f, v, Ty::Pred);
            let r = f.reg(Class::B32);
            f.ins(format!("selp.u32 {r}, 1, 0, {}", p.reg));
            f.ins(format!("st.global.u8 [{addr}], {r}"));
        }
        DType::I32 | DType::I64 => {
            // `cvt.rzi` truncates and saturates with NaN → 0, like Rust's `as`.
            let src = if v.ty == Ty::Pred {
                convert(f, v, Ty::F32)
            } else {
                v.clone()
            };
            let (w, class) = if dtype == DType::I32 {
                ("s32", Class::B32)
            } else {
                ("s64", Class::B64)
            };
            let r = f.reg(class);
            f.ins(format!("cvt.rzi.{w}.{} {r}, {}", src.ty.suffix(), src.reg));
            f.ins(format!("st.global.{w} [{addr}], {r}"));
        }
    }
}
