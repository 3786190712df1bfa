//! The kernels that assemble a result from parts: a pad (a zero fill,
//! then the operand into its region), a concatenation (each operand into
//! its region), a scatter-add (a zero fill, then the updates added at
//! their indexed positions).

use super::builder::{index_cmap, offset_terms, KernelBuilder};
use crate::ir::{Function, Var};
use crate::kernel::{InstKind, Kernel, Region, Scatter};
use crate::ops::Op;
use crate::shape::{Dim, Size};

/// The kernels that write a pad or a concatenation, in launch order: each
/// stores one operand (computed in the kernel, like any map) into its region
/// of the result, so no kernel reads or writes outside a buffer; a pad
/// first fills the result with zeros.
pub(super) fn assemble(
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
