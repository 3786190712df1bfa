//! The loops of the loop tests (`ops::control`), shared by the core tests
//! and the backends' tests: Horner's rule (a `for` loop reading its index),
//! Newton's method (a `while` loop) and a loop over arrays with two carries.

use super::{random_tensor, rng};
use oxla_core::ops::control::{self, Checkpoint};
use oxla_core::ops::elementwise::{CmpOp, UnaryOp};
use oxla_core::ops::gather::gather;
use oxla_core::*;

pub fn scalar(dtype: DType) -> Type {
    Type::scalar(dtype)
}

pub fn vector(n: &str) -> Type {
    Type::new(DType::F64, Shape(vec![Dim::sym(n)]))
}

/// Horner's rule: `acc = acc·x + c[i]` for i in lo..hi, from `acc = a0`.
pub fn horner(ckpt: Checkpoint) -> Function {
    let mut body = Function::new("step");
    let x = body.add_param("x", scalar(DType::F64));
    let c = body.add_param("c", vector("n"));
    let i = body.add_param("i", scalar(DType::I64));
    let acc = body.add_param("acc", scalar(DType::F64));
    let ci = gather(&mut body, c, i, 0, 0);
    let ax = body.mul(acc, x);
    body.outs = vec![body.add(ax, ci)];

    let mut f = Function::new("horner");
    let x = f.add_param("x", scalar(DType::F64));
    let c = f.add_param("c", vector("n"));
    let a0 = f.add_param("a0", scalar(DType::F64));
    let lo = f.add_param("lo", scalar(DType::I64));
    let hi = f.add_param("hi", scalar(DType::I64));
    let r = control::push_for(&mut f, lo, hi, &[x, c], &[a0], body, ckpt).unwrap();
    // A nonlinear use of the result, so second derivatives are not trivial.
    f.outs = vec![f.unary(UnaryOp::Sin, r[0])];
    verify::verify(&f).unwrap();
    f
}

pub fn horner_args(x: f64, c: &[f64], a0: f64, lo: i64, hi: i64) -> Vec<Tensor> {
    vec![
        Tensor::scalar(DType::F64, x),
        Tensor::vector(DType::F64, c),
        Tensor::scalar(DType::F64, a0),
        Tensor::scalar(DType::I64, lo as f64),
        Tensor::scalar(DType::I64, hi as f64),
    ]
}

/// Newton's method for `sqrt(a)`: `x = (x + a/x)/2` while `(x² − a)² > (tol·a)²`,
/// from `x = x0`; returns `x·k` for a parameter `k` (a constant the body
/// does not read, so it reaches the result only after the loop).
pub fn newton(ckpt: Checkpoint) -> Function {
    let mut cond = Function::new("not_converged");
    let a = cond.add_param("a", scalar(DType::F64));
    let x = cond.add_param("x", scalar(DType::F64));
    let xx = cond.mul(x, x);
    let d = cond.sub(xx, a);
    let dd = cond.mul(d, d);
    let tol = cond.literal(1e-13, DType::F64);
    let ta = cond.mul(tol, a);
    let ta2 = cond.mul(ta, ta);
    cond.outs = vec![cond.cmp(CmpOp::Gt, dd, ta2)];

    let mut body = Function::new("newton_step");
    let a = body.add_param("a", scalar(DType::F64));
    let x = body.add_param("x", scalar(DType::F64));
    let q = body.div(a, x);
    let s = body.add(x, q);
    let half = body.literal(0.5, DType::F64);
    body.outs = vec![body.mul(s, half)];

    let mut f = Function::new("newton");
    let a = f.add_param("a", scalar(DType::F64));
    let x0 = f.add_param("x0", scalar(DType::F64));
    let k = f.add_param("k", scalar(DType::F64));
    let r = control::push_while(&mut f, &[a], &[x0], cond, body, ckpt).unwrap();
    f.outs = vec![f.mul(r[0], k)];
    verify::verify(&f).unwrap();
    f
}

/// A loop over arrays with two carries: `(u, v) = (tanh(u·a + v), v·b + u)`.
pub fn coupled(ckpt: Checkpoint) -> Function {
    let mut body = Function::new("coupled_step");
    let a = body.add_param("a", vector("m"));
    let b = body.add_param("b", vector("m"));
    let _i = body.add_param("i", scalar(DType::I64));
    let u = body.add_param("u", vector("m"));
    let v = body.add_param("v", vector("m"));
    let ua = body.mul(u, a);
    let s = body.add(ua, v);
    let u2 = body.unary(UnaryOp::Tanh, s);
    let vb = body.mul(v, b);
    let v2 = body.add(vb, u);
    body.outs = vec![u2, v2];

    let mut f = Function::new("coupled");
    let a = f.add_param("a", vector("m"));
    let b = f.add_param("b", vector("m"));
    let u0 = f.add_param("u0", vector("m"));
    let v0 = f.add_param("v0", vector("m"));
    let lo = f.add_param("lo", scalar(DType::I64));
    let hi = f.add_param("hi", scalar(DType::I64));
    let r = control::push_for(&mut f, lo, hi, &[a, b], &[u0, v0], body, ckpt).unwrap();
    let uv = f.mul(r[0], r[1]);
    f.outs = vec![f.reduce_sum(uv, vec![0])];
    verify::verify(&f).unwrap();
    f
}

pub fn coupled_args(m: usize, lo: i64, hi: i64, seed: u64) -> Vec<Tensor> {
    let mut r = rng(seed);
    let v = |r: &mut _, lo: f64, hi: f64| random_tensor(r, DType::F64, vec![m], (lo, hi));
    vec![
        v(&mut r, 0.2, 0.9),
        v(&mut r, 0.1, 0.6),
        v(&mut r, -1.0, 1.0),
        v(&mut r, -0.5, 0.5),
        Tensor::scalar(DType::I64, lo as f64),
        Tensor::scalar(DType::I64, hi as f64),
    ]
}
