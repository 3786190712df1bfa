//! Pooling: `lax.reduce_window` with sum, max and mean, built from `conv`
//! (so its derivatives and batching are conv's, with nothing of its own).
//!
//! The windowed axes move last behind a batch and a feature axis of size
//! 1, the others leading (`conv`'s leading axes, on the input alone):
//! `[others.., 1, 1, spatial..]`.
//!
//! - sum: a convolution with a kernel of ones (linear; its transpose is
//!   conv's lhs transpose, a convolution of the cotangent with the ones).
//! - max: the window's taps as features (a convolution with a one-hot
//!   kernel per tap: `[M, taps, spatial'..]`), padding taps at `-inf`, and
//!   the value of the first tap that holds the window's maximum, chosen on
//!   values the derivative does not see. So the tangent is the chosen
//!   tap's, and the cotangent goes to that one element (first in row-major
//!   window order on ties), as JAX's `_reduce_window_chooser_jvp_rule` and
//!   `select_and_scatter_add` (whose `ge` comparison keeps the first).
//! - mean: the sum over the window size, padding counted (flax's
//!   `avg_pool`, `count_include_pad=True`).
//!
//! A NaN in a window makes its maximum NaN (as JAX), with a zero
//! derivative.
//!
//! A max pool computes `taps` times the arithmetic a dedicated kernel
//! would; pools are small next to the convolutions around them.

use crate::dtype::DType;
use crate::ir::{Function, Var};
use crate::ops::conv::{conv, dilated_params, ConvParams, Lead, Padding};
use crate::ops::elementwise::CmpOp;
use crate::ops::layout::{inverse_perm, reshape, transpose};
use crate::ops::Op;
use crate::shape::{Dim, Shape};

/// What a window reduces to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowReduce {
    Sum,
    Max,
    Mean,
}

fn consts(v: &[u64]) -> Shape {
    Shape(v.iter().map(|d| Dim::Const(*d)).collect())
}

/// `lax.reduce_window(x, init, op, window, strides, padding)` for sum and
/// max (and their mean): one window size and stride per axis of `x`.
pub fn reduce_window(
    f: &mut Function,
    x: Var,
    how: WindowReduce,
    window: &[u64],
    strides: &[u64],
    padding: &Padding,
) -> Result<Var, String> {
    let dims = f.shape(x).0.clone();
    let rank = dims.len();
    if window.len() != rank || strides.len() != rank {
        return Err(format!(
            "pooling over an input of rank {rank} needs {rank} window sizes and strides, got {} and {}",
            window.len(),
            strides.len()
        ));
    }
    if window.contains(&0) || strides.contains(&0) {
        return Err("window sizes and strides must be at least 1".into());
    }
    if let Padding::Explicit(p) = padding {
        if p.len() != rank {
            return Err(format!(
                "pooling over an input of rank {rank} needs {rank} padding pairs, got {}",
                p.len()
            ));
        }
    }
    let padded = |a: usize| match padding {
        Padding::Explicit(p) => p[a] != (0, 0),
        // A window of 1 with stride 1 needs no padding.
        _ => false,
    };
    // The windowed axes, moved last behind a batch and a feature axis of
    // size 1; the others lead, the input's alone (`Lead::Lhs`).
    let windowed: Vec<usize> = (0..rank)
        .filter(|a| window[*a] != 1 || strides[*a] != 1 || padded(*a))
        .collect();
    let others: Vec<usize> = (0..rank).filter(|a| !windowed.contains(a)).collect();
    let perm: Vec<usize> = others.iter().chain(&windowed).copied().collect();
    let nl = others.len();
    let xt = transpose(f, x, perm.clone());
    let mut shaped: Vec<Dim> = others.iter().map(|a| dims[*a].clone()).collect();
    shaped.extend([Dim::Const(1), Dim::Const(1)]);
    shaped.extend(windowed.iter().map(|a| dims[*a].clone()));
    let xf = reshape(f, xt, Shape(shaped));
    let input: Vec<Dim> = windowed.iter().map(|a| dims[*a].clone()).collect();
    let taps: Vec<u64> = windowed.iter().map(|a| window[*a]).collect();
    let tap_dims: Vec<Dim> = taps.iter().map(|t| Dim::Const(*t)).collect();
    let pads = match padding {
        Padding::Explicit(p) => Padding::Explicit(windowed.iter().map(|a| p[*a]).collect()),
        other => other.clone(),
    };
    let ones_s = vec![1; windowed.len()];
    let st: Vec<u64> = windowed.iter().map(|a| strides[*a]).collect();
    let mut p = dilated_params(&input, &tap_dims, &st, &pads, &ones_s, &ones_s, 1)?;
    let dtype = f.dtype(x);
    let y = match how {
        WindowReduce::Sum | WindowReduce::Mean => {
            let mut k = vec![1, 1];
            k.extend(&taps);
            let ones = f.full(1.0, dtype, &consts(&k));
            let mut q = p.clone();
            q.lead = vec![Lead::Lhs; nl];
            let y = conv(f, xf, ones, q);
            if how == WindowReduce::Mean {
                let n = f.full_like(taps.iter().product::<u64>() as f64, y);
                f.div(y, n)
            } else {
                y
            }
        }
        WindowReduce::Max => {
            p.lead = vec![Lead::Lhs; nl];
            let padded = match &pads {
                Padding::Explicit(p) => p.iter().any(|x| *x != (0, 0)),
                Padding::Same => true,
                Padding::Valid => false,
            };
            max_of_taps(f, xf, &input, &taps, p, padded, dtype)
        }
    };
    // Back to the input's axes.
    let mut out_dims: Vec<Dim> = others.iter().map(|a| dims[*a].clone()).collect();
    out_dims.extend(f.shape(y).0[nl + 2..].iter().cloned());
    let y = reshape(f, y, Shape(out_dims));
    Ok(transpose(f, y, inverse_perm(&perm)))
}

/// The first maximum of each window of `x` (`[lead.., 1, 1, spatial..]`,
/// spatial sizes `input`), taps at `-inf` in the padding (if `padded`):
/// `[lead.., 1, 1, spatial'..]`.
fn max_of_taps(
    f: &mut Function,
    x: Var,
    input: &[Dim],
    taps: &[u64],
    p: ConvParams,
    padded: bool,
    dtype: DType,
) -> Var {
    let nl = p.lead.len();
    let t: u64 = taps.iter().product();
    // One-hot kernel: output feature k reads tap k (row-major).
    let mut kdims = vec![t, 1];
    kdims.extend(taps);
    let kshape = consts(&kdims);
    let iota = |f: &mut Function, shape: &Shape, axis: usize| {
        let op = Op::Iota {
            shape: shape.clone(),
            axis,
            dtype,
        };
        f.push(op, &[]).expect("internal error: iota")
    };
    let mut flat_tap = f.full(0.0, dtype, &kshape);
    for k in 0..taps.len() {
        let stride: u64 = taps[k + 1..].iter().product();
        let i = iota(f, &kshape, k + 2);
        let s = f.full(stride as f64, dtype, &kshape);
        let term = f.mul(i, s);
        flat_tap = f.add(flat_tap, term);
    }
    let which = iota(f, &kshape, 0);
    let on = f.cmp(CmpOp::Eq, which, flat_tap);
    let one = f.full(1.0, dtype, &kshape);
    let zero = f.full(0.0, dtype, &kshape);
    let onehot = f.select(on, one, zero);
    let patches = conv(f, x, onehot, p.clone());
    let shape = f.shape(patches).clone();
    let rank = shape.rank();
    // Padding taps: where a convolution of ones reads nothing (one
    // example: it does not depend on the leading axes).
    let values = if padded {
        let mut plane = vec![Dim::Const(1), Dim::Const(1)];
        plane.extend(input.iter().cloned());
        let ones = f.full(1.0, dtype, &Shape(plane));
        let mut q = p.clone();
        q.lead.clear();
        let valid = conv(f, ones, onehot, q);
        let valid = f.broadcast(valid, shape.clone(), (nl..rank).collect());
        let half = f.full(0.5, dtype, &shape);
        let inside = f.cmp(CmpOp::Gt, valid, half);
        let low = f.full(f64::NEG_INFINITY, dtype, &shape);
        f.select(inside, patches, low)
    } else {
        patches
    };
    // The first tap holding the maximum, chosen without derivatives.
    let tap_axis = nl + 1;
    let seen = f
        .push(Op::StopGradient, &[values])
        .expect("internal error: stop_gradient");
    let max = f
        .push(
            Op::ReduceMax {
                axes: vec![tap_axis],
            },
            &[seen],
        )
        .expect("internal error: reduce_max");
    let keep: Vec<usize> = (0..rank).filter(|a| *a != tap_axis).collect();
    let max_b = f.broadcast(max, shape.clone(), keep.clone());
    let at_max = f.cmp(CmpOp::Eq, seen, max_b);
    let tap = iota(f, &shape, tap_axis);
    let past = f.full(t as f64, dtype, &shape);
    let candidates = f.select(at_max, tap, past);
    let first = f
        .push(
            Op::ReduceMin {
                axes: vec![tap_axis],
            },
            &[candidates],
        )
        .expect("internal error: reduce_min");
    let first_b = f.broadcast(first, shape.clone(), keep);
    let chosen = f.cmp(CmpOp::Eq, tap, first_b);
    let zeros = f.full(0.0, dtype, &shape);
    let picked = f.select(chosen, values, zeros);
    let sum = f.reduce_sum(picked, vec![tap_axis]);
    // No tap equals the maximum only when it is NaN: the result is NaN.
    let reduced = f.shape(first).clone();
    let none = f.full(t as f64, dtype, &reduced);
    let unmatched = f.cmp(CmpOp::Eq, first, none);
    let sum = f.select(unmatched, max, sum);
    // Back to one feature.
    let mut one_feature = shape.0.clone();
    one_feature[tap_axis] = Dim::Const(1);
    reshape(f, sum, Shape(one_feature))
}
