//! `dot_general`, as in JAX's lax: a product contracting `lhs_contract[i]`
//! with `rhs_contract[i]` and pairing `lhs_batch[i]` with `rhs_batch[i]`.
//! The result's axes are the batch axes (in `lhs_batch` order), then the
//! lhs's free axes, then the rhs's free axes (each in increasing order).
//! vector·vector, matrix·vector, matrix·matrix and batched matmul are all
//! instances.
//!
//! In the kernel IR it is a reduction kernel: a product of two loads summed
//! over the contracted axes. The CPU backend recognizes that kernel and calls
//! `gemm` for it (see `oxla_cpu::matmul`).

use crate::ir::{Function, Type, Var};
use crate::kernel::PairwiseSum;
use crate::ops::Op;
use crate::shape::Shape;
use crate::tensor::{unravel, Tensor};

/// The dimension numbers of a `dot_general`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct DotDims {
    pub lhs_contract: Vec<usize>,
    pub rhs_contract: Vec<usize>,
    pub lhs_batch: Vec<usize>,
    pub rhs_batch: Vec<usize>,
}

impl DotDims {
    /// The axes of an operand of rank `rank` that are neither contracted nor
    /// batch axes, in increasing order.
    pub fn free(rank: usize, contract: &[usize], batch: &[usize]) -> Vec<usize> {
        (0..rank)
            .filter(|a| !contract.contains(a) && !batch.contains(a))
            .collect()
    }
    pub fn lhs_free(&self, rank: usize) -> Vec<usize> {
        DotDims::free(rank, &self.lhs_contract, &self.lhs_batch)
    }
    pub fn rhs_free(&self, rank: usize) -> Vec<usize> {
        DotDims::free(rank, &self.rhs_contract, &self.rhs_batch)
    }
    /// The same product with the operands swapped.
    pub fn swapped(&self) -> DotDims {
        DotDims {
            lhs_contract: self.rhs_contract.clone(),
            rhs_contract: self.lhs_contract.clone(),
            lhs_batch: self.rhs_batch.clone(),
            rhs_batch: self.lhs_batch.clone(),
        }
    }
}

fn distinct_below(axes: &[usize], rank: usize) -> bool {
    axes.iter()
        .enumerate()
        .all(|(i, a)| *a < rank && !axes[..i].contains(a))
}

pub fn dot_general_infer(a: &Type, b: &Type, d: &DotDims) -> Result<Type, String> {
    let err = |why: &str| Err(format!("dot_general of {a} and {b} with {d:?}: {why}"));
    if a.dtype != b.dtype || !a.dtype.is_float() {
        return err("needs two float operands of one element type");
    }
    let (ra, rb) = (a.shape.rank(), b.shape.rank());
    if d.lhs_contract.len() != d.rhs_contract.len() || d.lhs_batch.len() != d.rhs_batch.len() {
        return err("contracting and batch axes must come in pairs");
    }
    let lhs_axes: Vec<usize> = d.lhs_contract.iter().chain(&d.lhs_batch).copied().collect();
    let rhs_axes: Vec<usize> = d.rhs_contract.iter().chain(&d.rhs_batch).copied().collect();
    if !distinct_below(&lhs_axes, ra) || !distinct_below(&rhs_axes, rb) {
        return err("axes must be distinct and within each operand's rank");
    }
    for (x, y) in lhs_axes.iter().zip(&rhs_axes) {
        if a.shape.0[*x] != b.shape.0[*y] {
            return err(&format!(
                "lhs axis {x} ({}) and rhs axis {y} ({}) must have one size",
                a.shape.0[*x], b.shape.0[*y]
            ));
        }
    }
    let mut shape: Vec<_> = d.lhs_batch.iter().map(|x| a.shape.0[*x].clone()).collect();
    shape.extend(d.lhs_free(ra).iter().map(|x| a.shape.0[*x].clone()));
    shape.extend(d.rhs_free(rb).iter().map(|x| b.shape.0[*x].clone()));
    Ok(Type::new(a.dtype, Shape(shape)))
}

/// The reference product: each element's terms are products in `f64`
/// (exact below `f64`), summed pairwise in `f64` in row-major order of the
/// contracted axes, rounded once (as `reduce_sum_eval`).
pub fn dot_general_eval(a: &Tensor, b: &Tensor, d: &DotDims) -> Tensor {
    let (sa, sb) = (a.strides(), b.strides());
    let (fa, fb) = (d.lhs_free(a.shape.len()), d.rhs_free(b.shape.len()));
    let mut out_shape: Vec<usize> = d.lhs_batch.iter().map(|x| a.shape[*x]).collect();
    out_shape.extend(fa.iter().map(|x| a.shape[*x]));
    out_shape.extend(fb.iter().map(|x| b.shape[*x]));
    let red: Vec<usize> = d.lhs_contract.iter().map(|x| a.shape[*x]).collect();
    let n_red: usize = red.iter().product();
    let n_out: usize = out_shape.iter().product();
    let nb = d.lhs_batch.len();
    let data = (0..n_out)
        .map(|o| {
            let c = unravel(o, &out_shape);
            let (cb, rest) = c.split_at(nb);
            let (ca, cbf) = rest.split_at(fa.len());
            let mut base_a: usize = d.lhs_batch.iter().zip(cb).map(|(x, c)| c * sa[*x]).sum();
            base_a += fa.iter().zip(ca).map(|(x, c)| c * sa[*x]).sum::<usize>();
            let mut base_b: usize = d.rhs_batch.iter().zip(cb).map(|(x, c)| c * sb[*x]).sum();
            base_b += fb.iter().zip(cbf).map(|(x, c)| c * sb[*x]).sum::<usize>();
            let mut sum = PairwiseSum::new();
            for r in 0..n_red {
                let k = unravel(r, &red);
                let ia: usize = d.lhs_contract.iter().zip(&k).map(|(x, k)| k * sa[*x]).sum();
                let ib: usize = d.rhs_contract.iter().zip(&k).map(|(x, k)| k * sb[*x]).sum();
                sum.push(a.data[base_a + ia] * b.data[base_b + ib], |v| v);
            }
            a.dtype.round(sum.total(|v| v))
        })
        .collect();
    Tensor {
        dtype: a.dtype,
        shape: out_shape,
        data,
    }
}

// ---- derivative and batching rules -----------------------------------------

pub fn dot_general(f: &mut Function, a: Var, b: Var, d: DotDims) -> Var {
    f.push(Op::DotGeneral(d), &[a, b])
        .unwrap_or_else(|e| panic!("internal error: {e}"))
}

/// JVP: bilinear, so the sum of the product with each tangent.
pub fn dot_general_jvp(
    f: &mut Function,
    a: Var,
    b: Var,
    d: &DotDims,
    ta: Option<Var>,
    tb: Option<Var>,
) -> Option<Var> {
    let l = ta.map(|t| dot_general(f, t, b, d.clone()));
    let r = tb.map(|t| dot_general(f, a, t, d.clone()));
    match (l, r) {
        (Some(l), Some(r)) => Some(f.add(l, r)),
        (l, r) => l.or(r),
    }
}

/// The cotangent of the lhs (`lhs = true`) or the rhs given the other
/// operand `other` and the result's cotangent `ct`: `ct` contracted with
/// `other` over the other side's free axes, batch paired with batch, then
/// permuted into the operand's axis order.
pub fn dot_general_transpose(
    f: &mut Function,
    d: &DotDims,
    lhs: bool,
    this_ty: &Type,
    other: Var,
    ct: Var,
) -> Var {
    let d = if lhs { d.clone() } else { d.swapped() };
    let (this_rank, other_rank) = (this_ty.shape.rank(), f.shape(other).rank());
    let nb = d.lhs_batch.len();
    let this_free = d.lhs_free(this_rank);
    let other_free = d.rhs_free(other_rank);
    // Where each side's free axes sit in the result (and so in `ct`).
    let (this_at, other_at) = if lhs {
        (nb, nb + this_free.len())
    } else {
        (nb + other_free.len(), nb)
    };
    let dims = DotDims {
        lhs_contract: (other_at..other_at + other_free.len()).collect(),
        rhs_contract: other_free,
        lhs_batch: (0..nb).collect(),
        rhs_batch: d.rhs_batch.clone(),
    };
    // `ct`'s remaining (free) axes keep their order: this side's free axes.
    let ct_free = DotDims::free(f.shape(ct).rank(), &dims.lhs_contract, &dims.lhs_batch);
    debug_assert_eq!(
        ct_free,
        (this_at..this_at + this_free.len()).collect::<Vec<_>>()
    );
    let g = dot_general(f, ct, other, dims);
    // Axis k of `g` is axis `r[k]` of this operand.
    let mut r = d.lhs_batch.clone();
    r.extend(&this_free);
    let mut contracted: Vec<usize> = d.rhs_contract.clone();
    contracted.sort_unstable();
    for a in contracted {
        let j = d
            .rhs_contract
            .iter()
            .position(|c| *c == a)
            .expect("paired axis");
        r.push(d.lhs_contract[j]);
    }
    super::layout::transpose(f, g, super::layout::inverse_perm(&r))
}

/// Batching with a leading batch axis on the batched operands: a batch pair
/// when both are batched; otherwise the batch axis is a free axis of one
/// side, moved to the front of the result.
pub fn dot_general_batch(f: &mut Function, a: Var, b: Var, d: &DotDims, batched: &[bool]) -> Var {
    let up = |v: &[usize], by: bool| -> Vec<usize> { v.iter().map(|x| x + by as usize).collect() };
    let (ba, bb) = (batched[0], batched[1]);
    let mut e = DotDims {
        lhs_contract: up(&d.lhs_contract, ba),
        rhs_contract: up(&d.rhs_contract, bb),
        lhs_batch: up(&d.lhs_batch, ba),
        rhs_batch: up(&d.rhs_batch, bb),
    };
    let nb = d.lhs_batch.len();
    if ba && bb {
        e.lhs_batch.insert(0, 0);
        e.rhs_batch.insert(0, 0);
        return dot_general(f, a, b, e);
    }
    let rank_a = f.shape(a).rank();
    let out = dot_general(f, a, b, e);
    // Axis 0 is the first free axis of its side.
    let at = if ba {
        nb
    } else {
        nb + d.lhs_free(rank_a).len()
    };
    let rank = f.shape(out).rank();
    super::layout::transpose(f, out, super::layout::move_axis_perm(rank, at, 0))
}
