//! Sorting: `argsort[axis, descending](x)`, the permutation that sorts each
//! lane of `x` along `axis`, and what is built on it (`sort`, `top_k`):
//! shape rule, evaluation, lane sorting and batching side by side.
//!
//! The order is JAX's (`lax.sort`'s comparator): floats compare by value
//! with `-0.0` equal to `0.0` and every NaN above `+∞` (so NaNs sort last
//! ascending, first descending, as `jnp.argsort(descending=True)` and
//! `lax.top_k` give); the sort is stable (equal keys keep their index
//! order, in both directions). The result is `i64` indices; `k` keeps the
//! first `k` of each lane (`top_k`'s, so its indices are a host step's
//! result: kernels compute no integers).
//!
//! `argsort` has no derivative (integer indices). `sort` and `top_k` are a
//! `gather` of `x` by those indices, so their JVP is the gather of the
//! tangent by the permutation and their transpose a scatter-add: JAX's
//! `_sort_jvp` and `_top_k_jvp`, with nothing of their own to
//! differentiate. Batching moves the batch axis first and shifts `axis`.
//!
//! On devices an argsort is a host step (`exec::sort`): the lanes sorted
//! with Rust's stable sort on the materialized operand.

use crate::buffer::Buffer;
use crate::dtype::DType;
use crate::ir::{Function, Type, Var};
use crate::ops::gather::gather;
use crate::ops::layout::{move_axis_perm, transpose};
use crate::ops::Op;
use crate::shape::Dim;
use crate::tensor::Tensor;
use std::cmp::Ordering;

/// The dtype of `argsort`'s indices.
pub const INDEX: DType = DType::I64;

pub fn argsort_infer(x: &Type, axis: usize, k: Option<u64>) -> Result<Type, String> {
    if axis >= x.shape.rank() {
        return Err(format!("argsort along axis {axis} of {x}"));
    }
    let mut shape = x.shape.clone();
    if let Some(k) = k {
        if matches!(shape.0[axis], Dim::Const(n) if n < k) {
            return Err(format!("the first {k} of axis {axis} of {x}"));
        }
        shape.0[axis] = Dim::Const(k);
    }
    Ok(Type::new(INDEX, shape))
}

/// The first `k` entries of each lane along `axis` of the permutation
/// `idx` (row-major, `dims`); all of it for `None`.
pub fn keep_first(
    idx: Vec<i64>,
    dims: &[usize],
    axis: usize,
    k: Option<u64>,
) -> Result<Vec<i64>, String> {
    let Some(k) = k else { return Ok(idx) };
    let (n, k) = (dims[axis], k as usize);
    if k > n {
        return Err(format!("top_k of {k} along an axis of {n}"));
    }
    let inner: usize = dims[axis + 1..].iter().product();
    if n * inner == 0 {
        return Ok(Vec::new());
    }
    Ok(idx
        .chunks(n * inner)
        .flat_map(|lane| lane[..k * inner].iter().copied())
        .collect())
}

/// JAX's sort order of two floats: NaN above everything, `-0.0 == 0.0`.
pub fn float_order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).expect("neither is NaN"),
    }
}

/// The sorting permutation of every lane along `axis` of a row-major array
/// of `dims`, stored at the lane's positions: `out[p]` is the index (along
/// `axis`) of the element that lands at `p`. `order(i, j)` compares the
/// elements at flat positions `i` and `j`.
pub fn sort_lanes(
    dims: &[usize],
    axis: usize,
    descending: bool,
    order: impl Fn(usize, usize) -> Ordering,
) -> Vec<i64> {
    let n = dims[axis];
    let inner: usize = dims[axis + 1..].iter().product();
    let outer: usize = dims[..axis].iter().product();
    let mut out = vec![0i64; outer * n * inner];
    let mut lane: Vec<usize> = Vec::with_capacity(n);
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            lane.clear();
            lane.extend(0..n);
            // `sort_by` is stable: equal keys keep their index order.
            if descending {
                lane.sort_by(|&a, &b| order(at(b), at(a)));
            } else {
                lane.sort_by(|&a, &b| order(at(a), at(b)));
            }
            for (k, &src) in lane.iter().enumerate() {
                out[at(k)] = src as i64;
            }
        }
    }
    out
}

/// The reference evaluation (values held as `f64`, which orders every
/// dtype's values as the dtype does).
pub fn argsort_eval(
    x: &Tensor,
    axis: usize,
    descending: bool,
    k: Option<u64>,
) -> Result<Tensor, String> {
    let idx = sort_lanes(&x.shape, axis, descending, |i, j| {
        float_order(x.data[i], x.data[j])
    });
    let idx = keep_first(idx, &x.shape, axis, k)?;
    let mut shape = x.shape.clone();
    if let Some(k) = k {
        shape[axis] = k as usize;
    }
    let data = idx.into_iter().map(|i| i as f64).collect();
    Ok(Tensor::new(INDEX, shape, data))
}

/// The permutation of a buffer's lanes, comparing in its own dtype (an
/// `i64` beyond 2⁵³ keeps its order).
pub fn argsort_buffer(x: &Buffer, dims: &[usize], axis: usize, descending: bool) -> Vec<i64> {
    match x {
        Buffer::I64(v) => sort_lanes(dims, axis, descending, |i, j| v[i].cmp(&v[j])),
        Buffer::I32(v) => sort_lanes(dims, axis, descending, |i, j| v[i].cmp(&v[j])),
        Buffer::F32(v) => sort_lanes(dims, axis, descending, |i, j| {
            float_order(v[i].into(), v[j].into())
        }),
        Buffer::F64(v) => sort_lanes(dims, axis, descending, |i, j| float_order(v[i], v[j])),
        other => sort_lanes(dims, axis, descending, |i, j| {
            float_order(other.get(i), other.get(j))
        }),
    }
}

pub fn argsort(f: &mut Function, x: Var, axis: usize, descending: bool) -> Var {
    let op = Op::Argsort {
        axis,
        descending,
        k: None,
    };
    f.push(op, &[x]).expect("internal error: argsort")
}

/// `x` sorted along `axis` (`jnp.sort`, or descending): a gather of `x` by
/// its `argsort`, along the axis moved last (so every other axis pairs
/// with the indices').
pub fn sort(f: &mut Function, x: Var, axis: usize, descending: bool) -> Var {
    let rank = f.shape(x).rank();
    let idx = argsort(f, x, axis, descending);
    let last = move_axis_perm(rank, axis, rank - 1);
    let xt = transpose(f, x, last.clone());
    let it = transpose(f, idx, last);
    let sorted = gather(f, xt, it, rank - 1, rank - 1);
    transpose(f, sorted, move_axis_perm(rank, rank - 1, axis))
}

/// `lax.top_k(x, k)`: the `k` largest along the last axis, largest first
/// (NaN counting as the largest, ties by lower index), and their indices.
pub fn top_k(f: &mut Function, x: Var, k: u64) -> (Var, Var) {
    let rank = f.shape(x).rank();
    let op = Op::Argsort {
        axis: rank - 1,
        descending: true,
        k: Some(k),
    };
    let idx = f.push(op, &[x]).expect("internal error: top_k");
    let values = gather(f, x, idx, rank - 1, rank - 1);
    (values, idx)
}

/// Batching: the batch axis leads the operand, so the sorted axis shifts.
pub fn argsort_batch(
    f: &mut Function,
    x: Var,
    axis: usize,
    descending: bool,
    k: Option<u64>,
) -> Var {
    let op = Op::Argsort {
        axis: axis + 1,
        descending,
        k,
    };
    f.push(op, &[x]).expect("internal error: batching argsort")
}
