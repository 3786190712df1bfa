//! The schedule's host steps: a loop's body, condition and backward body,
//! and a cond's branches, each fused into a program of its own whose
//! kernels join the enclosing program's list.

use super::fuse;
use crate::exec::{
    CollectiveStep, CondStep, ConvStep, HostStep, LinalgStep, LoopStep, Nested, PmapStep, SortStep,
};
use crate::ir::Function;
use crate::kernel::Kernel;
use crate::ops::Op;

/// The schedule's step for the control op `e` (operands in buffers
/// `args`, results into `outs`): a loop step or a cond step.
pub(super) fn host_step(
    f: &Function,
    e: &crate::ir::Eqn,
    at: usize,
    args: Vec<usize>,
    outs: Vec<usize>,
    kernels: &mut Vec<Kernel>,
) -> Result<HostStep, String> {
    Ok(match &e.op {
        Op::Cond(c) => HostStep::Cond(cond_step(f, c, at, args, outs, kernels)?),
        Op::Pmap(p) => HostStep::Pmap(pmap_step(f, p, at, args, outs, kernels)?),
        Op::Collective(c) => HostStep::Collective(CollectiveStep {
            at,
            op: c.clone(),
            args,
            results: vec![0],
            outs,
        }),
        Op::Argsort {
            axis,
            descending,
            k,
        } => HostStep::Sort(SortStep {
            at,
            axis: *axis,
            descending: *descending,
            k: *k,
            args,
            results: vec![0],
            outs,
        }),
        Op::Linalg(op) => HostStep::Linalg(LinalgStep {
            at,
            op: *op,
            args,
            results: vec![0],
            outs,
        }),
        Op::Conv(p) => HostStep::Conv(ConvStep {
            at,
            params: p.clone(),
            args,
            results: vec![0],
            outs,
        }),
        _ => HostStep::Loop(loop_step(f, e, at, args, outs, kernels)?),
    })
}

/// The schedule's step for the loop `e` (operands in buffers `args`,
/// results into `outs`): its body, condition and backward body fused into
/// programs of their own, whose kernels join `kernels`.
fn loop_step(
    f: &Function,
    e: &crate::ir::Eqn,
    at: usize,
    args: Vec<usize>,
    outs: Vec<usize>,
    kernels: &mut Vec<Kernel>,
) -> Result<LoopStep, String> {
    let (l, back, back_reads) = match &e.op {
        Op::Loop(l) => (&**l, None, vec![true; l.n_carries()]),
        Op::LoopReverse(r) => (&r.fwd, Some((&r.back, r.n_acc)), r.back_reads_carries()),
        _ => unreachable!("internal error: not a loop"),
    };
    let mut nest = |g: &Function| nested(f, g, "the loop", kernels);
    let body = nest(&l.body)?;
    let cond = l.cond.as_ref().map(&mut nest).transpose()?;
    let back = match back {
        Some((b, n_acc)) => Some((nest(b)?, n_acc)),
        None => None,
    };
    let results = match &e.op {
        Op::LoopReverse(r) => r.results.clone(),
        _ => l.results.clone(),
    };
    Ok(LoopStep {
        at,
        kind: l.kind,
        n_consts: l.n_consts,
        checkpoint: l.checkpoint,
        body,
        cond,
        back,
        back_reads,
        results,
        args,
        outs,
    })
}

/// `g` (a function a host step runs: `what`) fused into a program of its
/// own, whose kernels join `kernels`.
fn nested(
    f: &Function,
    g: &Function,
    what: &str,
    kernels: &mut Vec<Kernel>,
) -> Result<Nested, String> {
    let p = fuse(g).map_err(|err| format!("`{}`: in {what} `{}`: {err}", f.name, g.name))?;
    let map = p
        .kernels
        .iter()
        .map(|k| match kernels.iter().position(|x| x.name == k.name) {
            Some(i) => i,
            None => {
                kernels.push(k.clone());
                kernels.len() - 1
            }
        })
        .collect();
    Ok(Nested {
        program: p,
        kernels: map,
    })
}

/// The schedule's step for a cond: each branch fused into a program of its
/// own (see `exec::cond`).
fn cond_step(
    f: &Function,
    c: &crate::ops::control::Cond,
    at: usize,
    args: Vec<usize>,
    outs: Vec<usize>,
    kernels: &mut Vec<Kernel>,
) -> Result<CondStep, String> {
    Ok(CondStep {
        at,
        then: nested(f, &c.then, "the cond branch", kernels)?,
        otherwise: nested(f, &c.otherwise, "the cond branch", kernels)?,
        results: (0..outs.len()).collect(),
        args,
        outs,
    })
}

/// The schedule's step for a pmap: its body fused into a program of its
/// own (see `exec::pmap`). A body whose types name the axis's size symbol
/// gets a last parameter of that extent, which binds it at the call.
fn pmap_step(
    f: &Function,
    p: &crate::ops::control::Pmap,
    at: usize,
    args: Vec<usize>,
    outs: Vec<usize>,
    kernels: &mut Vec<Kernel>,
) -> Result<PmapStep, String> {
    let axis = crate::ops::collective::axis_dim(&p.axis);
    let crate::shape::Dim::Sym(symbol) = axis.clone() else {
        unreachable!("an axis symbol")
    };
    let carrier = p.body.symbols().contains(&symbol);
    let body = if carrier {
        let mut b = p.body.clone();
        b.add_param(
            &symbol,
            crate::ir::Type::new(crate::dtype::DType::Bool, crate::shape::Shape(vec![axis])),
        );
        b
    } else {
        p.body.clone()
    };
    Ok(PmapStep {
        at,
        op: p.clone(),
        body: nested(f, &body, "the pmap body", kernels)?,
        carrier,
        results: (0..outs.len()).collect(),
        args,
        outs,
    })
}
