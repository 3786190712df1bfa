//! Fusion: IR function → `Program` of kernels.
//!
//! Values are *materialized* (written to memory) only where they must be:
//! parameters, outputs, results of reductions (`reduce_sum`, `reduce_max`,
//! `reduce_min`, `reduce_prod`, `dot`, `dot_general`) and of scans
//! (`linear_scan`: a scan kernel carries its state along one axis, so
//! nothing after it fuses into it), the operand of a reshape that
//! regroups axes, an operand of `dot_general` that is not already a
//! plain load, the operand and the indices of a gather (an indexed load),
//! a scatter-add's result (a zero fill, then a kernel that adds into it),
//! the operands and results of a loop or a cond (a step the host runs: its
//! bodies or branches are programs of their own, see `exec::HostStep`),
//! a transcendental expression that a broadcast would
//! otherwise recompute along new axes, and every conversion to an integer
//! (the store converts; see `materialize`). Every other value — elementwise ops,
//! literals, broadcasts, transposes — is computed inside the kernel of each
//! materialized value that needs it, so `sum(x * 2 * y + z)` is one kernel
//! with no temporaries. A broadcast becomes a stride (0 along the new axes)
//! on the loads below it, a transpose a permutation of those strides.
//!
//! Coordinates are passed down as a map (`cmap`) from the value's axes to
//! domain axes; an axis whose coordinate is always 0 (a unit axis a reshape
//! removed) maps to [`ZERO`].

use super::{Inst, InstKind, Kernel, KernelArg, Reduce, Region, Scan, Scatter, Store, ValueId};
use crate::exec::{BufferInfo, CondStep, HostStep, Launch, LoopStep, Nested, Program};
use crate::ir::{Function, Var};
use crate::ops::elementwise::BinaryOp;
use crate::ops::{DotDims, FusionKind, Op};
use crate::shape::{Dim, Shape, Size};
use crate::transforms::simplify;
use crate::verify::verify;
use std::collections::{BTreeSet, HashMap};

/// Group elementwise chains and broadcasts with the reduction that consumes
/// them into kernels; return the program that runs them in order.
pub fn fuse(f: &Function) -> Result<Program, String> {
    verify(f)?;
    let f = simplify(f);
    let defs = f.definitions();
    let materialized = materialize(&f, &defs);

    let mut buffers: Vec<BufferInfo> = Vec::new();
    let mut buffer_of: HashMap<Var, usize> = HashMap::new();
    for (i, p) in f.params.iter().enumerate() {
        buffer_of.insert(*p, buffers.len());
        buffers.push(BufferInfo {
            dtype: f.dtype(*p),
            shape: f.shape(*p).clone(),
            param: Some(i),
        });
    }
    check_kernel_types(&f, &defs, &materialized)?;
    let mut kernels: Vec<Kernel> = Vec::new();
    let mut launches = Vec::new();
    let mut host_steps = Vec::new();
    for e in &f.eqns {
        let kind = e.op.fusion_kind();
        if kind == FusionKind::Control {
            let args = e.ins.iter().map(|v| buffer_of[v]).collect();
            let outs = e
                .outs
                .iter()
                .map(|o| {
                    buffer_of.insert(*o, buffers.len());
                    buffers.push(BufferInfo {
                        dtype: f.dtype(*o),
                        shape: f.shape(*o).clone(),
                        param: None,
                    });
                    buffers.len() - 1
                })
                .collect();
            let at = launches.len();
            host_steps.push(host_step(&f, e, at, args, outs, &mut kernels)?);
            continue;
        }
        if !materialized[e.out().index()] {
            continue;
        }
        let out_buffer = buffers.len();
        buffers.push(BufferInfo {
            dtype: f.dtype(e.out()),
            shape: f.shape(e.out()).clone(),
            param: None,
        });
        buffer_of.insert(e.out(), out_buffer);
        if kind == FusionKind::Assemble {
            for (kernel, inputs) in assemble(&f, &defs, &materialized, e) {
                let mut args: Vec<usize> = inputs.iter().map(|v| buffer_of[v]).collect();
                args.push(out_buffer);
                launch(&mut kernels, &mut launches, kernel, args);
            }
            continue;
        }
        let mut b = KernelBuilder::new(&f, &defs, &materialized);
        let out_arg_dtype = f.dtype(e.out());
        let value = match (kind, &e.op) {
            (FusionKind::Reduction, Op::ReduceSum { axes }) => {
                b.reduction(e.ins[0], axes, Reduce::Sum)
            }
            (FusionKind::Reduction, Op::ReduceMax { axes }) => {
                b.reduction(e.ins[0], axes, Reduce::Max)
            }
            (FusionKind::Reduction, Op::ReduceMin { axes }) => {
                b.reduction(e.ins[0], axes, Reduce::Min)
            }
            (FusionKind::Reduction, Op::ReduceProd { axes }) => {
                b.reduction(e.ins[0], axes, Reduce::Prod)
            }
            (FusionKind::Reduction, Op::Dot) => {
                b.domain = vec![Size::of(&f.shape(e.ins[0]).0[0])];
                b.reduce_dims = 1;
                let l = b.value(e.ins[0], &[0]);
                let r = b.value(e.ins[1], &[0]);
                b.inst(f.dtype(e.out()), InstKind::Binary(BinaryOp::Mul, l, r))
            }
            (FusionKind::Reduction, Op::DotGeneral(d)) => {
                b.dot_general(e.ins[0], e.ins[1], d, f.dtype(e.out()))
            }
            (FusionKind::Reduction, op) => unreachable!("internal error: no reduction for {op}"),
            (FusionKind::Scan, Op::LinearScan { axis, reverse }) => {
                b.linear_scan(e, *axis, *reverse)
            }
            (FusionKind::Scan, op) => unreachable!("internal error: no scan kernel for {op}"),
            // An integer literal in a buffer of its own (a loop's bound):
            // the constant in f64, converted by the store.
            (_, Op::Literal { value, .. }) if is_int(out_arg_dtype) => {
                b.domain = f.shape(e.out()).0.iter().map(Size::of).collect();
                let v = out_arg_dtype.round(*value);
                b.inst(crate::dtype::DType::F64, InstKind::Const(v))
            }
            // Elementwise, broadcast, layout and indexed values: the
            // expression below the value, over the value's own domain.
            _ => {
                let shape = f.shape(e.out());
                b.domain = shape.0.iter().map(Size::of).collect();
                let cmap: Vec<usize> = (0..shape.rank()).collect();
                b.root_value(e.out(), &cmap)
            }
        };
        let (kernel, inputs) = b.finish(value, out_arg_dtype, None);
        let mut args: Vec<usize> = inputs.iter().map(|v| buffer_of[v]).collect();
        args.push(out_buffer);
        launch(&mut kernels, &mut launches, kernel, args);
    }
    if cfg!(debug_assertions) {
        for k in &kernels {
            k.verify()
                .map_err(|e| format!("internal error: fused {e}"))?;
        }
    }
    let outputs = f.outs.iter().map(|o| buffer_of[o]).collect();
    Ok(Program::new(f.clone(), kernels, buffers, launches, outputs).with_host_steps(host_steps))
}

/// The schedule's step for the control op `e` (operands in buffers
/// `args`, results into `outs`): a loop step or a cond step.
fn host_step(
    f: &Function,
    e: &crate::ir::Eqn,
    at: usize,
    args: Vec<usize>,
    outs: Vec<usize>,
    kernels: &mut Vec<Kernel>,
) -> Result<HostStep, String> {
    Ok(match &e.op {
        Op::Cond(c) => HostStep::Cond(cond_step(f, c, at, args, outs, kernels)?),
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
    let (l, back) = match &e.op {
        Op::Loop(l) => (&**l, None),
        Op::LoopReverse(r) => (&r.fwd, Some((&r.back, r.n_acc))),
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

/// Launch `kernel` on `args`, sharing one kernel among launches whose
/// kernels have the same text (and so the same name).
fn launch(kernels: &mut Vec<Kernel>, launches: &mut Vec<Launch>, kernel: Kernel, args: Vec<usize>) {
    let index = match kernels.iter().position(|k| k.name == kernel.name) {
        Some(i) => i,
        None => {
            kernels.push(kernel);
            kernels.len() - 1
        }
    };
    launches.push(Launch {
        kernel: index,
        args,
    });
}

/// The coordinate-map entry of an axis whose coordinate is always 0.
pub const ZERO: usize = usize::MAX;

/// The kernels that write a pad or a concatenation, in launch order: each
/// stores one operand (computed in the kernel, like any map) into its region
/// of the result, so no kernel reads or writes outside a buffer; a pad
/// first fills the result with zeros.
fn assemble(
    f: &Function,
    defs: &[Option<usize>],
    materialized: &[bool],
    e: &crate::ir::Eqn,
) -> Vec<(Kernel, Vec<Var>)> {
    let dtype = f.dtype(e.out());
    let out_strides = f.shape(e.out()).strides();
    // Operand `x` stored at `starts` (one per axis) with `steps`.
    let part = |x: Var, starts: &[Dim], steps: &[u64]| {
        let mut b = KernelBuilder::new(f, defs, materialized);
        let shape = f.shape(x);
        b.domain = shape.0.iter().map(Size::of).collect();
        let cmap: Vec<usize> = (0..shape.rank()).collect();
        let value = b.value(x, &cmap);
        let region = Region {
            scatter: None,
            offset: offset_terms(starts, &out_strides),
            strides: out_strides
                .iter()
                .zip(steps)
                .map(|(s, k)| s.mul(&Size::constant(*k)))
                .collect(),
        };
        b.finish(value, dtype, Some(region))
    };
    match &e.op {
        Op::Pad { starts, steps, .. } => {
            let mut zeros = KernelBuilder::new(f, defs, materialized);
            zeros.domain = f.shape(e.out()).0.iter().map(Size::of).collect();
            let zero = zeros.inst(dtype, InstKind::Const(0.0));
            vec![
                zeros.finish(zero, dtype, None),
                part(e.ins[0], starts, steps),
            ]
        }
        Op::Concatenate { axis, .. } => {
            let rank = f.shape(e.out()).rank();
            let mut before: Vec<Dim> = Vec::new();
            let mut out = Vec::new();
            for x in &e.ins {
                let mut starts = vec![Dim::Const(0); rank];
                starts[*axis] = crate::shape::derived::sum(&before);
                out.push(part(*x, &starts, &vec![1; rank]));
                before.push(f.shape(*x).0[*axis].clone());
            }
            out
        }
        Op::ScatterAdd { axis, batch, .. } => {
            let mut zeros = KernelBuilder::new(f, defs, materialized);
            zeros.domain = f.shape(e.out()).0.iter().map(Size::of).collect();
            let zero = zeros.inst(dtype, InstKind::Const(0.0));
            // Over the updates' shape: each element added at its indexed
            // position (the gather's, read backwards).
            let (u, idx) = (e.ins[0], e.ins[1]);
            let mut b = KernelBuilder::new(f, defs, materialized);
            let us = f.shape(u);
            b.domain = us.0.iter().map(Size::of).collect();
            let cmap: Vec<usize> = (0..us.rank()).collect();
            let value = b.value(u, &cmap);
            let index = b.index_value(idx, &index_cmap(f, idx, *axis, *batch, &cmap));
            let n_idx = f.shape(idx).rank() - batch;
            let strides = (0..us.rank())
                .map(|k| match k {
                    k if k < *axis => out_strides[k].clone(),
                    k if k < axis + n_idx => Size::zero(),
                    k => out_strides[k + 1 - n_idx].clone(),
                })
                .collect();
            let region = Region {
                offset: Vec::new(),
                strides,
                scatter: Some(Scatter {
                    index,
                    stride: out_strides[*axis].clone(),
                    bound: Size::of(&f.shape(e.out()).0[*axis]),
                }),
            };
            vec![
                zeros.finish(zero, dtype, None),
                b.finish(value, dtype, Some(region)),
            ]
        }
        _ => unreachable!("internal error: {} is not assembled", e.op),
    }
}

/// For a gather's (or scatter-add's) indices: the domain axis of each index
/// axis, given `cmap` of the gathered value's axes (the shared leading
/// axes are the value's first; the others sit at `axis..`).
fn index_cmap(f: &Function, idx: Var, axis: usize, batch: usize, cmap: &[usize]) -> Vec<usize> {
    (0..f.shape(idx).rank())
        .map(|k| {
            if k < batch {
                cmap[k]
            } else {
                cmap[axis + k - batch]
            }
        })
        .collect()
}

/// The integer value an index array is read from: below transposes,
/// broadcasts, unit-axis reshapes and `stop_gradient`, which become the
/// index load's strides (`KernelBuilder::index_value`).
fn index_base(f: &Function, defs: &[Option<usize>], v: Var) -> Var {
    let Some(e) = defs[v.index()].map(|i| &f.eqns[i]) else {
        return v;
    };
    match &e.op {
        Op::Transpose { .. } | Op::Broadcast { .. } | Op::StopGradient => {
            index_base(f, defs, e.ins[0])
        }
        Op::Reshape { shape } if unit_remap(f.shape(e.ins[0]), shape).is_some() => {
            index_base(f, defs, e.ins[0])
        }
        // A regrouping reshape reads its operand's buffer.
        Op::Reshape { .. } => e.ins[0],
        _ => v,
    }
}

/// `sum_k starts[k] * strides[k]` as a sum of sizes (zero terms dropped).
fn offset_terms(starts: &[Dim], strides: &[Size]) -> Vec<Size> {
    starts
        .iter()
        .zip(strides)
        .map(|(a, s)| Size::of(a).mul(s))
        .filter(|t| !t.is_zero())
        .collect()
}

/// Which values get a buffer: parameters, outputs, reduction results, the
/// operand of a reshape that is not a unit-axis remap (it is read through
/// the reshaped strides), and each `dot_general` operand that is not plain
/// (`is_plain`), so an elementwise expression is computed once rather than
/// in the product's inner loop, once per output element it feeds.
fn materialize(f: &Function, defs: &[Option<usize>]) -> Vec<bool> {
    let mut m = vec![false; f.types.len()];
    for v in f.params.iter().chain(&f.outs) {
        m[v.index()] = true;
    }
    for e in &f.eqns {
        match (e.op.fusion_kind(), &e.op) {
            // A host step reads its operands' buffers and writes its results'.
            (FusionKind::Control, _) => {
                for v in e.ins.iter().chain(&e.outs) {
                    m[v.index()] = true;
                }
            }
            // Ends a fused group: the result is written to memory.
            (FusionKind::Reduction | FusionKind::Scan, _) => m[e.out().index()] = true,
            // Assembled in memory by kernels that each store a region: a
            // scatter-add is a zero fill and a kernel that adds into its
            // result, at positions read from the index buffer.
            (FusionKind::Assemble, op) => {
                m[e.out().index()] = true;
                if let Op::ScatterAdd { .. } = op {
                    m[index_base(f, defs, e.ins[1]).index()] = true;
                }
            }
            // A gather loads its operand's buffer at positions read from
            // the index buffer.
            (FusionKind::Indexed, _) => {
                m[e.ins[0].index()] = true;
                m[index_base(f, defs, e.ins[1]).index()] = true;
            }
            (FusionKind::Layout, Op::Reshape { shape })
                if unit_remap(f.shape(e.ins[0]), shape).is_none() =>
            {
                m[e.ins[0].index()] = true
            }
            // A slice is a load of its operand's buffer at an offset.
            (FusionKind::Layout, Op::Slice { .. }) => m[e.ins[0].index()] = true,
            // A conversion to an integer is always a store's conversion (the
            // one place a kernel makes an integer); a consumer loads the
            // integer buffer, widened, as it loads an integer parameter.
            (FusionKind::Elementwise, Op::Convert { dtype }) if is_int(*dtype) => {
                m[e.out().index()] = true
            }
            (FusionKind::Elementwise | FusionKind::Broadcast | FusionKind::Layout, _) => {}
        }
    }
    for e in &f.eqns {
        if let Op::DotGeneral(_) = e.op {
            for v in &e.ins {
                if !is_plain(f, defs, &m, *v) {
                    m[v.index()] = true;
                }
            }
        }
    }
    // A broadcast that adds an axis before one of its operand's axes
    // recomputes the operand along it: `exp` of column sums broadcast over
    // the rows runs once per row and column. Such an operand is computed
    // once into a buffer when its expression holds a transcendental
    // function. New axes after all of the operand's (a per-row value over
    // the columns) are left alone: the CPU translator already evaluates
    // values invariant along the innermost axis once per row, and a buffer
    // would only add a pass. Cheap arithmetic is always recomputed.
    let mut costly = vec![None; f.types.len()];
    for e in &f.eqns {
        if let Op::Broadcast { dims, .. } = &e.op {
            let v = e.ins[0];
            let last = dims.iter().max();
            let inner_new_axis = last.is_some_and(|&l| (0..l).any(|a| !dims.contains(&a)));
            if inner_new_axis && has_transcendental(f, defs, &m, &mut costly, v) {
                m[v.index()] = true;
                // Values below `v` no longer count its cost.
                costly.fill(None);
            }
        }
    }
    m
}

/// Whether computing `v` inside a kernel evaluates a unary function other
/// than negation, integer powers, rounding and sign (exp, log, tanh, erf, …),
/// or `pow`, below the
/// materialized values it loads. `memo` caches the answer per value.
fn has_transcendental(
    f: &Function,
    defs: &[Option<usize>],
    m: &[bool],
    memo: &mut [Option<bool>],
    v: Var,
) -> bool {
    use crate::ops::elementwise::UnaryOp;
    if m[v.index()] {
        return false;
    }
    if let Some(known) = memo[v.index()] {
        return known;
    }
    let Some(e) = defs[v.index()].map(|i| &f.eqns[i]) else {
        return false;
    };
    let cheap = |op: &UnaryOp| {
        matches!(
            op,
            UnaryOp::Neg | UnaryOp::Powi(_) | UnaryOp::Round(_) | UnaryOp::Sign | UnaryOp::Signum
        )
    };
    let here =
        matches!(&e.op, Op::Unary(op) if !cheap(op)) || matches!(&e.op, Op::Binary(BinaryOp::Pow));
    let costly = here
        || e.ins
            .iter()
            .any(|x| has_transcendental(f, defs, m, memo, *x));
    memo[v.index()] = Some(costly);
    costly
}

fn is_int(d: crate::dtype::DType) -> bool {
    matches!(d, crate::dtype::DType::I32 | crate::dtype::DType::I64)
}

/// Integer values exist in kernels only as buffers: loaded widened to a
/// float (labels, indices, a converted result), or written by a store that
/// converts a float or bool (`materialize` makes every conversion to an
/// integer a kernel's result); a kernel computes no integer arithmetic.
fn check_kernel_types(
    f: &Function,
    defs: &[Option<usize>],
    materialized: &[bool],
) -> Result<(), String> {
    let int = is_int;
    for e in &f.eqns {
        if e.op.fusion_kind() == FusionKind::Control {
            // Run on the host; its bodies are checked as they are fused.
            continue;
        }
        let (from, to) = (e.ins.first().map(|v| f.dtype(*v)), f.dtype(e.out()));
        if let Op::Convert { dtype } = e.op {
            let from = from.expect("one operand");
            // A float or bool converted to an integer is a kernel's result:
            // the store converts (truncating and saturating, as `as` does).
            let stored = !int(from) && int(dtype) && materialized[e.out().index()];
            if from != dtype && !stored && !crate::ops::convert::kernel_supported(from, dtype) {
                return Err(format!(
                    "converting {from} to {dtype} inside a kernel is not supported yet"
                ));
            }
            if int(from) && !is_plain(f, defs, materialized, e.ins[0]) {
                return Err(format!(
                    "converting a computed {from} value to {dtype} is not supported yet: only integer parameters convert"
                ));
            }
        } else if int(to) && materialized[e.out().index()] && !matches!(e.op, Op::Literal { .. }) {
            return Err(format!(
                "an integer result ({}) is not supported in kernels yet",
                f.ty(e.out())
            ));
        }
    }
    Ok(())
}

/// Whether `v` is read inside a kernel as one load (or a constant): a
/// materialized value, or a transpose, broadcast, reshape or stop_gradient
/// of a plain value, or a literal.
fn is_plain(f: &Function, defs: &[Option<usize>], m: &[bool], v: Var) -> bool {
    if m[v.index()] {
        return true;
    }
    let Some(e) = defs[v.index()].map(|i| &f.eqns[i]) else {
        return true;
    };
    match &e.op {
        Op::Literal { .. } => true,
        // A regrouping reshape loads its (materialized) operand.
        Op::Reshape { shape } if unit_remap(f.shape(e.ins[0]), shape).is_none() => true,
        Op::Transpose { .. } | Op::Broadcast { .. } | Op::Reshape { .. } | Op::StopGradient => {
            is_plain(f, defs, m, e.ins[0])
        }
        // A load at an offset: not a plain strided operand of a product.
        Op::Slice { .. } => false,
        _ => false,
    }
}

/// When reshaping `from` to `to` only inserts or removes axes of constant
/// size 1: for each axis of `from`, the axis of `to` it becomes (`None` for
/// a removed unit axis). `None` when the reshape regroups axes.
fn unit_remap(from: &Shape, to: &Shape) -> Option<Vec<Option<usize>>> {
    let unit = |d: &Dim| *d == Dim::Const(1);
    let kept_to: Vec<usize> = (0..to.rank()).filter(|i| !unit(&to.0[*i])).collect();
    let kept_from: Vec<usize> = (0..from.rank()).filter(|i| !unit(&from.0[*i])).collect();
    if kept_to.len() != kept_from.len()
        || kept_from
            .iter()
            .zip(&kept_to)
            .any(|(a, b)| from.0[*a] != to.0[*b])
    {
        return None;
    }
    let mut map = vec![None; from.rank()];
    for (a, b) in kept_from.iter().zip(&kept_to) {
        map[*a] = Some(*b);
    }
    Some(map)
}

/// Builds one kernel: the expression DAG of a materialized value, with loads
/// of the materialized values it reads.
struct KernelBuilder<'a> {
    f: &'a Function,
    defs: &'a [Option<usize>],
    materialized: &'a [bool],
    domain: Vec<Size>,
    reduce_dims: usize,
    reduce: Reduce,
    scan: Option<Scan>,
    insts: Vec<Inst>,
    /// Materialized values read, in arg order.
    inputs: Vec<Var>,
    memo: HashMap<(Var, Vec<usize>), ValueId>,
    /// Inside a `convert` to a float: integer buffers load widened to it.
    widen_to: Option<crate::dtype::DType>,
}

impl<'a> KernelBuilder<'a> {
    fn new(f: &'a Function, defs: &'a [Option<usize>], materialized: &'a [bool]) -> Self {
        KernelBuilder {
            f,
            defs,
            materialized,
            domain: Vec::new(),
            reduce_dims: 0,
            reduce: Reduce::Sum,
            scan: None,
            insts: Vec::new(),
            inputs: Vec::new(),
            memo: HashMap::new(),
            widen_to: None,
        }
    }

    /// A reduction of `x` over `axes` (increasing): the kept axes outermost
    /// in order, then the reduced ones.
    fn reduction(&mut self, x: Var, axes: &[usize], reduce: Reduce) -> ValueId {
        let shape = self.f.shape(x);
        let rank = shape.rank();
        let order: Vec<usize> = (0..rank)
            .filter(|a| !axes.contains(a))
            .chain(axes.iter().copied())
            .collect();
        let mut cmap = vec![0; rank];
        for (pos, axis) in order.iter().enumerate() {
            cmap[*axis] = pos;
        }
        self.domain = order.iter().map(|a| Size::of(&shape.0[*a])).collect();
        self.reduce_dims = axes.len();
        if !axes.is_empty() {
            self.reduce = reduce;
        }
        self.value(x, &cmap)
    }

    /// `linear_scan(a, b)` (equation `e`): a scan kernel over the result's
    /// shape whose state is `a·carry + b` and whose stored value is the
    /// carry, the state before the step.
    fn linear_scan(&mut self, e: &crate::ir::Eqn, axis: usize, reverse: bool) -> ValueId {
        let shape = self.f.shape(e.out());
        self.domain = shape.0.iter().map(Size::of).collect();
        let cmap: Vec<usize> = (0..shape.rank()).collect();
        let dtype = self.f.dtype(e.out());
        let a = self.value(e.ins[0], &cmap);
        let b = self.value(e.ins[1], &cmap);
        let carry = self.inst(dtype, InstKind::Carry);
        let step = self.inst(dtype, InstKind::Binary(BinaryOp::Mul, a, carry));
        let next = self.inst(dtype, InstKind::Binary(BinaryOp::Add, step, b));
        self.scan = Some(Scan {
            axis,
            reverse,
            next,
        });
        carry
    }

    /// `dot_general(a, b)`: the domain is [batch axes, lhs free axes, rhs
    /// free axes, contracted axes (in `lhs_contract` order)], the contracted
    /// ones summed, and the body is one product.
    fn dot_general(&mut self, a: Var, b: Var, d: &DotDims, dtype: crate::dtype::DType) -> ValueId {
        let (sa, sb) = (self.f.shape(a).clone(), self.f.shape(b).clone());
        let (mut ca, mut cb) = (vec![0; sa.rank()], vec![0; sb.rank()]);
        let mut domain = Vec::new();
        for (x, y) in d.lhs_batch.iter().zip(&d.rhs_batch) {
            (ca[*x], cb[*y]) = (domain.len(), domain.len());
            domain.push(Size::of(&sa.0[*x]));
        }
        for x in d.lhs_free(sa.rank()) {
            ca[x] = domain.len();
            domain.push(Size::of(&sa.0[x]));
        }
        for y in d.rhs_free(sb.rank()) {
            cb[y] = domain.len();
            domain.push(Size::of(&sb.0[y]));
        }
        for (x, y) in d.lhs_contract.iter().zip(&d.rhs_contract) {
            (ca[*x], cb[*y]) = (domain.len(), domain.len());
            domain.push(Size::of(&sa.0[*x]));
        }
        self.domain = domain;
        self.reduce_dims = d.lhs_contract.len();
        let l = self.value(a, &ca);
        let r = self.value(b, &cb);
        self.inst(dtype, InstKind::Binary(BinaryOp::Mul, l, r))
    }

    fn inst(&mut self, dtype: crate::dtype::DType, kind: InstKind) -> ValueId {
        let ty = dtype.compute_type();
        // Equal instructions share one value.
        if let Some(i) = self.insts.iter().position(|x| x.ty == ty && x.kind == kind) {
            return i;
        }
        self.insts.push(Inst { ty, kind });
        self.insts.len() - 1
    }

    /// The value of `v` at the iteration point, where axis `k` of `v` is
    /// domain axis `cmap[k]`.
    fn value(&mut self, v: Var, cmap: &[usize]) -> ValueId {
        if self.materialized[v.index()] {
            return self.load(v, cmap);
        }
        self.root_value(v, cmap)
    }

    /// Like `value`, but computes `v` from its definition even when it is
    /// materialized (it is the kernel's own result).
    fn root_value(&mut self, v: Var, cmap: &[usize]) -> ValueId {
        let key = (v, cmap.to_vec());
        if let Some(id) = self.memo.get(&key) {
            return *id;
        }
        let Some(e) = self.defs[v.index()].map(|i| &self.f.eqns[i]) else {
            return self.load(v, cmap);
        };
        let id = match e.op.fusion_kind() {
            // Written to memory by kernels of their own, or by a host step.
            FusionKind::Reduction
            | FusionKind::Scan
            | FusionKind::Assemble
            | FusionKind::Control => self.load(v, cmap),
            FusionKind::Elementwise
            | FusionKind::Broadcast
            | FusionKind::Layout
            | FusionKind::Indexed => self.expression(e, v, cmap),
        };
        self.memo.insert(key, id);
        id
    }

    /// The kernel instructions computing `v`, defined by `e` (an op fusion
    /// computes inside kernels), at the coordinates `cmap`.
    fn expression(&mut self, e: &crate::ir::Eqn, v: Var, cmap: &[usize]) -> ValueId {
        let dtype = self.f.dtype(v);
        match &e.op {
            // A literal holds its value rounded to its own type (as in `interp`).
            Op::Literal { value, .. } => self.inst(dtype, InstKind::Const(dtype.round(*value))),
            Op::Broadcast { dims, .. } => {
                let inner: Vec<usize> = dims.iter().map(|d| cmap[*d]).collect();
                self.value(e.ins[0], &inner)
            }
            Op::Unary(op) => {
                let a = self.value(e.ins[0], cmap);
                self.inst(dtype, InstKind::Unary(*op, a))
            }
            Op::Binary(op) => {
                let (a, b) = (self.value(e.ins[0], cmap), self.value(e.ins[1], cmap));
                self.inst(dtype, InstKind::Binary(*op, a, b))
            }
            Op::Cmp(op) => {
                let (a, b) = (self.value(e.ins[0], cmap), self.value(e.ins[1], cmap));
                self.inst(dtype, InstKind::Cmp(*op, a, b))
            }
            Op::Select => {
                let c = self.value(e.ins[0], cmap);
                let (a, b) = (self.value(e.ins[1], cmap), self.value(e.ins[2], cmap));
                self.inst(dtype, InstKind::Select(c, a, b))
            }
            Op::StopGradient => self.value(e.ins[0], cmap),
            Op::Convert { dtype: to } if self.f.dtype(e.ins[0]) == crate::dtype::DType::Bool => {
                let c = self.value(e.ins[0], cmap);
                // To an integer: the select is in f64 (0 and 1 are exact)
                // and the store converts.
                let ty = if to.is_float() {
                    *to
                } else {
                    crate::dtype::DType::F64
                };
                let (one, zero) = (
                    self.inst(ty, InstKind::Const(1.0)),
                    self.inst(ty, InstKind::Const(0.0)),
                );
                self.inst(ty, InstKind::Select(c, one, zero))
            }
            // To an integer: the kernel's result (`fuse` checked), which the
            // store to the integer buffer converts.
            Op::Convert { dtype: to } if !to.is_float() => self.value(e.ins[0], cmap),
            Op::Convert { dtype: to } => {
                // An integer operand is a buffer (`fuse` checked), read as `to`.
                let outer = self.widen_to.replace(*to);
                let a = self.value(e.ins[0], cmap);
                self.widen_to = outer;
                a
            }
            Op::Transpose { perm } => {
                // Result axis i is operand axis perm[i].
                let mut inner = vec![ZERO; perm.len()];
                for (i, p) in perm.iter().enumerate() {
                    inner[*p] = cmap[i];
                }
                self.value(e.ins[0], &inner)
            }
            Op::Reshape { shape } => match unit_remap(self.f.shape(e.ins[0]), shape) {
                Some(map) => {
                    let inner: Vec<usize> =
                        map.iter().map(|r| r.map_or(ZERO, |r| cmap[r])).collect();
                    self.value(e.ins[0], &inner)
                }
                // The operand's buffer (materialized) holds the elements in
                // the reshaped row-major order.
                None => self.load_strided(e.ins[0], &shape.strides(), cmap),
            },
            Op::DimSize { dim, .. } => match dim {
                Dim::Const(c) => self.inst(dtype, InstKind::Const(dtype.round(*c as f64))),
                Dim::Sym(_) => self.inst(dtype, InstKind::Size(Size::of(dim))),
            },
            Op::Iota { axis, .. } => match cmap[*axis] {
                ZERO => self.inst(dtype, InstKind::Const(0.0)),
                d => self.inst(dtype, InstKind::Index(d)),
            },
            Op::Slice { starts, steps, .. } => {
                // The operand's buffer (materialized) read from the window's
                // start with its strides multiplied by the steps.
                let x = e.ins[0];
                let base = self.f.shape(x).strides();
                let strides: Vec<Size> = base
                    .iter()
                    .zip(steps)
                    .map(|(s, k)| s.mul(&Size::constant(*k)))
                    .collect();
                let offset = offset_terms(starts, &base);
                self.load_at(x, &strides, offset, cmap)
            }
            Op::Gather { axis, batch } => {
                let (x, idx) = (e.ins[0], e.ins[1]);
                let index = self.index_value(idx, &index_cmap(self.f, idx, *axis, *batch, cmap));
                let n_idx = self.f.shape(idx).rank() - batch;
                let xs = self.f.shape(x);
                // The picked axis moves by the index, not by a loop.
                let xcmap: Vec<usize> = (0..xs.rank())
                    .map(|k| match k {
                        k if k < *axis => cmap[k],
                        k if k == *axis => ZERO,
                        k => cmap[k - 1 + n_idx],
                    })
                    .collect();
                let strides = xs.strides();
                let (stride, bound) = (strides[*axis].clone(), Size::of(&xs.0[*axis]));
                let (arg, strides) = self.load_args(x, &strides, &xcmap);
                self.inst(
                    dtype,
                    InstKind::LoadIndexed {
                        arg,
                        strides,
                        offset: Vec::new(),
                        index,
                        stride,
                        bound,
                    },
                )
            }
            op => unreachable!("internal error: {op} is not computed inside a kernel"),
        }
    }

    /// Load materialized `v` at the iteration point (its own strides).
    fn load(&mut self, v: Var, cmap: &[usize]) -> ValueId {
        let strides = self.f.shape(v).strides();
        self.load_strided(v, &strides, cmap)
    }

    /// Load the buffer of materialized `v` through `buf_strides`, one per
    /// axis of the value read (axis `k` at domain axis `cmap[k]`).
    fn load_strided(&mut self, v: Var, buf_strides: &[Size], cmap: &[usize]) -> ValueId {
        self.load_at(v, buf_strides, Vec::new(), cmap)
    }

    /// An index array's element at the iteration point, as an `f64` load of
    /// its integer buffer (below the layout ops `index_base` looks through).
    fn index_value(&mut self, v: Var, cmap: &[usize]) -> ValueId {
        let f = self.f;
        let e = match self.defs[v.index()].map(|i| &f.eqns[i]) {
            Some(e) if !self.materialized[v.index()] => e,
            _ => {
                let outer = self.widen_to.replace(crate::dtype::DType::F64);
                let id = self.load(v, cmap);
                self.widen_to = outer;
                return id;
            }
        };
        match &e.op {
            Op::Transpose { perm } => {
                let mut inner = vec![ZERO; perm.len()];
                for (i, p) in perm.iter().enumerate() {
                    inner[*p] = cmap[i];
                }
                self.index_value(e.ins[0], &inner)
            }
            Op::Broadcast { dims, .. } => {
                let inner: Vec<usize> = dims.iter().map(|d| cmap[*d]).collect();
                self.index_value(e.ins[0], &inner)
            }
            Op::StopGradient => self.index_value(e.ins[0], cmap),
            Op::Reshape { shape } => match unit_remap(f.shape(e.ins[0]), shape) {
                Some(map) => {
                    let inner: Vec<usize> =
                        map.iter().map(|r| r.map_or(ZERO, |r| cmap[r])).collect();
                    self.index_value(e.ins[0], &inner)
                }
                None => {
                    let outer = self.widen_to.replace(crate::dtype::DType::F64);
                    let id = self.load_strided(e.ins[0], &shape.strides(), cmap);
                    self.widen_to = outer;
                    id
                }
            },
            _ => panic!("internal error: index array {v} is not materialized"),
        }
    }

    /// `load_strided` from element `offset` (a sum of sizes) on.
    fn load_at(
        &mut self,
        v: Var,
        buf_strides: &[Size],
        offset: Vec<Size>,
        cmap: &[usize],
    ) -> ValueId {
        let (arg, strides) = self.load_args(v, buf_strides, cmap);
        let dtype = match self.widen_to {
            Some(to) if !self.f.dtype(v).is_float() => to,
            _ => self.f.dtype(v),
        };
        self.inst(
            dtype,
            InstKind::Load {
                arg,
                strides,
                offset,
            },
        )
    }

    /// The arg of materialized `v` (added to the inputs) and the strides,
    /// one per domain axis, of reading it through `buf_strides` (axis `k`
    /// of `v` at domain axis `cmap[k]`).
    fn load_args(&mut self, v: Var, buf_strides: &[Size], cmap: &[usize]) -> (usize, Vec<Size>) {
        let arg = match self.inputs.iter().position(|x| *x == v) {
            Some(i) => i,
            None => {
                self.inputs.push(v);
                self.inputs.len() - 1
            }
        };
        let strides = (0..self.domain.len())
            .map(|d| {
                let axes: Vec<&Size> = (0..cmap.len())
                    .filter(|k| cmap[*k] == d)
                    .map(|k| &buf_strides[k])
                    .collect();
                match axes.as_slice() {
                    [] => Size::zero(),
                    [s] => (*s).clone(),
                    _ => panic!("internal error: two axes of one value on one loop"),
                }
            })
            .collect();
        (arg, strides)
    }

    fn finish(
        self,
        value: ValueId,
        out_dtype: crate::dtype::DType,
        region: Option<Region>,
    ) -> (Kernel, Vec<Var>) {
        let mut args: Vec<KernelArg> = self
            .inputs
            .iter()
            .map(|v| KernelArg {
                dtype: self.f.dtype(*v),
                output: false,
            })
            .collect();
        args.push(KernelArg {
            dtype: out_dtype,
            output: true,
        });
        let mut syms = BTreeSet::new();
        for s in &self.domain {
            syms.extend(s.syms.iter().cloned());
        }
        for inst in &self.insts {
            match &inst.kind {
                InstKind::Load {
                    strides, offset, ..
                } => {
                    for s in strides.iter().chain(offset) {
                        syms.extend(s.syms.iter().cloned());
                    }
                }
                InstKind::LoadIndexed {
                    strides,
                    offset,
                    stride,
                    bound,
                    ..
                } => {
                    for s in strides.iter().chain(offset).chain([stride, bound]) {
                        syms.extend(s.syms.iter().cloned());
                    }
                }
                InstKind::Size(s) => syms.extend(s.syms.iter().cloned()),
                _ => {}
            }
        }
        if let Some(r) = &region {
            let scatter = r.scatter.iter().flat_map(|sc| [&sc.stride, &sc.bound]);
            for s in r.strides.iter().chain(&r.offset).chain(scatter) {
                syms.extend(s.syms.iter().cloned());
            }
        }
        let store = Store {
            arg: args.len() - 1,
            value,
            region,
        };
        let mut k = Kernel {
            name: String::new(),
            args,
            sizes: syms.into_iter().collect(),
            domain: self.domain,
            reduce_dims: self.reduce_dims,
            reduce: self.reduce,
            insts: self.insts,
            stores: vec![store],
            scan: self.scan,
        };
        k.name = k.symbol();
        (k, self.inputs)
    }
}
