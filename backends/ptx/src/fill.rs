//! The fill entry: sets every element of a buffer to one bit pattern.
//!
//! Max and min reductions merge block results into outputs that must start
//! at -inf / +inf (`Reduce::identity`), and the driver's memsets cover 8-,
//! 16- and 32-bit patterns only (an f64 -inf is a 64-bit one), so a module
//! holding such a reduction also holds [`FILL_ENTRY`]:
//!
//! `oxla_fill(.param .u64 dst, .param .u64 count, .param .u64 width, .param .u64 bits)`
//!
//! writes the low `width` bytes (1, 2, 4 or 8) of `bits` into each of the
//! `count` elements at `dst`, in a grid-stride loop of [`BLOCK`]-thread
//! blocks (any grid is correct).

use crate::func::{Class, Func};
use crate::launch::BLOCK;
use oxla_core::kernel::Reduce;
use oxla_core::Kernel;
use std::fmt::Write as _;

/// The name of the fill entry.
pub const FILL_ENTRY: &str = "oxla_fill";

/// Whether a module of `kernels` needs the fill entry: some reduction
/// starts from a value other than zero.
pub fn needs_fill(kernels: &[Kernel]) -> bool {
    kernels
        .iter()
        .any(|k| k.is_reduction() && k.reduce != Reduce::Sum)
}

/// The text of the fill entry.
pub(crate) fn entry() -> String {
    let mut f = Func::new();
    let (dst, count, width, bits) = (
        f.reg(Class::B64),
        f.reg(Class::B64),
        f.reg(Class::B64),
        f.reg(Class::B64),
    );
    for (r, name) in [
        (&dst, "dst"),
        (&count, "count"),
        (&width, "width"),
        (&bits, "bits"),
    ] {
        f.ins(format!("ld.param.u64 {r}, [{name}]"));
    }
    f.ins(format!("cvta.to.global.u64 {dst}, {dst}"));
    let (b16, b32) = (f.reg(Class::B16), f.reg(Class::B32));
    f.ins(format!("cvt.u16.u64 {b16}, {bits}"));
    f.ins(format!("cvt.u32.u64 {b32}, {bits}"));
    let (cta, ntid, tid, ncta) = (
        f.reg(Class::B32),
        f.reg(Class::B32),
        f.reg(Class::B32),
        f.reg(Class::B32),
    );
    f.ins(format!("mov.u32 {cta}, %ctaid.x"));
    f.ins(format!("mov.u32 {ntid}, %ntid.x"));
    f.ins(format!("mov.u32 {tid}, %tid.x"));
    f.ins(format!("mov.u32 {ncta}, %nctaid.x"));
    let (idx, step, t, addr) = (
        f.reg(Class::B64),
        f.reg(Class::B64),
        f.reg(Class::B64),
        f.reg(Class::B64),
    );
    f.ins(format!("mul.wide.u32 {idx}, {cta}, {ntid}"));
    f.ins(format!("cvt.u64.u32 {t}, {tid}"));
    f.ins(format!("add.u64 {idx}, {idx}, {t}"));
    f.ins(format!("mul.wide.u32 {step}, {ncta}, {ntid}"));
    let (top, done) = (f.new_label("fill"), f.new_label("fill_done"));
    let (p, w) = (f.reg(Class::Pred), f.reg(Class::Pred));
    f.place_label(&top);
    f.ins(format!("setp.ge.u64 {p}, {idx}, {count}"));
    f.ins(format!("@{p} bra {done}"));
    f.ins(format!("mad.lo.u64 {addr}, {idx}, {width}, {dst}"));
    for (bytes, st) in [
        (8, format!("st.global.b64 [{addr}], {bits}")),
        (4, format!("st.global.b32 [{addr}], {b32}")),
        (2, format!("st.global.b16 [{addr}], {b16}")),
        (1, format!("st.global.u8 [{addr}], {b32}")),
    ] {
        f.ins(format!("setp.eq.u64 {w}, {width}, {bytes}"));
        f.ins(format!("@{w} {st}"));
    }
    f.ins(format!("add.u64 {idx}, {idx}, {step}"));
    f.ins(format!("bra {top}"));
    f.place_label(&done);
    f.ins("ret");
    let mut out = String::new();
    let _ = writeln!(out, "// Fill a buffer with one bit pattern.");
    let _ = writeln!(out, ".visible .entry {FILL_ENTRY}(");
    let _ = writeln!(
        out,
        "\t.param .u64 dst,\n\t.param .u64 count,\n\t.param .u64 width,\n\t.param .u64 bits"
    );
    let _ = writeln!(out, ")\n.maxntid {BLOCK}, 1, 1\n{{");
    out.push_str(&f.finish());
    out.push_str("}\n");
    out
}
