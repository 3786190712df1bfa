//! Which values get a buffer (`materialize`), and the checks of what a
//! kernel may compute: its integer values, plain operands, unit-axis
//! reshapes and index bases.

use crate::ir::{Function, Var};
use crate::ops::elementwise::BinaryOp;
use crate::ops::{FusionKind, Op};
use crate::shape::{Dim, Shape};

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

/// Which values get a buffer: parameters, outputs, reduction results, the
/// operand of a reshape that is not a unit-axis remap (it is read through
/// the reshaped strides), and each `dot_general` operand that is not plain
/// (`is_plain`), so an elementwise expression is computed once rather than
/// in the product's inner loop, once per output element it feeds.
pub(super) fn materialize(f: &Function, defs: &[Option<usize>]) -> Vec<bool> {
    let mut m = vec![false; f.types.len()];
    for v in f.params.iter().chain(&f.outs) {
        m[v.index()] = true;
    }
    for e in &f.eqns {
        match (e.op.fusion_kind(), &e.op) {
            // A host step reads its operands' buffers and writes its results'.
            (
                FusionKind::Control
                | FusionKind::Collective
                | FusionKind::Sort
                | FusionKind::Linalg
                | FusionKind::Conv,
                _,
            ) => {
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

pub(super) fn is_int(d: crate::dtype::DType) -> bool {
    matches!(d, crate::dtype::DType::I32 | crate::dtype::DType::I64)
}

/// Integer values exist in kernels only as buffers: loaded widened to a
/// float (labels, indices, a converted result), or written by a store that
/// converts a float or bool (`materialize` makes every conversion to an
/// integer a kernel's result); a kernel computes no integer arithmetic.
pub(super) fn check_kernel_types(
    f: &Function,
    defs: &[Option<usize>],
    materialized: &[bool],
) -> Result<(), String> {
    let int = is_int;
    for e in &f.eqns {
        if e.op.fusion_kind().is_host_step() {
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
pub(super) fn unit_remap(from: &Shape, to: &Shape) -> Option<Vec<Option<usize>>> {
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
