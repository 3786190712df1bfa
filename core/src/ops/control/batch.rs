//! Batching (vmap) of loops and reverse sweeps, with per-example masks.

use super::looping::{Loop, LoopKind};
use super::reverse::LoopReverse;
use super::surgery::inline;
use crate::dtype::DType;
use crate::ir::{Function, Type, Var};
use crate::ops::elementwise::CmpOp;
use crate::ops::Op;
use crate::shape::{Dim, Shape};
use crate::transforms::vmap::{vmap_sized, BatchAxis};

/// A per-example mask `[b]` as a select predicate over `like` (`[b, ...]`).
pub(super) fn mask_over(g: &mut Function, mask: Var, like: Var) -> Var {
    let shape = g.shape(like).clone();
    g.broadcast(mask, shape, vec![0])
}

/// The per-example mask `lo_b ≤ i < hi_b` of step `i` (an i64 scalar) of a
/// loop batched over per-example bounds (f64 vectors of `size`).
fn in_range(h: &mut Function, i: Var, lo_b: Var, hi_b: Var, size: &Dim) -> Var {
    let i_f = h
        .push(Op::Convert { dtype: DType::F64 }, &[i])
        .expect("convert");
    let i_b = h.broadcast(i_f, Shape(vec![size.clone()]), vec![]);
    let started = h.cmp(CmpOp::Le, lo_b, i_b);
    let before_end = h.cmp(CmpOp::Lt, i_b, hi_b);
    let no = h.full(0.0, DType::Bool, &Shape(vec![size.clone()]));
    h.select(started, before_end, no)
}

/// Whether any element of the bool vector `p` is true.
fn any(g: &mut Function, p: Var) -> Var {
    let x = g
        .push(Op::Convert { dtype: DType::F32 }, &[p])
        .expect("convert");
    let m = g
        .push(Op::ReduceMax { axes: vec![0] }, &[x])
        .expect("reduce_max");
    let half = g.literal(0.5, DType::F32);
    g.cmp(CmpOp::Gt, m, half)
}

/// The batched loop: every carry batched; consts batched where `batched`
/// says. A batched trip count or condition masks the steps of examples that
/// are done. Returns the new loop and its operands, and, for a masked loop,
/// nothing else: its body freezes finished examples itself.
fn batch_loop(
    g: &mut Function,
    l: &Loop,
    ins: &[Var],
    batched: &[bool],
    axis: &BatchAxis,
) -> (Loop, Vec<Var>) {
    let size = &axis.size;
    let (nb, nk, nc) = (l.n_bounds(), l.n_consts, l.n_carries());
    let mut operands: Vec<Var> = Vec::new();
    let bounds_batched = batched[..nb].iter().any(|b| *b);
    // The bounds of the batched loop, and the per-example bounds as extra constants.
    let mut extra: Vec<Var> = Vec::new();
    if nb > 0 {
        if bounds_batched {
            let b: Vec<Var> = (0..2)
                .map(|k| {
                    if batched[k] {
                        ins[k]
                    } else {
                        g.broadcast_batch(ins[k], size)
                    }
                })
                .collect();
            let as_f = |g: &mut Function, v: Var| {
                g.push(Op::Convert { dtype: DType::F64 }, &[v])
                    .expect("convert")
            };
            let (lo_f, hi_f) = (as_f(g, b[0]), as_f(g, b[1]));
            let lo = g
                .push(Op::ReduceMin { axes: vec![0] }, &[lo_f])
                .expect("reduce_min");
            let hi = g
                .push(Op::ReduceMax { axes: vec![0] }, &[hi_f])
                .expect("reduce_max");
            // An empty batch runs no step.
            let hi = g.binary(crate::ops::elementwise::BinaryOp::Max, hi, lo);
            for v in [lo, hi] {
                operands.push(
                    g.push(Op::Convert { dtype: DType::I64 }, &[v])
                        .expect("convert"),
                );
            }
            extra = vec![lo_f, hi_f];
        } else {
            operands.extend(&ins[..2]);
        }
    }
    operands.extend(&ins[nb..nb + nk]);
    operands.extend(&extra);
    for k in 0..nc {
        let v = ins[nb + nk + k];
        operands.push(if batched[nb + nk + k] {
            v
        } else {
            g.broadcast_batch(v, size)
        });
    }
    let const_axes: Vec<Option<usize>> = (0..nk).map(|k| batched[nb + k].then_some(0)).collect();
    let body = batch_body(l, &const_axes, extra.len(), axis);
    let cond = l.cond.as_ref().map(|c| {
        let mut axes = const_axes.clone();
        axes.extend(std::iter::repeat_n(Some(0), nc));
        let cb = vmap_sized(c, &axes, &[Some(0)], axis)
            .expect("internal error: batching a loop condition");
        let mut h = Function::new(&c.name);
        let ps: Vec<Var> = cb
            .params
            .iter()
            .zip(&cb.param_names)
            .map(|(p, n)| h.add_param(n, cb.ty(*p).clone()))
            .collect();
        let p = inline(&mut h, &cb, &ps)[0];
        let a = any(&mut h, p);
        h.outs = vec![a];
        h
    });
    let bl = Loop {
        kind: l.kind,
        n_consts: nk + extra.len(),
        body,
        cond,
        results: l.results.clone(),
        checkpoint: l.checkpoint,
        tangent_of: None,
    };
    (bl, operands)
}

/// The batched body with its per-example mask; params (consts, [lo_b, hi_b],
/// [i], carries), every carry batched.
fn batch_body(
    l: &Loop,
    const_axes: &[Option<usize>],
    n_extra: usize,
    axis: &BatchAxis,
) -> Function {
    let size = &axis.size;
    let (nk, nc) = (l.n_consts, l.n_carries());
    let mut axes = const_axes.to_vec();
    if l.kind == LoopKind::For {
        axes.push(None);
    }
    axes.extend(std::iter::repeat_n(Some(0), nc));
    let bb = vmap_sized(&l.body, &axes, &vec![Some(0); nc], axis)
        .expect("internal error: batching a loop body");
    let masked = n_extra > 0 || l.kind == LoopKind::While;
    if !masked {
        return bb;
    }
    let mut h = Function::new(&l.body.name);
    let consts: Vec<Var> = (0..nk)
        .map(|k| h.add_param(&bb.param_names[k], bb.ty(bb.params[k]).clone()))
        .collect();
    let bounds_ty = Type::new(DType::F64, Shape(vec![size.clone()]));
    let extra: Vec<Var> = (0..n_extra)
        .map(|k| h.add_param(&format!("bound{k}"), bounds_ty.clone()))
        .collect();
    let i = (l.kind == LoopKind::For).then(|| h.add_param("i", Type::scalar(DType::I64)));
    let c0 = nk + i.map_or(0, |_| 1);
    let carries: Vec<Var> = (0..nc)
        .map(|k| h.add_param(&bb.param_names[c0 + k], bb.ty(bb.params[c0 + k]).clone()))
        .collect();
    let mut args = consts.clone();
    args.extend(i);
    args.extend(&carries);
    let next = inline(&mut h, &bb, &args);
    let mask = match i {
        Some(i) => in_range(&mut h, i, extra[0], extra[1], size),
        None => {
            let mut axes = const_axes.to_vec();
            axes.extend(std::iter::repeat_n(Some(0), nc));
            let c = l.cond.as_ref().expect("a while loop has a condition");
            let cb = vmap_sized(c, &axes, &[Some(0)], axis)
                .expect("internal error: batching a loop condition");
            let mut cargs = consts.clone();
            cargs.extend(&carries);
            inline(&mut h, &cb, &cargs)[0]
        }
    };
    h.outs = next
        .iter()
        .zip(&carries)
        .map(|(n, c)| {
            let m = mask_over(&mut h, mask, *c);
            h.select(m, *n, *c)
        })
        .collect();
    crate::transforms::simplify::simplify(&h)
}

/// Batching rule of a loop: every result batched.
pub fn loop_batch(
    g: &mut Function,
    l: &Loop,
    ins: &[Var],
    batched: &[bool],
    axis: &BatchAxis,
) -> Vec<Var> {
    let (bl, operands) = batch_loop(g, l, ins, batched, axis);
    g.push_all(Op::Loop(Box::new(bl)), &operands)
        .expect("internal error: batching a loop")
}

/// Batching rule of a reverse sweep: the forward loop batched as a loop
/// is, the backward body batched and masked by the same per-example mask
/// (a finished example's cotangents pass through, adding nothing).
pub fn reverse_batch(
    g: &mut Function,
    lr: &LoopReverse,
    ins: &[Var],
    batched: &[bool],
    axis: &BatchAxis,
) -> Vec<Var> {
    let size = &axis.size;
    let f = &lr.fwd;
    let nf = f.n_operands();
    let (bl, mut operands) = batch_loop(g, f, &ins[..nf], &batched[..nf], axis);
    for k in 0..lr.n_r() {
        let v = ins[nf + k];
        operands.push(if batched[nf + k] {
            v
        } else {
            g.broadcast_batch(v, size)
        });
    }
    let (nk, nc, na, nr) = (f.n_consts, f.n_carries(), lr.n_acc, lr.n_r());
    let n_extra = bl.n_consts - nk;
    let nb = f.n_bounds();
    let mut axes: Vec<Option<usize>> = (0..nk).map(|k| batched[nb + k].then_some(0)).collect();
    if f.kind == LoopKind::For {
        axes.push(None);
    }
    axes.extend(std::iter::repeat_n(Some(0), nc + nr));
    let bb = vmap_sized(&lr.back, &axes, &vec![Some(0); na + nr], axis)
        .expect("internal error: batching a reverse loop");
    let back = if n_extra == 0 && f.kind == LoopKind::For {
        bb
    } else {
        // Same params as the batched body plus the cotangents.
        let mut h = Function::new(&lr.back.name);
        let body = &bl.body;
        let ps: Vec<Var> = body
            .params
            .iter()
            .zip(&body.param_names)
            .map(|(p, n)| h.add_param(n, body.ty(*p).clone()))
            .collect();
        let rs: Vec<Var> = (0..nr)
            .map(|k| {
                let p = bb.params[bb.params.len() - nr + k];
                h.add_param(&bb.param_names[bb.params.len() - nr + k], bb.ty(p).clone())
            })
            .collect();
        // The batched back body's args: consts, [i], carries, r (no extra bounds).
        let mut args: Vec<Var> = ps[..nk].to_vec();
        args.extend(&ps[nk + n_extra..]);
        args.extend(&rs);
        let out = inline(&mut h, &bb, &args);
        // The mask: the masked body's own, recomputed from its params.
        let carries = &ps[ps.len() - nc..];
        let mask = step_mask(&mut h, &bl, f, &ps, carries, axis);
        let mut outs = Vec::new();
        for (k, o) in out.iter().enumerate() {
            let keep = if k < na { h.zeros_like(*o) } else { rs[k - na] };
            let m = mask_over(&mut h, mask, *o);
            outs.push(h.select(m, *o, keep));
        }
        h.outs = outs;
        crate::transforms::simplify::simplify(&h)
    };
    let rl = LoopReverse {
        fwd: bl,
        back,
        n_acc: na,
        results: lr.results.clone(),
        // A batched sweep is not the gradient sweep of its loop.
        sweep_of: None,
    };
    g.push_all(Op::LoopReverse(Box::new(rl)), &operands)
        .expect("internal error: batching a reverse loop")
}

/// The per-example mask of a step of the batched loop `bl` (of `f`), from
/// the batched body's params `ps`.
fn step_mask(
    h: &mut Function,
    bl: &Loop,
    f: &Loop,
    ps: &[Var],
    carries: &[Var],
    axis: &BatchAxis,
) -> Var {
    let size = &axis.size;
    let nk = f.n_consts;
    let n_extra = bl.n_consts - nk;
    match f.kind {
        LoopKind::For => {
            debug_assert_eq!(n_extra, 2);
            in_range(h, ps[bl.n_consts], ps[nk], ps[nk + 1], size)
        }
        LoopKind::While => {
            let c = f.cond.as_ref().expect("a while loop has a condition");
            let axes: Vec<Option<usize>> = (0..nk)
                .map(|k| {
                    (bl.body.shape(bl.body.params[k]).rank() > c.shape(c.params[k]).rank())
                        .then_some(0)
                })
                .chain(std::iter::repeat_n(Some(0), carries.len()))
                .collect();
            let cb = vmap_sized(c, &axes, &[Some(0)], axis)
                .expect("internal error: batching a loop condition");
            let mut args: Vec<Var> = ps[..nk].to_vec();
            args.extend(carries);
            inline(h, &cb, &args)[0]
        }
    }
}
