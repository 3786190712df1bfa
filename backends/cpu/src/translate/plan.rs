//! What is decided about a kernel before any code is emitted: whether the
//! innermost loop runs in vectors (`VectorPlan`) and which insts are the
//! same for every innermost coordinate (computed once per row).

use crate::math::Num;
use cranelift_codegen::ir::types;
use oxla_core::kernel::{InstKind, Kernel};
use oxla_core::ops::elementwise::UnaryOp;
use oxla_core::DType;

/// How the innermost loop is vectorized.
#[derive(Clone, Copy)]
pub(super) struct VectorPlan {
    pub(super) num: Num,
    pub(super) lanes: i64,
    /// Vectors per iteration (independent accumulators in reductions).
    pub(super) unroll: i64,
}

/// Whether the innermost loop can run in vectors: one float type throughout,
/// loads of matching storage with innermost stride 0 or 1, and map stores
/// into storage of that float type.
pub(super) fn vector_plan(k: &Kernel, fma: bool) -> Option<VectorPlan> {
    let inner = k.domain.len().checked_sub(1)?;
    // Positions read from memory: one element at a time, each guarded;
    // a scan carries its state from one step to the next.
    if k.is_indexed() || k.scan.is_some() {
        return None;
    }
    let mut float = None;
    for inst in &k.insts {
        if inst.ty != DType::Bool {
            if float.is_some_and(|f| f != inst.ty) {
                return None;
            }
            float = Some(inst.ty);
        }
        match &inst.kind {
            InstKind::Load { arg, strides, .. } => {
                let (s, dtype) = (&strides[inner], k.args[*arg].dtype);
                let contiguous = s.is_one() && dtype.is_float() && dtype.compute_type() == inst.ty;
                if !(contiguous || s.is_zero()) {
                    return None;
                }
            }
            InstKind::Cmp(_, a, b)
                if k.insts[*a].ty == DType::Bool || k.insts[*b].ty == DType::Bool =>
            {
                return None
            }
            _ => {}
        }
    }
    let float = float?;
    // A region store moves by its innermost stride: vectors need 1.
    if k.region().is_some_and(|r| !r.strides[inner].is_one()) {
        return None;
    }
    if !k.is_reduction()
        && k.stores
            .iter()
            .any(|st| k.args[st.arg].dtype.compute_type() != float)
    {
        return None;
    }
    let (ty, lanes) = if float == DType::F32 {
        (types::F32X4, 4)
    } else {
        (types::F64X2, 2)
    };
    let heavy = k.insts.iter().any(|i| {
        matches!(i.kind, InstKind::Unary(op, _) if !matches!(op, UnaryOp::Neg | UnaryOp::Sqrt | UnaryOp::Powi(_)))
    });
    let unroll = match (k.is_reduction(), heavy || k.insts.len() > 16) {
        (false, _) => 1,
        (true, true) => 2,
        (true, false) => 4,
    };
    Some(VectorPlan {
        num: Num { ty, fma },
        lanes,
        unroll,
    })
}

/// Insts whose value is the same for every innermost coordinate: constants,
/// loads with a zero innermost stride, and ops on such values.
pub(super) fn invariant_insts(k: &Kernel) -> Vec<bool> {
    let mut inv: Vec<bool> = Vec::with_capacity(k.insts.len());
    for inst in &k.insts {
        let v = match &inst.kind {
            InstKind::Load { strides, .. } => strides.last().is_none_or(|s| s.is_zero()),
            InstKind::LoadIndexed { strides, index, .. } => {
                strides.last().is_none_or(|s| s.is_zero()) && inv[*index]
            }
            InstKind::Const(_) | InstKind::Size(_) => true,
            InstKind::Index(axis) => axis + 1 != k.domain.len(),
            InstKind::Carry => false,
            InstKind::Unary(_, a) => inv[*a],
            InstKind::Binary(_, a, b) | InstKind::Cmp(_, a, b) => inv[*a] && inv[*b],
            InstKind::Select(c, a, b) => inv[*c] && inv[*a] && inv[*b],
        };
        inv.push(v);
    }
    inv
}
