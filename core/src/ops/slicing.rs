//! Slicing ops: `slice` (`lax.slice`: a start and a step per axis, the
//! result's shape stated), its transpose `pad` (the operand placed at the
//! slice's positions in zeros: `lax.pad` with interior padding `step - 1`),
//! and `concatenate` along an axis (its transpose: slices of the cotangent).
//!
//! Starts are dimensions, so a start counted from the end of a symbolic axis
//! is the derived `n - k` (`shape::derived`); the result shape of a slice is
//! stated in the op (as `broadcast` states its own), built by the caller
//! with `derived::slice_len`, whose derived dimensions check the bounds when
//! a call binds its sizes.
//!
//! In the kernel IR a slice is a load with an offset (`start · stride`) and
//! strides multiplied by the steps; a pad is a zero fill plus a kernel that
//! stores the operand into a strided region of the output; a concatenation
//! is one such region store per operand (see `kernel::fusion`).

use crate::ir::{Function, Type, Var};
use crate::ops::Op;
use crate::shape::derived::{self, Bound};
use crate::shape::{Dim, Shape};
use crate::tensor::{unravel, Tensor};
use std::collections::BTreeMap;

// ---- shape rules -------------------------------------------------------------

/// `slice`: the operand's rank in `starts`, `steps` (>= 1) and `shape`; a
/// constant axis must hold the window.
pub fn slice_infer(x: &Type, shape: &Shape, starts: &[Dim], steps: &[u64]) -> Result<Type, String> {
    window_check("slice", &x.shape, shape, starts, steps)?;
    Ok(Type::new(x.dtype, shape.clone()))
}

/// `pad`: the operand is the window of `shape` at `starts` with `steps`.
pub fn pad_infer(x: &Type, shape: &Shape, starts: &[Dim], steps: &[u64]) -> Result<Type, String> {
    window_check("pad", shape, &x.shape, starts, steps)?;
    Ok(Type::new(x.dtype, shape.clone()))
}

/// A window of `len` elements at `starts` with `steps` inside `full`.
fn window_check(
    op: &str,
    full: &Shape,
    len: &Shape,
    starts: &[Dim],
    steps: &[u64],
) -> Result<(), String> {
    let r = full.rank();
    if len.rank() != r || starts.len() != r || steps.len() != r || steps.contains(&0) {
        return Err(format!(
            "{op} needs a start, a step >= 1 and a window size per axis of {full}, got starts {starts:?}, steps {steps:?}, window {len}"
        ));
    }
    for k in 0..r {
        if let (Dim::Const(n), Dim::Const(a), Dim::Const(l)) = (&full.0[k], &starts[k], &len.0[k]) {
            if *l > 0 && a + (l - 1) * steps[k] >= *n {
                return Err(format!(
                    "{op}: axis {k} of {full} cannot hold {l} elements from {a} with step {}",
                    steps[k]
                ));
            }
        }
    }
    Ok(())
}

pub fn concatenate_infer(ins: &[&Type], axis: usize) -> Result<Type, String> {
    let first = ins
        .first()
        .ok_or("concatenate needs at least one operand")?;
    let r = first.shape.rank();
    let fits = |t: &&Type| {
        t.dtype == first.dtype
            && t.shape.rank() == r
            && (0..r).all(|k| k == axis || t.shape.0[k] == first.shape.0[k])
    };
    if axis >= r || !ins.iter().all(fits) {
        let tys: Vec<String> = ins.iter().map(|t| t.to_string()).collect();
        return Err(format!(
            "concatenate along axis {axis} needs operands of one dtype and rank above {axis}, equal except along that axis, got {}",
            tys.join(", ")
        ));
    }
    let along: Vec<Dim> = ins.iter().map(|t| t.shape.0[axis].clone()).collect();
    let mut dims = first.shape.0.clone();
    dims[axis] = derived::sum(&along);
    Ok(Type::new(first.dtype, Shape(dims)))
}

// ---- reference evaluation ----------------------------------------------------

fn eval_starts(starts: &[Dim], env: &BTreeMap<String, u64>) -> Vec<usize> {
    starts
        .iter()
        .map(|d| derived::eval(d, &|s| env.get(s).copied()).expect("bound start") as usize)
        .collect()
}

/// Index in a row-major `full` of the window element at coordinate `c`.
fn window_index(c: &[usize], starts: &[usize], steps: &[u64], full_strides: &[usize]) -> usize {
    (0..c.len())
        .map(|k| (starts[k] + c[k] * steps[k] as usize) * full_strides[k])
        .sum()
}

pub fn slice_eval(
    x: &Tensor,
    out_shape: &[usize],
    starts: &[Dim],
    steps: &[u64],
    env: &BTreeMap<String, u64>,
) -> Tensor {
    let starts = eval_starts(starts, env);
    let xs = x.strides();
    let n: usize = out_shape.iter().product();
    let data = (0..n)
        .map(|i| x.data[window_index(&unravel(i, out_shape), &starts, steps, &xs)])
        .collect();
    Tensor::new(x.dtype, out_shape.to_vec(), data)
}

pub fn pad_eval(
    x: &Tensor,
    out_shape: &[usize],
    starts: &[Dim],
    steps: &[u64],
    env: &BTreeMap<String, u64>,
) -> Tensor {
    let starts = eval_starts(starts, env);
    let mut out = Tensor::new(
        x.dtype,
        out_shape.to_vec(),
        vec![0.0; out_shape.iter().product()],
    );
    let os = out.strides();
    for i in 0..x.numel() {
        out.data[window_index(&unravel(i, &x.shape), &starts, steps, &os)] = x.data[i];
    }
    out
}

pub fn concatenate_eval(ins: &[&Tensor], axis: usize, out_shape: &[usize]) -> Tensor {
    let mut out = Tensor::new(
        ins[0].dtype,
        out_shape.to_vec(),
        vec![0.0; out_shape.iter().product()],
    );
    let os = out.strides();
    let mut offset = 0;
    for x in ins {
        for i in 0..x.numel() {
            let mut c = unravel(i, &x.shape);
            c[axis] += offset;
            out.data[c.iter().zip(&os).map(|(c, s)| c * s).sum::<usize>()] = x.data[i];
        }
        offset += x.shape[axis];
    }
    out
}

// ---- builders ----------------------------------------------------------------

/// `x[start..stop; step]` along every axis (bounds as ndarray's `s![]`).
pub fn slice_bounds(
    f: &mut Function,
    x: Var,
    bounds: &[(Bound, Bound, u64)],
) -> Result<Var, String> {
    let shape = f.shape(x).clone();
    if bounds.len() != shape.rank() {
        return Err(format!("a slice of {shape} needs {} ranges", shape.rank()));
    }
    let mut starts = Vec::new();
    let mut dims = Vec::new();
    let mut steps = Vec::new();
    for (d, (a, b, s)) in shape.0.iter().zip(bounds) {
        starts.push(derived::start_index(d, *a)?);
        dims.push(derived::slice_len(d, *a, *b, *s)?);
        steps.push(*s);
    }
    Ok(slice(f, x, Shape(dims), starts, steps))
}

pub fn slice(f: &mut Function, x: Var, shape: Shape, starts: Vec<Dim>, steps: Vec<u64>) -> Var {
    if *f.shape(x) == shape && is_identity(&starts, &steps) {
        return x;
    }
    f.push(
        Op::Slice {
            shape,
            starts,
            steps,
        },
        &[x],
    )
    .expect("internal error: slice")
}

pub fn pad(f: &mut Function, x: Var, shape: Shape, starts: Vec<Dim>, steps: Vec<u64>) -> Var {
    if *f.shape(x) == shape && is_identity(&starts, &steps) {
        return x;
    }
    f.push(
        Op::Pad {
            shape,
            starts,
            steps,
        },
        &[x],
    )
    .expect("internal error: pad")
}

fn is_identity(starts: &[Dim], steps: &[u64]) -> bool {
    starts.iter().all(|s| *s == Dim::Const(0)) && steps.iter().all(|s| *s == 1)
}

pub fn concatenate(f: &mut Function, xs: &[Var], axis: usize) -> Var {
    if let [x] = xs {
        return *x;
    }
    f.push(
        Op::Concatenate {
            axis,
            operands: xs.len(),
        },
        xs,
    )
    .expect("internal error: concatenate")
}

// ---- derivative and batching rules (all three ops are linear) --------------

/// JVP of `concatenate`: the tangents concatenated (a zero for a missing one).
pub fn concatenate_jvp(
    f: &mut Function,
    ins: &[Var],
    axis: usize,
    t: &[Option<Var>],
) -> Option<Var> {
    if t.iter().all(Option::is_none) {
        return None;
    }
    let ts: Vec<Var> = ins
        .iter()
        .zip(t)
        .map(|(x, t)| t.unwrap_or_else(|| f.zeros_like(*x)))
        .collect();
    Some(concatenate(f, &ts, axis))
}

/// Transpose of `concatenate`: each linear operand's part of the cotangent.
pub fn concatenate_transpose(
    f: &mut Function,
    known: &[Option<Var>],
    types: &[Type],
    axis: usize,
    ct: Var,
) -> Vec<Option<Var>> {
    let mut before: Vec<Dim> = Vec::new();
    let mut out = Vec::new();
    for (k, ty) in known.iter().zip(types) {
        let r = ty.shape.rank();
        let part = k.is_none().then(|| {
            let mut starts = vec![Dim::Const(0); r];
            starts[axis] = derived::sum(&before);
            slice(f, ct, ty.shape.clone(), starts, vec![1; r])
        });
        out.push(part);
        before.push(ty.shape.0[axis].clone());
    }
    out
}

fn batched(
    size: &Dim,
    shape: &Shape,
    starts: &[Dim],
    steps: &[u64],
) -> (Shape, Vec<Dim>, Vec<u64>) {
    let mut s = vec![size.clone()];
    s.extend(shape.0.iter().cloned());
    let mut a = vec![Dim::Const(0)];
    a.extend(starts.iter().cloned());
    let mut t = vec![1];
    t.extend(steps);
    (Shape(s), a, t)
}

/// Batching with a leading batch axis: the whole of it, then the window.
pub fn slice_batch(
    f: &mut Function,
    x: Var,
    shape: &Shape,
    starts: &[Dim],
    steps: &[u64],
    size: &Dim,
) -> Var {
    let (s, a, t) = batched(size, shape, starts, steps);
    slice(f, x, s, a, t)
}

pub fn pad_batch(
    f: &mut Function,
    x: Var,
    shape: &Shape,
    starts: &[Dim],
    steps: &[u64],
    size: &Dim,
) -> Var {
    let (s, a, t) = batched(size, shape, starts, steps);
    pad(f, x, s, a, t)
}

pub fn concatenate_batch(
    f: &mut Function,
    ins: &[Var],
    batched: &[bool],
    axis: usize,
    size: &Dim,
) -> Var {
    let xs: Vec<Var> = ins
        .iter()
        .zip(batched)
        .map(|(v, b)| if *b { *v } else { f.broadcast_batch(*v, size) })
        .collect();
    concatenate(f, &xs, axis + 1)
}

// ---- text form -----------------------------------------------------------------

/// `a,b,…;s,t,…`: the starts, then the steps.
pub fn window_text(starts: &[Dim], steps: &[u64]) -> String {
    let a: Vec<String> = starts.iter().map(|d| d.to_string()).collect();
    let s: Vec<String> = steps.iter().map(|d| d.to_string()).collect();
    format!("{};{}", a.join(","), s.join(","))
}

pub fn parse_window(arg: &str) -> Option<(Vec<Dim>, Vec<u64>)> {
    let (a, s) = arg.split_once(';')?;
    let starts = a
        .split(',')
        .filter(|x| !x.is_empty())
        .map(derived::parse_dim)
        .collect::<Option<Vec<_>>>()?;
    let steps = s
        .split(',')
        .filter(|x| !x.is_empty())
        .map(|x| x.parse().ok())
        .collect::<Option<Vec<_>>>()?;
    Some((starts, steps))
}
