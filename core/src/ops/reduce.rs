//! The choosing reductions: `reduce_max` and `reduce_min` over axes.
//!
//! (`reduce_sum`, which is linear, stands with the structural ops.) A max
//! over no elements is -inf and a min +inf, as in JAX. NaN propagates. The
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
/// positions where `x` equals the result, so ties share it equally. Where
/// no position equals it — a max over no elements (the constant -inf), or
/// a NaN result — the tangent is 0, not 0/0: the count is taken as at
/// least 1, and the sum of picked tangents is then empty. (JAX gives NaN
/// there; `max(a, b)` of a NaN result already has derivative 0 in oxla
/// and in JAX.)
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
    let one_out = f.full_like(1.0, count);
    let count = f.binary(BinaryOp::Max, count, one_out);
    let picked = f.select(at, t, zero);
    let total = f.reduce_sum(picked, axes.to_vec());
    f.div(total, count)
}

/// Batching: the batch axis is leading, so the reduced axes shift by one.
pub fn shift_axes(axes: &[usize]) -> Vec<usize> {
    axes.iter().map(|a| a + 1).collect()
}
