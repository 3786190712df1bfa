//! Structural ops: literals, broadcast, reduce_sum and dot.
//!
//! Each op's rules stand together: shape rule, evaluation, JVP, transpose,
//! batching. In the kernel IR these ops are not instructions: fusion turns a
//! broadcast into load strides, and reduce_sum and dot into reduction kernels
//! (see `kernel::fusion`).

use crate::dtype::DType;
use crate::ir::{Function, Type, Var};
use crate::kernel::PairwiseSum;
use crate::shape::{Dim, Shape};
use crate::tensor::{unravel, Tensor};

// ---- literal: a scalar constant ------------------------------------------

pub fn literal_infer(dtype: DType) -> Result<Type, String> {
    Ok(Type::scalar(dtype))
}

pub fn literal_eval(value: f64, dtype: DType) -> Tensor {
    Tensor::scalar(dtype, value)
}

// ---- broadcast: axis i of the operand becomes axis dims[i] of the result --

pub fn broadcast_infer(x: &Type, shape: &Shape, dims: &[usize]) -> Result<Type, String> {
    if dims.len() != x.shape.rank() {
        return Err(format!(
            "broadcast of {x} needs {} dims, got {dims:?}",
            x.shape.rank()
        ));
    }
    for (i, d) in dims.iter().enumerate() {
        if *d >= shape.rank() || (i > 0 && dims[i - 1] >= *d) {
            return Err(format!(
                "broadcast dims {dims:?} must increase and be below {}",
                shape.rank()
            ));
        }
        if x.shape.0[i] != shape.0[*d] {
            return Err(format!(
                "cannot broadcast {x} to {shape}: axis {i} is {} but target axis {d} is {}",
                x.shape.0[i], shape.0[*d]
            ));
        }
    }
    Ok(Type::new(x.dtype, shape.clone()))
}

pub fn broadcast_eval(x: &Tensor, out_shape: &[usize], dims: &[usize]) -> Tensor {
    let xs = x.strides();
    let n: usize = out_shape.iter().product();
    let data = (0..n)
        .map(|i| {
            let c = unravel(i, out_shape);
            let idx: usize = dims.iter().zip(&xs).map(|(d, s)| c[*d] * s).sum();
            x.data[idx]
        })
        .collect();
    Tensor {
        dtype: x.dtype,
        shape: out_shape.to_vec(),
        data,
    }
}

pub fn broadcast_jvp(f: &mut Function, out: Var, dims: &[usize], t: Var) -> Var {
    let shape = f.shape(out).clone();
    f.broadcast(t, shape, dims.to_vec())
}

/// Transpose: sum the cotangent over the axes the broadcast added.
pub fn broadcast_transpose(f: &mut Function, out_rank: usize, dims: &[usize], ct: Var) -> Var {
    let axes: Vec<usize> = (0..out_rank).filter(|a| !dims.contains(a)).collect();
    if axes.is_empty() {
        ct
    } else {
        f.reduce_sum(ct, axes)
    }
}

pub fn broadcast_batch(f: &mut Function, x: Var, shape: &Shape, dims: &[usize], size: &Dim) -> Var {
    let mut s = vec![size.clone()];
    s.extend(shape.0.iter().cloned());
    let mut d = vec![0];
    d.extend(dims.iter().map(|d| d + 1));
    f.broadcast(x, Shape(s), d)
}

// ---- reduce_sum: sum over the given axes ---------------------------------

pub fn reduce_sum_infer(x: &Type, axes: &[usize]) -> Result<Type, String> {
    super::reduce::reduce_infer("reduce_sum", x, axes)
}

/// The reference sum: each output is the sum of its terms in `f64`, pairwise
/// (`PairwiseSum`, error O(log n) in f64 eps; exact enough that narrower types
/// see one rounding), rounded once to the element type. For `f64` data it
/// adds in the kernel interpreter's order, so the two agree bit for bit.
pub fn reduce_sum_eval(x: &Tensor, axes: &[usize]) -> Tensor {
    let strides = x.strides();
    let kept: Vec<usize> = (0..x.shape.len()).filter(|i| !axes.contains(i)).collect();
    let out_shape: Vec<usize> = kept.iter().map(|i| x.shape[*i]).collect();
    let red_ext: Vec<usize> = axes.iter().map(|a| x.shape[*a]).collect();
    let red_str: Vec<usize> = axes.iter().map(|a| strides[*a]).collect();
    let n_red: usize = red_ext.iter().product();
    let out_n: usize = out_shape.iter().product();
    let data = (0..out_n)
        .map(|o| {
            let c = unravel(o, &out_shape);
            let mut off: usize = kept.iter().zip(&c).map(|(k, c)| c * strides[*k]).sum();
            let mut coord = vec![0usize; axes.len()];
            let mut sum = PairwiseSum::new();
            // The reduced axes in row-major order, as a kernel visits them.
            for _ in 0..n_red {
                sum.push(x.data[off], |v| v);
                for k in (0..coord.len()).rev() {
                    coord[k] += 1;
                    off += red_str[k];
                    if coord[k] < red_ext[k] {
                        break;
                    }
                    off -= coord[k] * red_str[k];
                    coord[k] = 0;
                }
            }
            x.dtype.round(sum.total(|v| v))
        })
        .collect();
    Tensor {
        dtype: x.dtype,
        shape: out_shape,
        data,
    }
}

/// Transpose: broadcast the cotangent back over the summed axes.
pub fn reduce_sum_transpose(f: &mut Function, x_ty: &Type, axes: &[usize], ct: Var) -> Var {
    let dims = (0..x_ty.shape.rank())
        .filter(|a| !axes.contains(a))
        .collect();
    f.broadcast(ct, x_ty.shape.clone(), dims)
}

// ---- dot: inner product of two vectors ------------------------------------

pub fn dot_infer(a: &Type, b: &Type) -> Result<Type, String> {
    if a.shape.rank() != 1 || a != b || !a.dtype.is_float() {
        return Err(format!(
            "dot needs two float vectors of one type, got {a} and {b}"
        ));
    }
    Ok(Type::scalar(a.dtype))
}

/// Like `reduce_sum_eval`: products in `f64` (exact below `f64`), summed
/// pairwise in `f64`, rounded once.
pub fn dot_eval(a: &Tensor, b: &Tensor) -> Tensor {
    let mut sum = PairwiseSum::new();
    for (x, y) in a.data.iter().zip(&b.data) {
        sum.push(x * y, |v| v);
    }
    Tensor::scalar(a.dtype, a.dtype.round(sum.total(|v| v)))
}

pub fn dot_jvp(f: &mut Function, a: Var, b: Var, ta: Option<Var>, tb: Option<Var>) -> Option<Var> {
    let l = ta.map(|t| f.dot(t, b));
    let r = tb.map(|t| f.dot(a, t));
    match (l, r) {
        (Some(l), Some(r)) => Some(f.add(l, r)),
        (l, r) => l.or(r),
    }
}

/// Transpose in the linear operand: the cotangent scales the other vector.
pub fn dot_transpose(f: &mut Function, other: Var, ct: Var) -> Var {
    let shape = f.shape(other).clone();
    let c = f.broadcast(ct, shape, Vec::new());
    f.mul(c, other)
}

/// Batched dot: multiply (broadcasting the unbatched operand) and sum the
/// vector axis.
pub fn dot_batch(f: &mut Function, a: Var, b: Var, batched: &[bool], size: &Dim) -> Var {
    let a = if batched[0] {
        a
    } else {
        f.broadcast_batch(a, size)
    };
    let b = if batched[1] {
        b
    } else {
        f.broadcast_batch(b, size)
    };
    let p = f.mul(a, b);
    f.reduce_sum(p, vec![1])
}
