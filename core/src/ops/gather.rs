//! Gather by an index array and its transpose, scatter-add.
//!
//! `gather[axis, batch](x, idx)` picks along axis `axis` of the float array
//! `x` with the integer array `idx`: the result has shape
//! `x.shape[..axis] ++ idx.shape[batch..] ++ x.shape[axis+1..]` and its
//! element at `(b, a, i, c)` (`b` the `batch` leading axes, `a` the other
//! axes before `axis`, `i` an index position, `c` the trailing axes) is
//! `x[b, a, idx[b, i], c]`. With `batch = 0` it is `jnp.take(x, idx, axis)`;
//! the leading `batch` axes of `x` and `idx` are paired, one gather per
//! example (how a batched gather of batched indices is expressed, and
//! `take_along_axis`). An index outside `0..x.shape[axis]` is clamped into
//! it (`clamp_index`) as JAX's indexing does: a negative index is wrapped
//! once (`i + n`, so -1 reads element `n - 1`), then clamped as JAX's
//! gather clamps by default ("out-of-bounds indices are clamped on
//! retrieval"): `-n - 1` and below read element 0, `n` and beyond read
//! element `n - 1`. Only an empty axis reads nothing (0).
//!
//! `scatter_add[axis, batch](u, idx)`, with the result's `shape` stated (as
//! `pad` states its own), is zeros of `shape` with each element of `u` added
//! at the position the gather with the same `idx` reads it from: repeated
//! indices accumulate, and an index out of range adds at the wrapped and
//! clamped position, where the gather read it (JAX's gradient of a clamping gather
//! does the same). The two are each other's transpose for any indices, in
//! range or not.
//!
//! Both are linear in the float operand; the indices carry no derivative.
//! In the kernel IR a gather is a load whose position along `axis` is read
//! from the index buffer (`InstKind::LoadIndexed`), fused into its consumer;
//! a scatter-add is a zero fill plus a kernel whose store adds at the
//! indexed position (`Region::scatter`), see `kernel::fusion`.

use crate::dtype::DType;
use crate::ir::{Function, Type, Var};
use crate::ops::layout::{move_axis_perm, transpose};
use crate::ops::Op;
use crate::shape::{Dim, Shape};
use crate::tensor::{unravel, Tensor};

fn is_index(d: DType) -> bool {
    matches!(d, DType::I32 | DType::I64)
}

/// The gather's result shape from the operand's and the indices' shapes.
pub fn gathered_shape(x: &Shape, idx: &Shape, axis: usize, batch: usize) -> Shape {
    let mut dims = x.0[..axis].to_vec();
    dims.extend(idx.0[batch..].iter().cloned());
    dims.extend(x.0[axis + 1..].iter().cloned());
    Shape(dims)
}

/// The common checks: a float operand of rank > `axis` ≥ `batch`, integer
/// indices whose `batch` leading axes are the operand's.
fn check(op: &str, full: &Type, idx: &Type, axis: usize, batch: usize) -> Result<(), String> {
    if !full.dtype.is_float() || !is_index(idx.dtype) {
        return Err(format!(
            "{op} needs a float array and i32 or i64 indices, got {full} and {idx}"
        ));
    }
    let (r, q) = (full.shape.rank(), idx.shape.rank());
    if axis >= r || batch > axis || batch > q || full.shape.0[..batch] != idx.shape.0[..batch] {
        return Err(format!(
            "{op}[{axis},{batch}] needs axis < rank, batch <= axis and batch leading axes shared by {full} and {idx}"
        ));
    }
    Ok(())
}

pub fn gather_infer(x: &Type, idx: &Type, axis: usize, batch: usize) -> Result<Type, String> {
    check("gather", x, idx, axis, batch)?;
    Ok(Type::new(
        x.dtype,
        gathered_shape(&x.shape, &idx.shape, axis, batch),
    ))
}

pub fn scatter_add_infer(
    u: &Type,
    idx: &Type,
    axis: usize,
    batch: usize,
    shape: &Shape,
) -> Result<Type, String> {
    let full = Type::new(u.dtype, shape.clone());
    check("scatter_add", &full, idx, axis, batch)?;
    let want = gathered_shape(shape, &idx.shape, axis, batch);
    if u.shape != want {
        return Err(format!(
            "scatter_add into {shape} with indices {idx} needs updates of shape {want}, got {}",
            u.shape
        ));
    }
    Ok(full)
}

/// The one rule every executor follows: the position index `i` (an integer
/// widened to f64) picks along an axis of `bound` elements as JAX's
/// indexing does: a negative index is first wrapped once, Python-style
/// (`i + bound`: -1 is the last element), then the result is clamped into
/// `0..bound` (the gather's default mode), so `-bound - 1` and below read
/// element 0 and `bound` and beyond read element `bound - 1`; `None` only
/// when the axis is empty.
pub fn clamp_index(i: f64, bound: u64) -> Option<usize> {
    if bound == 0 {
        return None;
    }
    let i = if i < 0.0 { i + bound as f64 } else { i };
    Some(i.clamp(0.0, (bound - 1) as f64) as usize)
}

/// For each element of the gathered shape (row-major): the element of the
/// full array it reads (`None` only when the picked axis is empty).
fn positions(full: &[usize], idx: &Tensor, axis: usize, batch: usize) -> Vec<Option<usize>> {
    let q = idx.shape.len() - batch;
    let mut out_shape = full[..axis].to_vec();
    out_shape.extend(&idx.shape[batch..]);
    out_shape.extend(&full[axis + 1..]);
    let n: usize = out_shape.iter().product();
    let mut full_strides = vec![1usize; full.len()];
    for k in (0..full.len().saturating_sub(1)).rev() {
        full_strides[k] = full_strides[k + 1] * full[k + 1];
    }
    let idx_strides = idx.strides();
    (0..n)
        .map(|o| {
            let c = unravel(o, &out_shape);
            let at_idx: usize = (0..batch)
                .map(|k| c[k] * idx_strides[k])
                .chain((0..q).map(|j| c[axis + j] * idx_strides[batch + j]))
                .sum();
            let i = clamp_index(idx.data[at_idx], full[axis] as u64)?;
            let mut at = i * full_strides[axis];
            for k in 0..axis {
                at += c[k] * full_strides[k];
            }
            for k in axis + 1..full.len() {
                at += c[k - 1 + q] * full_strides[k];
            }
            Some(at)
        })
        .collect()
}

pub fn gather_eval(x: &Tensor, idx: &Tensor, axis: usize, batch: usize, out: &[usize]) -> Tensor {
    let data = positions(&x.shape, idx, axis, batch)
        .into_iter()
        .map(|p| p.map_or(0.0, |p| x.data[p]))
        .collect();
    Tensor::new(x.dtype, out.to_vec(), data)
}

/// Adds in order of the updates' positions, rounding after each addition.
pub fn scatter_add_eval(
    u: &Tensor,
    idx: &Tensor,
    axis: usize,
    batch: usize,
    out: &[usize],
) -> Tensor {
    let mut data = vec![0.0; out.iter().product()];
    for (v, p) in u.data.iter().zip(positions(out, idx, axis, batch)) {
        if let Some(p) = p {
            data[p] = u.dtype.round(data[p] + v);
        }
    }
    Tensor::new(u.dtype, out.to_vec(), data)
}

pub fn gather(f: &mut Function, x: Var, idx: Var, axis: usize, batch: usize) -> Var {
    f.push(Op::Gather { axis, batch }, &[x, idx])
        .expect("internal error: gather")
}

pub fn scatter_add(
    f: &mut Function,
    u: Var,
    idx: Var,
    axis: usize,
    batch: usize,
    shape: Shape,
) -> Var {
    f.push(Op::ScatterAdd { axis, batch, shape }, &[u, idx])
        .expect("internal error: scatter_add")
}

// ---- batching (the batch axis leading, of size `size`) ------------------------

/// `gather` with `x` and/or `idx` carrying a leading batch axis.
pub fn gather_batch(
    f: &mut Function,
    ins: &[Var],
    batched: &[bool],
    axis: usize,
    batch: usize,
    size: &Dim,
) -> Var {
    let (x, idx) = (ins[0], ins[1]);
    match (batched[0], batched[1]) {
        // One more shared leading axis.
        (true, true) => gather(f, x, idx, axis + 1, batch + 1),
        // The batch axis is one of x's leading axes.
        (true, false) if batch == 0 => gather(f, x, idx, axis + 1, 0),
        (true, false) => {
            let idx = f.broadcast_batch(idx, size);
            gather(f, x, idx, axis + 1, batch + 1)
        }
        // The batch axis becomes an index axis (after the shared ones): it
        // lands at position `axis` of the result, then moves to the front.
        (false, true) => {
            let q = f.shape(idx).rank();
            let idx = transpose(f, idx, move_axis_perm(q, 0, batch));
            let g = gather(f, x, idx, axis, batch);
            let r = f.shape(g).rank();
            transpose(f, g, move_axis_perm(r, axis, 0))
        }
        (false, false) => unreachable!("internal error: batching with nothing batched"),
    }
}

/// `scatter_add` with the updates and/or `idx` carrying a leading batch axis:
/// every example scatters into its own result.
pub fn scatter_add_batch(
    f: &mut Function,
    ins: &[Var],
    batched: &[bool],
    axis: usize,
    batch: usize,
    shape: &Shape,
    size: &Dim,
) -> Var {
    let (mut u, mut idx) = (ins[0], ins[1]);
    let mut dims = vec![size.clone()];
    dims.extend(shape.0.iter().cloned());
    let shape = Shape(dims);
    if batched[0] && !batched[1] && batch == 0 {
        return scatter_add(f, u, idx, axis + 1, 0, shape);
    }
    if !batched[0] {
        u = f.broadcast_batch(u, size);
    }
    if !batched[1] {
        idx = f.broadcast_batch(idx, size);
    }
    scatter_add(f, u, idx, axis + 1, batch + 1, shape)
}
