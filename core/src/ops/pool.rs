//! Pooling: `lax.reduce_window` with sum, max and mean, built from `conv`
//! (so its derivatives and batching are conv's, with nothing of its own).
//!
//! The windowed axes move last and the others merge into one batch axis,
//! a single feature: `[M, 1, spatial..]`.
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
use crate::ops::conv::{conv, ConvParams, Padding};
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
    let dims: Vec<u64> = f
        .shape(x)
        .0
        .iter()
        .map(|d| match d {
            Dim::Const(n) => Ok(*n),
            Dim::Sym(s) => Err(format!(
                "pooling needs dimensions known when the function is built, not `{s}`"
            )),
        })
        .collect::<Result<_, _>>()?;
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
    let pads = padding.pairs(&dims, window, strides);
    if pads.len() != rank {
        return Err(format!(
            "pooling over an input of rank {rank} needs {rank} padding pairs, got {}",
            pads.len()
        ));
    }
    // The windowed axes, moved last; the others merged into one batch.
    let windowed: Vec<usize> = (0..rank)
        .filter(|a| window[*a] != 1 || strides[*a] != 1 || pads[*a] != (0, 0))
        .collect();
    let others: Vec<usize> = (0..rank).filter(|a| !windowed.contains(a)).collect();
    let perm: Vec<usize> = others.iter().chain(&windowed).copied().collect();
    let m: u64 = others.iter().map(|a| dims[*a]).product();
    let s = windowed.len();
    let xt = transpose(f, x, perm.clone());
    let mut flat = vec![m, 1];
    flat.extend(windowed.iter().map(|a| dims[*a]));
    let xf = reshape(f, xt, consts(&flat));
    let mut p = ConvParams::plain(s);
    p.strides = windowed.iter().map(|a| strides[*a]).collect();
    p.padding = windowed.iter().map(|a| pads[*a]).collect();
    let taps: Vec<u64> = windowed.iter().map(|a| window[*a]).collect();
    let dtype = f.dtype(x);
    let y = match how {
        WindowReduce::Sum | WindowReduce::Mean => {
            let mut k = vec![1, 1];
            k.extend(&taps);
            let ones = f.full(1.0, dtype, &consts(&k));
            let y = conv(f, xf, ones, p);
            if how == WindowReduce::Mean {
                let n = f.full_like(taps.iter().product::<u64>() as f64, y);
                f.div(y, n)
            } else {
                y
            }
        }
        WindowReduce::Max => max_of_taps(f, xf, &taps, p, dtype),
    };
    // Back to the input's axes.
    let mut out_dims: Vec<u64> = others.iter().map(|a| dims[*a]).collect();
    out_dims.extend(
        f.shape(y).0[2..]
            .iter()
            .map(|d| match d {
                Dim::Const(n) => *n,
                Dim::Sym(_) => unreachable!("a conv's spatial sizes are constants"),
            })
            .collect::<Vec<_>>(),
    );
    let y = reshape(f, y, consts(&out_dims));
    Ok(transpose(f, y, inverse_perm(&perm)))
}

/// The first maximum of each window of `x` (`[M, 1, spatial..]`), taps at
/// `-inf` in the padding: `[M, 1, spatial'..]`.
fn max_of_taps(f: &mut Function, x: Var, taps: &[u64], p: ConvParams, dtype: DType) -> Var {
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
    // Padding taps: where a convolution of ones reads nothing.
    let values = if p.padding.iter().any(|pad| *pad != (0, 0)) {
        let ones = f.full_like(1.0, x);
        let valid = conv(f, ones, onehot, p);
        let half = f.full(0.5, dtype, &shape);
        let inside = f.cmp(CmpOp::Gt, valid, half);
        let low = f.full(f64::NEG_INFINITY, dtype, &shape);
        f.select(inside, patches, low)
    } else {
        patches
    };
    // The first tap holding the maximum, chosen without derivatives.
    let seen = f
        .push(Op::StopGradient, &[values])
        .expect("internal error: stop_gradient");
    let max = f
        .push(Op::ReduceMax { axes: vec![1] }, &[seen])
        .expect("internal error: reduce_max");
    let rank = shape.rank();
    let keep: Vec<usize> = (0..rank).filter(|a| *a != 1).collect();
    let max_b = f.broadcast(max, shape.clone(), keep.clone());
    let at_max = f.cmp(CmpOp::Eq, seen, max_b);
    let tap = iota(f, &shape, 1);
    let past = f.full(t as f64, dtype, &shape);
    let candidates = f.select(at_max, tap, past);
    let first = f
        .push(Op::ReduceMin { axes: vec![1] }, &[candidates])
        .expect("internal error: reduce_min");
    let first_b = f.broadcast(first, shape.clone(), keep);
    let chosen = f.cmp(CmpOp::Eq, tap, first_b);
    let zeros = f.full(0.0, dtype, &shape);
    let picked = f.select(chosen, values, zeros);
    let sum = f.reduce_sum(picked, vec![1]);
    // No tap equals the maximum only when it is NaN: the result is NaN.
    let reduced = f.shape(first).clone();
    let none = f.full(t as f64, dtype, &reduced);
    let unmatched = f.cmp(CmpOp::Eq, first, none);
    let sum = f.select(unmatched, max, sum);
    // Back to one feature.
    let mut one_feature = shape.0.clone();
    one_feature[1] = Dim::Const(1);
    reshape(f, sum, Shape(one_feature))
}
