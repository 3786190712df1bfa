//! IR functions run as whole programs on the GPU and compared with the
//! reference interpreter. Shared by `tests/suite/program.rs` and
//! `examples/gpu_check.rs` (included there with `#[path]`).
#![allow(dead_code)]

pub mod catalog;
pub mod gemm_model;
pub mod products;

use oxla_core::ops::control::{self, Checkpoint};
use oxla_core::ops::elementwise::{CmpOp, UnaryOp};
use oxla_core::ops::DotDims;
use oxla_core::transforms::{grad, vmap};
use oxla_core::{Buffer, DType, Dim, Function, Op, Shape, Tensor, Type, Var};
use oxla_cuda::gpu_available;
use oxla_ptx::ptxas::{env_flag, record_skip};
use std::collections::BTreeMap;

/// Whether a GPU test can run: with no GPU, records a skip and returns
/// false, except with env `OXLA_REQUIRE_GPU=1` (for runs on GPU machines),
/// where the test fails.
pub fn gpu_or_skip() -> bool {
    if gpu_available() {
        return true;
    }
    assert!(
        !env_flag("OXLA_REQUIRE_GPU"),
        "no GPU found, and OXLA_REQUIRE_GPU is set"
    );
    record_skip("no GPU found");
    false
}

/// Whether a test of the no-GPU behaviour can run: records a skip where a
/// GPU is present.
pub fn no_gpu_or_skip() -> bool {
    if !gpu_available() {
        return true;
    }
    record_skip("a GPU is present");
    false
}

/// The lengths each case runs at (the symbol `n`).
pub const LENGTHS: [usize; 7] = [0, 1, 3, 4, 5, 1000, 1001];
/// The batch size (symbol `b`) of the vmapped cases.
pub const BATCH: usize = 3;

/// A function and the tolerance of its outputs at length `n`.
pub struct Case {
    pub name: &'static str,
    pub f: Function,
    /// `(rtol, atol)` at length `n`: element `got` passes when
    /// `|got - want| <= rtol * |want| + atol`.
    pub tol: fn(usize) -> (f64, f64),
}

fn n() -> Dim {
    Dim::sym("n")
}

fn vector(dtype: DType) -> Type {
    Type::new(dtype, Shape::vector(n()))
}

/// `sum(x * 2 * y + z)`: one fused reduction kernel.
pub fn fused_sum(dtype: DType) -> Function {
    let mut f = Function::new("fused_sum");
    let x = f.add_param("x", vector(dtype));
    let y = f.add_param("y", vector(dtype));
    let z = f.add_param("z", vector(dtype));
    let two = f.full(2.0, dtype, &Shape::vector(n()));
    let a = f.mul(x, two);
    let b = f.mul(a, y);
    let c = f.add(b, z);
    let s = f.reduce_sum(c, vec![0]);
    f.outs.push(s);
    f
}

/// `sum(s * x * y + sin(x))` with `s` a scalar (f64).
fn scaled_sin_sum() -> Function {
    let mut f = Function::new("scaled_sin_sum");
    let x = f.add_param("x", vector(DType::F64));
    let y = f.add_param("y", vector(DType::F64));
    let s = f.add_param("s", Type::scalar(DType::F64));
    let sb = f.broadcast(s, Shape::vector(n()), vec![]);
    let a = f.mul(sb, x);
    let b = f.mul(a, y);
    let c = f.unary(UnaryOp::Sin, x);
    let d = f.add(b, c);
    let r = f.reduce_sum(d, vec![0]);
    f.outs.push(r);
    f
}

/// Several elementwise outputs (f32): one returned twice, one a parameter.
fn chain() -> Function {
    let mut f = Function::new("chain");
    let x = f.add_param("x", vector(DType::F32));
    let y = f.add_param("y", vector(DType::F32));
    let ex = f.unary(UnaryOp::Exp, x);
    let a = f.mul(ex, y);
    let d = f.sub(x, y);
    let t = f.unary(UnaryOp::Tanh, d);
    let xx = f.mul(x, x);
    let one = f.full(1.0, DType::F32, &Shape::vector(n()));
    let den = f.add(one, xx);
    let b = f.div(t, den);
    f.outs = vec![a, b, x, a];
    f
}

/// `e / sum(e)` with `e = exp(x)` (f32), and the sum: a reduction whose
/// result a second kernel reads.
fn softmax() -> Function {
    let mut f = Function::new("softmax");
    let x = f.add_param("x", vector(DType::F32));
    let e = f.unary(UnaryOp::Exp, x);
    let s = f.reduce_sum(e, vec![0]);
    let sb = f.broadcast(s, Shape::vector(n()), vec![]);
    let p = f.div(e, sb);
    f.outs = vec![p, s];
    f
}

/// Rank-2 reductions and a dot (f64): `x: [n, 3]`, `w: [3]`, `v: [n]` ->
/// (row sums of `x * w`, column sums of `x`, `v · v`).
fn row_col_dot() -> Function {
    let mut f = Function::new("row_col_dot");
    let nk = Shape(vec![n(), Dim::Const(3)]);
    let x = f.add_param("x", Type::new(DType::F64, nk.clone()));
    let w = f.add_param("w", Type::new(DType::F64, Shape::vector(Dim::Const(3))));
    let v = f.add_param("v", vector(DType::F64));
    let wb = f.broadcast(w, nk, vec![1]);
    let xw = f.mul(x, wb);
    let rows = f.reduce_sum(xw, vec![1]);
    let cols = f.reduce_sum(x, vec![0]);
    let vv = f.dot(v, v);
    f.outs = vec![rows, cols, vv];
    f
}

fn push(f: &mut Function, op: Op, ins: &[Var]) -> Var {
    f.push(op, ins).expect("a well-typed test function")
}

/// Max and min (f32): row maxima and column minima of `x: [n, 3]`, and the
/// row maxima of `exp` of its transpose (read through strides).
fn max_min_transpose() -> Function {
    let mut f = Function::new("max_min_transpose");
    let s = Shape(vec![n(), Dim::Const(3)]);
    let x = f.add_param("x", Type::new(DType::F32, s));
    let rows = push(&mut f, Op::ReduceMax { axes: vec![1] }, &[x]);
    let cols = push(&mut f, Op::ReduceMin { axes: vec![0] }, &[x]);
    let t = push(&mut f, Op::Transpose { perm: vec![1, 0] }, &[x]);
    let e = f.unary(UnaryOp::Exp, t);
    let tmax = push(&mut f, Op::ReduceMax { axes: vec![1] }, &[e]);
    f.outs = vec![rows, cols, tmax];
    f
}

/// `exp(x - max x) / sum(exp(x - max x))` and the max (f32).
fn stable_softmax() -> Function {
    let mut f = Function::new("stable_softmax");
    let x = f.add_param("x", vector(DType::F32));
    let m = push(&mut f, Op::ReduceMax { axes: vec![0] }, &[x]);
    let mb = f.broadcast(m, Shape::vector(n()), vec![]);
    let d = f.sub(x, mb);
    let e = f.unary(UnaryOp::Exp, d);
    let s = f.reduce_sum(e, vec![0]);
    let sb = f.broadcast(s, Shape::vector(n()), vec![]);
    let p = f.div(e, sb);
    f.outs = vec![p, m];
    f
}

fn dot_general(f: &mut Function, a: Var, b: Var, lc: usize, rc: usize, batch: bool) -> Var {
    let d = DotDims {
        lhs_contract: vec![lc],
        rhs_contract: vec![rc],
        lhs_batch: if batch { vec![0] } else { vec![] },
        rhs_batch: if batch { vec![0] } else { vec![] },
    };
    push(f, Op::DotGeneral(d), &[a, b])
}

/// A layer `tanh(tanh(x) @ w + b)` (f64, `x: [n, 3]`, `w: [3, 4]`) and the
/// row-wise products of `x` with `v: [n, 3]` (a batched dot_general).
fn layer() -> Function {
    let mut f = Function::new("layer");
    let xs = Shape(vec![n(), Dim::Const(3)]);
    let x = f.add_param("x", Type::new(DType::F64, xs.clone()));
    let w = f.add_param(
        "w",
        Type::new(DType::F64, Shape(vec![Dim::Const(3), Dim::Const(4)])),
    );
    let b = f.add_param("b", Type::new(DType::F64, Shape::vector(Dim::Const(4))));
    let v = f.add_param("v", Type::new(DType::F64, xs));
    let t = f.unary(UnaryOp::Tanh, x);
    let y = dot_general(&mut f, t, w, 1, 0, false);
    let ys = f.shape(y).clone();
    let bb = f.broadcast(b, ys, vec![1]);
    let z = f.add(y, bb);
    let out = f.unary(UnaryOp::Tanh, z);
    let rows = dot_general(&mut f, x, v, 1, 1, true);
    f.outs = vec![out, rows];
    f
}

/// One-hot rows of `labels: [n]` by iota, reshaped to `[4, n]`, and the mean
/// of `labels` by dim_size (f32).
fn iota_onehot_mean() -> Function {
    let mut f = Function::new("iota_onehot_mean");
    let labels = f.add_param("labels", vector(DType::F32));
    let s = Shape(vec![n(), Dim::Const(4)]);
    let cols = push(
        &mut f,
        Op::Iota {
            shape: s.clone(),
            axis: 1,
            dtype: DType::F32,
        },
        &[],
    );
    let lb = f.broadcast(labels, s.clone(), vec![0]);
    let eq = f.cmp(CmpOp::Eq, cols, lb);
    let one = f.full(1.0, DType::F32, &s);
    let zero = f.full(0.0, DType::F32, &s);
    let onehot = f.select(eq, one, zero);
    let r = push(
        &mut f,
        Op::Reshape {
            shape: Shape(vec![Dim::Const(4), n()]),
        },
        &[onehot],
    );
    let total = f.reduce_sum(labels, vec![0]);
    let len = push(
        &mut f,
        Op::DimSize {
            dim: n(),
            dtype: DType::F32,
        },
        &[],
    );
    let mean = f.div(total, len);
    f.outs = vec![r, mean];
    f
}

/// A `for` loop over arrays (f64, JAX's `fori_loop`) reading its index,
/// from literal bounds 2..9: `(u, v) = (tanh(u·a + v + i/8), sin(v·b) + u/2)`
/// from `(u0, v0)`. With `all_outputs` the function returns `u`, `v` and
/// `sum(u·v)`, else the sum alone (the form `grad` takes), the loop
/// keeping carries as `ckpt` says for its reverse sweep.
pub fn fori_arrays(ckpt: Checkpoint, all_outputs: bool) -> Function {
    let mut body = Function::new("fori_step");
    let a = body.add_param("a", vector(DType::F64));
    let b = body.add_param("b", vector(DType::F64));
    let i = body.add_param("i", Type::scalar(DType::I64));
    let u = body.add_param("u", vector(DType::F64));
    let v = body.add_param("v", vector(DType::F64));
    let fi = push(&mut body, Op::Convert { dtype: DType::F64 }, &[i]);
    let eighth = body.literal(0.125, DType::F64);
    let fi = body.mul(fi, eighth);
    let fib = body.broadcast(fi, Shape::vector(n()), vec![]);
    let ua = body.mul(u, a);
    let s = body.add(ua, v);
    let s = body.add(s, fib);
    let u2 = body.unary(UnaryOp::Tanh, s);
    let vb = body.mul(v, b);
    let sv = body.unary(UnaryOp::Sin, vb);
    let half = body.full(0.5, DType::F64, &Shape::vector(n()));
    let uh = body.mul(u, half);
    let v2 = body.add(sv, uh);
    body.outs = vec![u2, v2];

    let mut f = Function::new("fori_arrays");
    let a = f.add_param("a", vector(DType::F64));
    let b = f.add_param("b", vector(DType::F64));
    let u0 = f.add_param("u0", vector(DType::F64));
    let v0 = f.add_param("v0", vector(DType::F64));
    let lo = f.literal(2.0, DType::I64);
    let hi = f.literal(9.0, DType::I64);
    let r = control::push_for(&mut f, lo, hi, &[a, b], &[u0, v0], body, ckpt).expect("loop");
    let uv = f.mul(r[0], r[1]);
    let s = f.reduce_sum(uv, vec![0]);
    f.outs = if all_outputs {
        vec![r[0], r[1], s]
    } else {
        vec![s]
    };
    f
}

/// A `while` loop (f64): `(x, c) = (x/2, c + 1)` while
/// `sum(x·x) > lim² + 1/1000`, from `(x0, lim)`; returns `x` and `c`, or
/// (`scalar_out`, for `grad`) `sum(x) + c`. Every step is exact, so the
/// trip count does not depend on the order of the sum.
pub fn halving_while(ckpt: Checkpoint, scalar_out: bool) -> Function {
    let mut cond = Function::new("above_limit");
    let lim = cond.add_param("lim", Type::scalar(DType::F64));
    let x = cond.add_param("x", vector(DType::F64));
    let _c = cond.add_param("c", Type::scalar(DType::F64));
    let xx = cond.mul(x, x);
    let s = cond.reduce_sum(xx, vec![0]);
    let l2 = cond.mul(lim, lim);
    let eps = cond.literal(1e-3, DType::F64);
    let t = cond.add(l2, eps);
    cond.outs = vec![cond.cmp(CmpOp::Gt, s, t)];

    let mut body = Function::new("halve");
    let _lim = body.add_param("lim", Type::scalar(DType::F64));
    let x = body.add_param("x", vector(DType::F64));
    let c = body.add_param("c", Type::scalar(DType::F64));
    let half = body.full(0.5, DType::F64, &Shape::vector(n()));
    let x2 = body.mul(x, half);
    let one = body.literal(1.0, DType::F64);
    let c2 = body.add(c, one);
    body.outs = vec![x2, c2];

    let mut f = Function::new("halving_while");
    let x0 = f.add_param("x0", vector(DType::F64));
    let lim = f.add_param("lim", Type::scalar(DType::F64));
    let r = control::push_while(&mut f, &[lim], &[x0, lim], cond, body, ckpt).expect("loop");
    f.outs = if scalar_out {
        let s = f.reduce_sum(r[0], vec![0]);
        vec![f.add(s, r[1])]
    } else {
        vec![r[0], r[1]]
    };
    f
}

/// A cond on a scalar (f32, JAX's `lax.cond`): `(exp(x/2)·y, sum(y))` if
/// `sum(x) > 0`, else `(sin(x) − y, sum(x·x))`; returns both, or
/// (`scalar_out`, for `grad`) `sum(r0) + r1`. The predicate's sum is
/// exact (multiples of 1/64), so both sides agree on the branch.
pub fn scalar_cond(scalar_out: bool) -> Function {
    let mut t = Function::new("exp_side");
    let x = t.add_param("x", vector(DType::F32));
    let y = t.add_param("y", vector(DType::F32));
    let half = t.full(0.5, DType::F32, &Shape::vector(n()));
    let xh = t.mul(x, half);
    let e = t.unary(UnaryOp::Exp, xh);
    let r0 = t.mul(e, y);
    let r1 = t.reduce_sum(y, vec![0]);
    t.outs = vec![r0, r1];

    let mut e = Function::new("sin_side");
    let x = e.add_param("x", vector(DType::F32));
    let y = e.add_param("y", vector(DType::F32));
    let sx = e.unary(UnaryOp::Sin, x);
    let r0 = e.sub(sx, y);
    let xx = e.mul(x, x);
    let r1 = e.reduce_sum(xx, vec![0]);
    e.outs = vec![r0, r1];

    let mut f = Function::new("scalar_cond");
    let x = f.add_param("x", vector(DType::F32));
    let y = f.add_param("y", vector(DType::F32));
    let sx = f.reduce_sum(x, vec![0]);
    let zero = f.literal(0.0, DType::F32);
    let p = f.cmp(CmpOp::Gt, sx, zero);
    let r = control::push_cond(&mut f, p, &[x, y], t, e).expect("cond");
    f.outs = if scalar_out {
        let s = f.reduce_sum(r[0], vec![0]);
        vec![f.add(s, r[1])]
    } else {
        vec![r[0], r[1]]
    };
    f
}

/// A `for` loop (0..6, f64) whose body holds a cond: `x/2 − 1/4` if
/// `sum(x) > 0`, else `x + 3/4` (exact steps): nested programs two deep.
pub fn loop_of_conds() -> Function {
    let mut t = Function::new("shrink");
    let x = t.add_param("x", vector(DType::F64));
    let half = t.full(0.5, DType::F64, &Shape::vector(n()));
    let q = t.full(0.25, DType::F64, &Shape::vector(n()));
    let xh = t.mul(x, half);
    t.outs = vec![t.sub(xh, q)];
    let mut e = Function::new("grow");
    let x = e.add_param("x", vector(DType::F64));
    let q = e.full(0.75, DType::F64, &Shape::vector(n()));
    e.outs = vec![e.add(x, q)];

    let mut body = Function::new("step_with_cond");
    let _i = body.add_param("i", Type::scalar(DType::I64));
    let x = body.add_param("x", vector(DType::F64));
    let s = body.reduce_sum(x, vec![0]);
    let zero = body.literal(0.0, DType::F64);
    let p = body.cmp(CmpOp::Gt, s, zero);
    body.outs = control::push_cond(&mut body, p, &[x], t, e).expect("cond");

    let mut f = Function::new("loop_of_conds");
    let x0 = f.add_param("x0", vector(DType::F64));
    let lo = f.literal(0.0, DType::I64);
    let hi = f.literal(6.0, DType::I64);
    let r = control::push_for(&mut f, lo, hi, &[], &[x0], body, Checkpoint::All).expect("loop");
    let s = f.reduce_sum(r[0], vec![0]);
    f.outs = vec![r[0], s];
    f
}

/// A `for` loop (0..5, f64) whose body is a layer with a matrix product:
/// `x = tanh((x @ w) / 2)` for `x: [n, 4]`, `w: [4, 4]` (cuBLAS runs the
/// product inside the loop); returns `x`, or (`scalar_out`, for `grad`)
/// `sum(x)`.
pub fn loop_matmul(scalar_out: bool) -> Function {
    let xs = Shape(vec![n(), Dim::Const(4)]);
    let ws = Shape(vec![Dim::Const(4), Dim::Const(4)]);
    let mut body = Function::new("layer_step");
    let w = body.add_param("w", Type::new(DType::F64, ws.clone()));
    let _i = body.add_param("i", Type::scalar(DType::I64));
    let x = body.add_param("x", Type::new(DType::F64, xs.clone()));
    let y = dot_general(&mut body, x, w, 1, 0, false);
    let half = body.full(0.5, DType::F64, &xs);
    let yh = body.mul(y, half);
    body.outs = vec![body.unary(UnaryOp::Tanh, yh)];

    let mut f = Function::new("loop_matmul");
    let x0 = f.add_param("x0", Type::new(DType::F64, xs));
    let w = f.add_param("w", Type::new(DType::F64, ws));
    let lo = f.literal(0.0, DType::I64);
    let hi = f.literal(5.0, DType::I64);
    let r = control::push_for(&mut f, lo, hi, &[w], &[x0], body, Checkpoint::All).expect("loop");
    f.outs = if scalar_out {
        let s = f.reduce_sum(r[0], vec![0, 1]);
        vec![s]
    } else {
        vec![r[0]]
    };
    f
}

/// The cases with loops and conds (part of `cases()`).
pub fn control_cases() -> Vec<Case> {
    let grad_of = |f: Function| grad(&f, &(0..f.params.len()).collect::<Vec<_>>()).expect("grad");
    vec![
        Case {
            name: "fori_loop over arrays (for, literal bounds 2..9) f64",
            f: fori_arrays(Checkpoint::All, true),
            tol: |_| (1e-11, 1e-12),
        },
        Case {
            name: "grad of the fori_loop (reverse sweep, every carry kept) f64",
            f: grad_of(fori_arrays(Checkpoint::All, false)),
            tol: |n| (1e-10, 1e-11 * (n as f64 + 1.0)),
        },
        Case {
            name: "grad of the fori_loop (every 3rd carry kept, segments recomputed) f64",
            f: grad_of(fori_arrays(Checkpoint::Every(3), false)),
            tol: |n| (1e-10, 1e-11 * (n as f64 + 1.0)),
        },
        Case {
            name: "grad of the fori_loop (sqrt checkpoints) f64",
            f: grad_of(fori_arrays(Checkpoint::Sqrt, false)),
            tol: |n| (1e-10, 1e-11 * (n as f64 + 1.0)),
        },
        Case {
            name: "while loop halving until sum(x²) <= lim² + 1e-3 f64",
            f: halving_while(Checkpoint::All, false),
            tol: |_| (0.0, 0.0),
        },
        Case {
            name: "grad of the while loop (reverse sweep, sqrt checkpoints) f64",
            f: grad(&halving_while(Checkpoint::Sqrt, true), &[0, 1]).expect("grad"),
            tol: |_| (0.0, 0.0),
        },
        Case {
            name: "cond on a scalar (sum(x) > 0) f32",
            f: scalar_cond(false),
            tol: |_| (2e-6, 1e-6),
        },
        Case {
            name: "grad of the cond f32",
            f: grad(&scalar_cond(true), &[0, 1]).expect("grad"),
            tol: |_| (2e-6, 1e-6),
        },
        Case {
            name: "for loop whose body holds a cond f64",
            f: loop_of_conds(),
            tol: |_| (0.0, 0.0),
        },
        Case {
            name: "for loop over a layer with a matrix product f64",
            f: loop_matmul(false),
            tol: |_| (1e-11, 1e-12),
        },
        Case {
            name: "grad of the loop over a layer (products in the backward body) f64",
            f: grad(&loop_matmul(true), &[0, 1]).expect("grad"),
            tol: |n| (1e-10, 1e-11 * (n as f64 + 1.0)),
        },
    ]
}

/// The functions every GPU program check runs.
pub fn cases() -> Vec<Case> {
    let f32_sum = |n: usize| (1e-5, 1e-5 * (n as f64 + 1.0));
    let f64_sum = |n: usize| (1e-12, 1e-12 * (n as f64 + 1.0));
    vec![
        Case {
            name: "sum(x*2*y+z) f32",
            f: fused_sum(DType::F32),
            tol: f32_sum,
        },
        Case {
            name: "grad sum(x*2*y+z) wrt x,y,z f32",
            f: grad(&fused_sum(DType::F32), &[0, 1, 2]).expect("grad"),
            tol: |_| (1e-6, 1e-6),
        },
        Case {
            name: "vmap(grad sum(s*x*y+sin x) wrt x,s) f64",
            f: vmap(
                &grad(&scaled_sin_sum(), &[0, 2]).expect("grad"),
                &[Some(0), None, Some(0)],
            )
            .expect("vmap"),
            tol: f64_sum,
        },
        Case {
            name: "elementwise chain, 4 outputs f32",
            f: chain(),
            tol: |_| (2e-5, 1e-6),
        },
        Case {
            name: "softmax + its sum f32",
            f: softmax(),
            tol: |n| (1e-5 + f32::EPSILON as f64 * (n as f64 + 1.0), 1e-9),
        },
        Case {
            name: "row/col sums and dot f64",
            f: row_col_dot(),
            tol: f64_sum,
        },
        Case {
            name: "row max, column min, max of a transpose f32",
            f: max_min_transpose(),
            tol: |_| (4e-6, 1e-6),
        },
        Case {
            name: "softmax with the max subtracted f32",
            f: stable_softmax(),
            tol: |n| (1e-5 + f32::EPSILON as f64 * (n as f64 + 1.0), 1e-9),
        },
        Case {
            name: "layer tanh(tanh(x) @ w + b), batched dot f64",
            f: layer(),
            tol: |_| (1e-13, 1e-13),
        },
        Case {
            name: "iota one-hot, reshape, mean by dim_size f32",
            f: iota_onehot_mean(),
            tol: f32_sum,
        },
    ]
    .into_iter()
    .chain(control_cases())
    .collect()
}

/// Each parameter's concrete shape at length `n` (batch `BATCH`).
pub fn param_shapes(f: &Function, n: usize) -> Vec<Vec<usize>> {
    let env: BTreeMap<String, u64> = [("n".to_string(), n as u64), ("b".into(), BATCH as u64)]
        .into_iter()
        .collect();
    f.params
        .iter()
        .map(|p| f.shape(*p).concrete(&env).expect("shape"))
        .collect()
}

/// Deterministic inputs in [-2, 2], multiples of 1/64 (exact in every float
/// type), different for each parameter.
pub fn inputs(f: &Function, n: usize) -> Vec<Buffer> {
    param_shapes(f, n)
        .iter()
        .enumerate()
        .map(|(i, shape)| {
            let len: usize = shape.iter().product();
            let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ ((i as u64 + 1) << 32) ^ n as u64;
            let vals: Vec<f64> = (0..len)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((state >> 33) % 257) as f64 / 64.0 - 2.0
                })
                .collect();
            Buffer::from_f64(f.dtype(f.params[i]), &vals)
        })
        .collect()
}

/// Run `case` at length `n` with `run` and compare with the interpreter.
/// Returns the largest error as a fraction of the tolerance.
pub fn check(
    case: &Case,
    n: usize,
    run: impl Fn(&[Buffer]) -> Result<Vec<Buffer>, String>,
) -> Result<f64, String> {
    let f = &case.f;
    let args = inputs(f, n);
    let tensors: Vec<Tensor> = param_shapes(f, n)
        .into_iter()
        .zip(&args)
        .map(|(shape, b)| Tensor::from_buffer(shape, b))
        .collect();
    if let Some(e) = expected_error(f, &tensors) {
        return refused(n, e, run(&args).map(|_| ()));
    }
    let want = oxla_core::interp::eval(f, &tensors).map_err(|e| format!("interpreter: {e}"))?;
    let got = run(&args).map_err(|e| format!("n={n}: {e}"))?;
    compare(case, n, &got, &want)
}

/// The error every executor gives before running `f` on `args`, if any: a
/// max, min or argmax over an empty axis (JAX raises; `Program::check_nonempty`).
fn expected_error(f: &Function, args: &[Tensor]) -> Option<String> {
    let p = oxla_core::kernel::fusion::fuse(f).ok()?;
    let dims: Vec<(usize, oxla_core::exec::ArgDims)> = args
        .iter()
        .map(|t| {
            (
                t.data.len(),
                oxla_core::exec::ArgDims::new(&t.shape).expect("rank"),
            )
        })
        .collect();
    let sizes = p.bind_dims(&dims).ok()?;
    p.check_nonempty(&sizes).err()
}

/// A run that had to fail with `want` (see `expected_error`).
fn refused(n: usize, want: String, got: Result<(), String>) -> Result<f64, String> {
    match got {
        Err(e) if e.contains(&want) => Ok(0.0),
        Err(e) => Err(format!("n={n}: expected the error `{want}`, got `{e}`")),
        Ok(()) => Err(format!("n={n}: expected the error `{want}`, got results")),
    }
}

/// `check` with the arguments passed with their shapes (`run` gets each
/// input and its dimensions); the results' dimensions must be the
/// interpreter's too.
pub fn check_shaped(
    case: &Case,
    n: usize,
    run: impl Fn(&[(Buffer, Vec<usize>)]) -> Result<Vec<(Buffer, Vec<usize>)>, String>,
) -> Result<f64, String> {
    let f = &case.f;
    let args: Vec<(Buffer, Vec<usize>)> =
        inputs(f, n).into_iter().zip(param_shapes(f, n)).collect();
    let tensors: Vec<Tensor> = args
        .iter()
        .map(|(b, shape)| Tensor::from_buffer(shape.clone(), b))
        .collect();
    if let Some(e) = expected_error(f, &tensors) {
        return refused(n, e, run(&args).map(|_| ()));
    }
    let want = oxla_core::interp::eval(f, &tensors).map_err(|e| format!("interpreter: {e}"))?;
    let got = run(&args).map_err(|e| format!("n={n}: {e}"))?;
    for (o, ((_, dims), w)) in got.iter().zip(&want).enumerate() {
        if *dims != w.shape {
            return Err(format!(
                "n={n}, output {o}: shape {dims:?}, the interpreter gives {:?}",
                w.shape
            ));
        }
    }
    let got: Vec<Buffer> = got.into_iter().map(|(b, _)| b).collect();
    compare(case, n, &got, &want)
}

/// Compare `got` with the interpreter's `want` within the case's tolerance;
/// the largest error as a fraction of it.
fn compare(case: &Case, n: usize, got: &[Buffer], want: &[Tensor]) -> Result<f64, String> {
    if got.len() != want.len() {
        return Err(format!(
            "n={n}: {} outputs, the interpreter gives {}",
            got.len(),
            want.len()
        ));
    }
    let (rtol, atol) = (case.tol)(n);
    let mut worst = 0.0f64;
    for (o, (g, w)) in got.iter().zip(want).enumerate() {
        if g.dtype() != w.dtype || g.len() != w.data.len() {
            return Err(format!(
                "n={n}, output {o}: {} elements of {}, the interpreter gives {} of {}",
                g.len(),
                g.dtype(),
                w.data.len(),
                w.dtype
            ));
        }
        for (j, want) in w.data.iter().enumerate() {
            let got = g.get(j);
            if got == *want || (got.is_nan() && want.is_nan()) {
                continue;
            }
            let ratio = (got - want).abs() / (rtol * want.abs() + atol);
            if ratio.is_nan() || ratio > 1.0 {
                return Err(format!(
                    "n={n}, output {o}, element {j}: GPU {got}, interpreter {want} \
                     (tolerance {rtol:e}·|want| + {atol:e})"
                ));
            }
            worst = worst.max(ratio);
        }
    }
    Ok(worst)
}
