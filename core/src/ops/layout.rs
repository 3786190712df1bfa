//! Layout ops: transpose (a permutation of axes) and reshape (the same
//! elements in row-major order under a new shape).
//!
//! In the kernel IR neither is an instruction: a transpose permutes the load
//! strides below it; a reshape reads its (materialized) operand's buffer
//! through the strides of the new shape (see `kernel::fusion`).

use crate::ir::{Function, Type, Var};
use crate::ops::Op;
use crate::shape::{Dim, Shape};
use crate::tensor::{unravel, Tensor};

// ---- transpose: result axis i is operand axis perm[i] ---------------------

pub fn transpose_infer(x: &Type, perm: &[usize]) -> Result<Type, String> {
    let rank = x.shape.rank();
    let mut seen = vec![false; rank];
    if perm.len() != rank
        || perm
            .iter()
            .any(|p| *p >= rank || std::mem::replace(&mut seen[*p], true))
    {
        return Err(format!(
            "transpose of {x} needs a permutation of 0..{rank}, got {perm:?}"
        ));
    }
    Ok(Type::new(
        x.dtype,
        Shape(perm.iter().map(|p| x.shape.0[*p].clone()).collect()),
    ))
}

/// The permutation that undoes `perm`.
pub fn inverse_perm(perm: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; perm.len()];
    for (i, p) in perm.iter().enumerate() {
        inv[*p] = i;
    }
    inv
}

// ---- reshape: same row-major elements, new shape ---------------------------

pub fn reshape_infer(x: &Type, shape: &Shape) -> Result<Type, String> {
    if x.shape.numel() != shape.numel() {
        return Err(format!(
            "cannot reshape {x} to {shape}: the element counts {} and {} differ",
            x.shape.numel(),
            shape.numel()
        ));
    }
    Ok(Type::new(x.dtype, shape.clone()))
}

pub fn transpose_eval(x: &Tensor, perm: &[usize]) -> Tensor {
    let out_shape: Vec<usize> = perm.iter().map(|p| x.shape[*p]).collect();
    let xs = x.strides();
    let n: usize = out_shape.iter().product();
    let data = (0..n)
        .map(|i| {
            let c = unravel(i, &out_shape);
            let idx: usize = perm.iter().zip(&c).map(|(p, c)| c * xs[*p]).sum();
            x.data[idx]
        })
        .collect();
    Tensor {
        dtype: x.dtype,
        shape: out_shape,
        data,
    }
}

pub fn reshape_eval(x: &Tensor, out_shape: &[usize]) -> Tensor {
    Tensor {
        dtype: x.dtype,
        shape: out_shape.to_vec(),
        data: x.data.clone(),
    }
}

// ---- derivative and batching rules (both ops are linear) ------------------

pub fn transpose(f: &mut Function, x: Var, perm: Vec<usize>) -> Var {
    if perm.iter().enumerate().all(|(i, p)| i == *p) {
        return x;
    }
    f.push(Op::Transpose { perm }, &[x])
        .expect("internal error: transpose")
}

pub fn reshape(f: &mut Function, x: Var, shape: Shape) -> Var {
    if *f.shape(x) == shape {
        return x;
    }
    f.push(Op::Reshape { shape }, &[x])
        .expect("internal error: reshape")
}

/// Transpose rule of `transpose`: the inverse permutation.
pub fn transpose_transpose(f: &mut Function, perm: &[usize], ct: Var) -> Var {
    transpose(f, ct, inverse_perm(perm))
}

/// Batching with a leading batch axis: it stays first.
pub fn transpose_batch(f: &mut Function, x: Var, perm: &[usize]) -> Var {
    let mut p = vec![0];
    p.extend(perm.iter().map(|a| a + 1));
    transpose(f, x, p)
}

/// Batching with a leading batch axis: a row-major reshape of each example
/// is a reshape of the stack that keeps the leading axis.
pub fn reshape_batch(f: &mut Function, x: Var, shape: &Shape, size: &Dim) -> Var {
    let mut dims = vec![size.clone()];
    dims.extend(shape.0.iter().cloned());
    reshape(f, x, Shape(dims))
}

/// A permutation moving axis `from` to position `to` (the others keep
/// their order), as `Transpose` reads it.
pub fn move_axis_perm(rank: usize, from: usize, to: usize) -> Vec<usize> {
    let mut rest: Vec<usize> = (0..rank).filter(|a| *a != from).collect();
    rest.insert(to, from);
    rest
}
