//! The conds of the cond tests (`ops::control::Cond`), shared by the core
//! tests and the backends' tests.

use oxla_core::ops::control;
use oxla_core::ops::elementwise::{CmpOp, UnaryOp};
use oxla_core::*;

pub fn scalar() -> Type {
    Type::scalar(DType::F64)
}

pub fn vector(n: &str) -> Type {
    Type::new(DType::F64, Shape(vec![Dim::sym(n)]))
}

/// The then branch of `branchy`: `(ln(x)·y, ln(x) + sum(y))`.
fn log_side() -> Function {
    let mut b = Function::new("log_side");
    let x = b.add_param("x", scalar());
    let y = b.add_param("y", vector("n"));
    let l = b.unary(UnaryOp::Log, x);
    let lb = b.broadcast(l, Shape(vec![Dim::sym("n")]), vec![]);
    let r0 = b.mul(lb, y);
    let s = b.reduce_sum(y, vec![0]);
    let r1 = b.add(l, s);
    b.outs = vec![r0, r1];
    b
}

/// The else branch of `branchy`: `(x·sin(y), x·x)`.
fn trig_side() -> Function {
    let mut b = Function::new("trig_side");
    let x = b.add_param("x", scalar());
    let y = b.add_param("y", vector("n"));
    let sy = b.unary(UnaryOp::Sin, y);
    let xb = b.broadcast(x, Shape(vec![Dim::sym("n")]), vec![]);
    let r0 = b.mul(xb, sy);
    let r1 = b.mul(x, x);
    b.outs = vec![r0, r1];
    b
}

/// `f(x, y) = sum(r0·r0) + sin(r1)` where `(r0, r1)` is `log_side(x, y)`
/// if `x > 0`, else `trig_side(x, y)`. With `inline_branch` set, the
/// chosen branch is inlined instead (no cond): the reference for one side.
fn branchy_with(inline_branch: Option<bool>) -> Function {
    let mut f = Function::new("branchy");
    let x = f.add_param("x", scalar());
    let y = f.add_param("y", vector("n"));
    let r = match inline_branch {
        None => {
            let zero = f.literal(0.0, DType::F64);
            let p = f.cmp(CmpOp::Gt, x, zero);
            control::push_cond(&mut f, p, &[x, y], log_side(), trig_side()).unwrap()
        }
        Some(then) => {
            let b = if then { log_side() } else { trig_side() };
            super::inline(&mut f, &b, &[x, y])
        }
    };
    let sq = f.mul(r[0], r[0]);
    let s = f.reduce_sum(sq, vec![0]);
    let t = f.unary(UnaryOp::Sin, r[1]);
    f.outs = vec![f.add(s, t)];
    verify::verify(&f).unwrap();
    f
}

pub fn branchy() -> Function {
    branchy_with(None)
}

/// `branchy` with the branch of `x > 0` (`then`) or of `x <= 0` inlined.
pub fn branchy_side(then: bool) -> Function {
    branchy_with(Some(then))
}

pub fn branchy_args(x: f64, y: &[f64]) -> Vec<Tensor> {
    vec![Tensor::scalar(DType::F64, x), Tensor::vector(DType::F64, y)]
}

/// `if x > 0 { ln(x) } else { 0 }` as a cond, or (`select`) as a select
/// of both sides, the form whose gradient at x <= 0 is NaN.
pub fn log_or_zero(select: bool) -> Function {
    let mut f = Function::new("log_or_zero");
    let x = f.add_param("x", scalar());
    let zero = f.literal(0.0, DType::F64);
    let p = f.cmp(CmpOp::Gt, x, zero);
    let out = if select {
        let l = f.unary(UnaryOp::Log, x);
        f.select(p, l, zero)
    } else {
        let mut t = Function::new("log");
        let tx = t.add_param("x", scalar());
        t.outs = vec![t.unary(UnaryOp::Log, tx)];
        let mut e = Function::new("zero");
        let _ = e.add_param("x", scalar());
        e.outs = vec![e.literal(0.0, DType::F64)];
        control::push_cond(&mut f, p, &[x], t, e).unwrap()[0]
    };
    f.outs = vec![out];
    verify::verify(&f).unwrap();
    f
}
