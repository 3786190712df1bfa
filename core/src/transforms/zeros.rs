//! Symbolic zeros across control flow: which tangents can be nonzero
//! (forward) and which values a cotangent can reach (backward), through
//! conds and loops, so that the transforms never materialize a zero that a
//! NaN or infinite local derivative would then multiply (0·NaN = NaN).
//!
//! Both analyses are structural and err on the side of "may be nonzero":
//! a value they call zero is exactly zero in every run, so replacing it by
//! a symbolic zero changes no finite result; it only keeps 0·NaN out.
//!
//! - `tangent_reach`: forward, from the params that have a tangent. A value
//!   gets one when an operand that carries derivatives has one: not
//!   through a comparison, `stop_gradient`, an `iota`/`dim_size`/literal, a
//!   non-float result (an integer or bool convert), a rounding or sign op,
//!   a select's predicate or a gather's indices; through a cond, per result
//!   from its branches; through a loop, by a fixpoint over its carries (as
//!   JAX's `_scan_jvp`/`_while_loop_jvp` find their nonzero tangents).
//! - `cotangent_reach`: backward, from the results that have a cotangent,
//!   for a function linear in some params (a JVP's tangent part): which
//!   params it reaches. A cond reaches what its branches read for those
//!   results (not its predicate); a loop, what its body reads for the
//!   carries a cotangent reaches at any step (a fixpoint; the `while`
//!   condition is never followed: it only steers). Only the answers for
//!   params the function is linear in mean anything.

use crate::ir::Function;
use crate::ops::control::Loop;

/// Which results of `f` may have a nonzero tangent when the params with
/// `from[k]` do.
pub(crate) fn tangent_reach(f: &Function, from: &[bool]) -> Vec<bool> {
    let mut t = vec![false; f.types.len()];
    for (p, on) in f.params.iter().zip(from) {
        t[p.index()] = *on && f.dtype(*p).is_float();
    }
    for e in &f.eqns {
        let ins: Vec<bool> = e.ins.iter().map(|v| t[v.index()]).collect();
        if !ins.iter().any(|x| *x) {
            continue;
        }
        let outs = e.op.tangent_reach(&ins);
        for (o, on) in e.outs.iter().zip(outs) {
            t[o.index()] = on && f.dtype(*o).is_float();
        }
    }
    f.outs.iter().map(|o| t[o.index()]).collect()
}

/// For a loop whose operands with `ins[k]` have a tangent: which of its
/// constants have one, and which carries may have a nonzero tangent at
/// some step (the fixpoint: a carry whose initial value has a tangent, or
/// whose next value gets one from the constants and carries that do).
pub(crate) fn loop_tangent_reach(l: &Loop, ins: &[bool]) -> (Vec<bool>, Vec<bool>) {
    let (nb, nk, nc) = (l.n_bounds(), l.n_consts, l.n_carries());
    let consts: Vec<bool> = (0..nk).map(|k| ins[nb + k]).collect();
    let mut carries: Vec<bool> = (0..nc)
        .map(|k| ins[nb + nk + k] && l.carry_type(k).dtype.is_float())
        .collect();
    loop {
        let mut from = consts.clone();
        from.extend(std::iter::repeat_n(false, nb / 2));
        from.extend(&carries);
        let out = tangent_reach(&l.body, &from);
        let next: Vec<bool> = carries.iter().zip(&out).map(|(a, b)| *a || *b).collect();
        if next == carries {
            return (consts, carries);
        }
        carries = next;
    }
}

/// Which params of `f` a cotangent on the results with `live[k]` can reach.
pub(crate) fn cotangent_reach(f: &Function, live: &[bool]) -> Vec<bool> {
    let mut r = vec![false; f.types.len()];
    for (o, on) in f.outs.iter().zip(live) {
        if *on {
            r[o.index()] = true;
        }
    }
    for e in f.eqns.iter().rev() {
        let outs: Vec<bool> = e.outs.iter().map(|o| r[o.index()]).collect();
        if !outs.iter().any(|x| *x) {
            continue;
        }
        let ins = e.op.cotangent_reach(&outs);
        for (v, on) in e.ins.iter().zip(ins) {
            r[v.index()] |= on;
        }
    }
    f.params.iter().map(|p| r[p.index()]).collect()
}

/// For a loop whose carries with `live[k]` have a cotangent after it: the
/// constants a cotangent reaches, and the carries it reaches at some step
/// (the fixpoint: a carry is reached when it is live after the loop or the
/// next value of a reached carry reads it).
pub(crate) fn loop_cotangent_reach(l: &Loop, live: &[bool]) -> (Vec<bool>, Vec<bool>) {
    let (nk, nc) = (l.n_consts, l.n_carries());
    let c0 = nk + l.n_bounds() / 2;
    let mut carries = live.to_vec();
    loop {
        let reach = cotangent_reach(&l.body, &carries);
        let next: Vec<bool> = (0..nc).map(|k| carries[k] || reach[c0 + k]).collect();
        if next == carries {
            return (reach[..nk].to_vec(), carries);
        }
        carries = next;
    }
}

/// Which results of `f` are the constant 0 (a zero literal, or a
/// broadcast of one), as a function simplified after a transform gives a
/// symbolic zero it had to return.
pub(crate) fn zero_results(f: &Function) -> Vec<bool> {
    let defs = f.definitions();
    f.outs
        .iter()
        .map(|o| f.literal_value(*o, &defs) == Some(0.0))
        .collect()
}
