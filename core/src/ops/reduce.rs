//! The choosing reductions: `reduce_max` and `reduce_min` over axes.
//!
//! (`reduce_sum`, which is linear, stands with the structural ops.) A max
//! over no elements is -inf and a min +inf internally, but a call that
//! would use one is an error (`nonempty_reductions`), as JAX raises. NaN
//! propagates. The
//! JVP follows JAX's `_reduce_chooser_jvp_rule`: the tangent is averaged over
//! the positions equal to the result, so a tie splits it equally, as
//! `max(a, b)` does.
//!
//! In the kernel IR each is a reduction kernel whose combining operation is
//! max or min instead of a sum (`kernel::Reduce`).

use crate::ir::{Function, Type, Var};
use crate::ops::elementwise::{BinaryOp, CmpOp};
use crate::shape::Shape;
use crate::tensor::{unravel, Tensor};

/// The shape rule every reduction over `axes` shares: `axes` increase and
/// are below the rank; the result drops them.
pub fn reduce_infer(name: &str, x: &Type, axes: &[usize]) -> Result<Type, String> {
    if !x.dtype.is_float() {
        return Err(format!("{name} needs a float operand, got {x}"));
    }
    for (i, a) in axes.iter().enumerate() {
        if *a >= x.shape.rank() || (i > 0 && axes[i - 1] >= *a) {
            return Err(format!(
                "{name} axes {axes:?} must increase and be below the rank of {x}"
            ));
        }
    }
    let shape = x
        .shape
        .0
        .iter()
        .enumerate()
        .filter(|(i, _)| !axes.contains(i))
        .map(|(_, d)| d.clone())
        .collect();
    Ok(Type::new(x.dtype, Shape(shape)))
}

/// Max (`BinaryOp::Max`) or min over `axes`, NaN-propagating as the binary
/// op is; `init` (-inf or +inf) for no elements.
pub fn reduce_choose_eval(x: &Tensor, axes: &[usize], op: BinaryOp) -> Tensor {
    let init = match op {
        BinaryOp::Max => f64::NEG_INFINITY,
        _ => f64::INFINITY,
    };
    fold_axes(x, axes, init, |acc, v| op.eval(acc, v))
}

/// Each output element (the axes not in `axes`, in order) is `combine`
/// folded from `init` over the elements along `axes`, in row-major order.
pub(crate) fn fold_axes(
    x: &Tensor,
    axes: &[usize],
    init: f64,
    combine: impl Fn(f64, f64) -> f64,
) -> Tensor {
    let strides = x.strides();
    let kept: Vec<usize> = (0..x.shape.len()).filter(|i| !axes.contains(i)).collect();
    let out_shape: Vec<usize> = kept.iter().map(|i| x.shape[*i]).collect();
    let red: Vec<usize> = axes.iter().map(|a| x.shape[*a]).collect();
    let n_red: usize = red.iter().product();
    let n_out: usize = out_shape.iter().product();
    let data = (0..n_out)
        .map(|o| {
            let c = unravel(o, &out_shape);
            let base: usize = kept.iter().zip(&c).map(|(k, c)| c * strides[*k]).sum();
            (0..n_red).fold(init, |acc, r| {
                let k = unravel(r, &red);
                let i: usize = axes.iter().zip(&k).map(|(a, k)| k * strides[*a]).sum();
                combine(acc, x.data[base + i])
            })
        })
        .collect();
    Tensor {
        dtype: x.dtype,
        shape: out_shape,
        data,
    }
}

/// JVP (JAX's `_reduce_chooser_jvp_rule`): the tangent averaged over the
/// positions where `x` equals the result, so ties share it equally:
/// `sum(t · mask) / sum(mask)`, the mask multiplied in (not selected), as
/// JAX's is. Where no position equals the result — a NaN result — that is
/// 0/0, NaN, and its transpose puts `ct / 0 · 0` = NaN in every entry of
/// the gradient, as JAX's does. (A max over no elements is an error at the
/// call, see `nonempty_reductions`.)
pub fn reduce_choose_jvp(f: &mut Function, x: Var, out: Var, axes: &[usize], t: Var) -> Var {
    let x_ty = f.ty(x).clone();
    let kept: Vec<usize> = (0..x_ty.shape.rank())
        .filter(|a| !axes.contains(a))
        .collect();
    let chosen = f.broadcast(out, x_ty.shape.clone(), kept);
    let at = f.cmp(CmpOp::Eq, x, chosen);
    let zero = f.zeros_like(x);
    let one = f.full_like(1.0, x);
    let mask = f.select(at, one, zero);
    let count = f.reduce_sum(mask, axes.to_vec());
    let picked = f.mul(t, mask);
    let total = f.reduce_sum(picked, axes.to_vec());
    f.div(total, count)
}

/// Batching: the batch axis is leading, so the reduced axes shift by one.
pub fn shift_axes(axes: &[usize]) -> Vec<usize> {
    axes.iter().map(|a| a + 1).collect()
}

// ---- reductions with no identity over an empty axis ---------------------------

/// A `reduce_max`/`reduce_min` whose reduced axes must hold at least one
/// element at every call: JAX raises for a max or min (and argmax, argmin)
/// over no elements ("zero-size array to reduction operation max which has
/// no identity"), so oxla does too, at the call, from the bound sizes,
/// before any kernel runs (`Program::check_nonempty`).
#[derive(Clone, Debug, PartialEq)]
pub struct NonEmpty {
    /// `max` or `min`.
    pub op: &'static str,
    /// The operand's parameter position, when the operand is a parameter.
    pub param: Option<usize>,
    /// The reduced axes of the operand and their sizes.
    pub axes: Vec<usize>,
    pub dims: Vec<crate::shape::Dim>,
}

/// Every `reduce_max`/`reduce_min` of `f` (not those inside loop or cond
/// bodies) whose value would be used over no elements; one per distinct
/// set of reduced sizes. Exempt: a max used only to be replaced where it is
/// infinite — `select(m == ±inf, a, m)`, through `stop_gradient`, as
/// logsumexp shifts by its max (JAX's own shift) — or only broadcast back
/// over the reduced axes (softmax's shift, argmax's compare with its
/// operand): over no elements the max is -inf and never reaches a value,
/// so those keep JAX's results (logsumexp of nothing is -inf, softmax of
/// nothing is empty; argmax is still checked, by its own `reduce_min`).
pub fn nonempty_reductions(f: &Function) -> Vec<NonEmpty> {
    let mut out: Vec<NonEmpty> = Vec::new();
    for e in &f.eqns {
        let (op, axes) = match &e.op {
            crate::ops::Op::ReduceMax { axes } => ("max", axes),
            crate::ops::Op::ReduceMin { axes } => ("min", axes),
            _ => continue,
        };
        let x = e.ins[0];
        let shape = f.shape(x);
        let dims: Vec<crate::shape::Dim> = axes.iter().map(|a| shape.0[*a].clone()).collect();
        if dims
            .iter()
            .all(|d| matches!(d, crate::shape::Dim::Const(c) if *c > 0))
        {
            continue; // every reduced axis has a fixed non-zero size
        }
        if unused_when_empty(f, e.out(), &dims) {
            continue;
        }
        if out.iter().any(|n| n.dims == dims) {
            continue;
        }
        out.push(NonEmpty {
            op,
            param: f.params.iter().position(|p| *p == x),
            axes: axes.clone(),
            dims,
        });
    }
    out
}

/// Whether every use of `m` (directly or through `stop_gradient`) is a
/// compare with a constant infinity, the `else` operand of a select on
/// such a compare of `m`, or an op whose result has every one of `dims`
/// (so it is empty when their product is 0): `m`'s value over no elements
/// (±inf) then reaches no value.
fn unused_when_empty(f: &Function, m: Var, dims: &[crate::shape::Dim]) -> bool {
    let covers = |e: &crate::ir::Eqn| {
        e.outs
            .iter()
            .all(|o| dims.iter().all(|d| f.shape(*o).0.contains(d)))
    };
    let is_inf = |v: Var| -> bool {
        let Some(e) = f.eqns.iter().find(|e| e.outs.contains(&v)) else {
            return false;
        };
        let lit = match &e.op {
            crate::ops::Op::Broadcast { .. } => f.eqns.iter().find(|d| d.outs.contains(&e.ins[0])),
            _ => Some(e),
        };
        matches!(lit.map(|l| &l.op), Some(crate::ops::Op::Literal { value, .. }) if value.is_infinite())
    };
    let mut values = vec![m];
    let mut k = 0;
    while k < values.len() {
        let v = values[k];
        k += 1;
        if f.outs.contains(&v) {
            return false;
        }
        for e in f.eqns.iter().filter(|e| e.ins.contains(&v)) {
            let ok = match &e.op {
                crate::ops::Op::StopGradient => {
                    values.push(e.out());
                    true
                }
                crate::ops::Op::Cmp(CmpOp::Eq) => {
                    let other = if e.ins[0] == v { e.ins[1] } else { e.ins[0] };
                    is_inf(other)
                }
                crate::ops::Op::Select => {
                    // `select(v == inf, a, v)`.
                    let p = f.eqns.iter().find(|d| d.outs.contains(&e.ins[0]));
                    e.ins[2] == v
                        && e.ins[0] != v
                        && e.ins[1] != v
                        && p.is_some_and(|p| {
                            matches!(p.op, crate::ops::Op::Cmp(CmpOp::Eq))
                                && p.ins.contains(&v)
                                && p.ins.iter().any(|w| *w != v && is_inf(*w))
                        })
                }
                _ => false,
            };
            if !ok && !covers(e) {
                return false;
            }
        }
    }
    true
}
