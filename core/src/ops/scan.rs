//! Products and scans: `reduce_prod` over axes and `linear_scan`, the
//! first-order linear recurrence along one axis that cumulative sums,
//! cumulative products and every derivative of a product are built from.
//!
//! `linear_scan[axis](a, b)` runs `z_i = a_i·z_{i-1} + b_i` from `z_{-1} = 0`
//! along `axis` (from the last position down with `reverse`) and returns the
//! *exclusive* state `y_i = z_{i-1}`: 0 at the first position, `z_{n-2}` at
//! the last. Why exclusive: the op is then closed under its own rules with
//! no shifted operand. The inclusive state is `a·y + b`, one fused
//! multiply-add in the consumer's kernel. The JVP is the same scan,
//! `dy = linear_scan(a, da·y + db)` (the tangent state obeys the recurrence
//! with `b' = da·z_{i-1} + db`, and `z_{i-1}` is the result itself), linear
//! in `b`; its transpose in `b` is the scan in the other direction with the
//! same `a`: `y_i = Σ_{j<i} (Π_{j<k<i} a_k)·b_j`, whose adjoint
//! `Σ_{i>j} (Π_{j<k<i} a_k)·c_i` is exactly the reverse exclusive scan.
//!
//! `reduce_prod`'s JVP is `Σ_i t_i·Π_{j≠i} x_j` with `Π_{j≠i} x_j` the
//! product of the exclusive products from the left and from the right, each
//! a `linear_scan`: no division, so every derivative order is exact at
//! zeros (the division form `prod/x_i` is NaN there, and a masked form gets
//! the second derivative wrong where exactly one element is 0). A product
//! over several axes is differentiated one axis at a time.
//!
//! Kernels: `reduce_prod` is a reduction kernel combining by multiplication
//! (`kernel::Reduce::Prod`); `linear_scan` is a scan kernel (`Kernel::scan`),
//! a sequential loop along the axis carrying the state.

use crate::ir::{Function, Type, Var};
use crate::ops::elementwise::CmpOp;
use crate::ops::Op;
use crate::shape::Dim;
use crate::tensor::Tensor;

// ---- reduce_prod ------------------------------------------------------------

/// The product over `axes` in `f64`, rounded once to the element type; 1
/// over no elements.
pub fn reduce_prod_eval(x: &Tensor, axes: &[usize]) -> Tensor {
    let mut p = super::reduce::fold_axes(x, axes, 1.0, |acc, v| acc * v);
    for v in &mut p.data {
        *v = x.dtype.round(*v);
    }
    p
}

/// `reduce_prod(x, axes)` as an equation.
pub fn reduce_prod(f: &mut Function, x: Var, axes: Vec<usize>) -> Var {
    f.push(Op::ReduceProd { axes }, &[x])
        .expect("internal error: reduce_prod")
}

/// JVP over `axes` (increasing), one axis at a time from the last, so the
/// earlier axes keep their positions: for one axis,
/// `Σ_i t_i · (Π_{j<i} x_j) · (Π_{j>i} x_j)`.
pub fn reduce_prod_jvp(f: &mut Function, x: Var, axes: &[usize], t: Var) -> Var {
    let (mut x, mut t) = (x, t);
    for &axis in axes.iter().rev() {
        let left = exclusive_products(f, x, axis, false);
        let right = exclusive_products(f, x, axis, true);
        let others = f.mul(left, right);
        let terms = f.mul(t, others);
        t = f.reduce_sum(terms, vec![axis]);
        x = reduce_prod(f, x, vec![axis]);
    }
    t
}

// ---- linear_scan --------------------------------------------------------------

pub fn linear_scan_infer(a: &Type, b: &Type, axis: usize) -> Result<Type, String> {
    if a != b || !a.dtype.is_float() || axis >= a.shape.rank() {
        return Err(format!(
            "linear_scan needs two float operands of one type and an axis below their rank, got {a}, {b} and axis {axis}"
        ));
    }
    Ok(a.clone())
}

/// The exclusive state in `f64`, each result rounded once to the element
/// type.
pub fn linear_scan_eval(a: &Tensor, b: &Tensor, axis: usize, reverse: bool) -> Tensor {
    let shape = &a.shape;
    let n = shape[axis];
    let stride: usize = shape[axis + 1..].iter().product();
    let rows: usize = shape
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != axis)
        .map(|(_, d)| d)
        .product();
    let mut data = vec![0.0; a.numel()];
    for r in 0..rows {
        // Row r: outer index (axes before `axis`) and inner (after).
        let (outer, inner) = (r / stride.max(1), r % stride.max(1));
        let base = outer * n * stride + inner;
        let mut z = 0.0f64;
        for s in 0..n {
            let i = if reverse { n - 1 - s } else { s };
            let at = base + i * stride;
            data[at] = a.dtype.round(z);
            z = a.data[at] * z + b.data[at];
        }
    }
    Tensor {
        dtype: a.dtype,
        shape: shape.clone(),
        data,
    }
}

/// `linear_scan[axis](a, b)` as an equation.
pub fn linear_scan(f: &mut Function, a: Var, b: Var, axis: usize, reverse: bool) -> Var {
    f.push(Op::LinearScan { axis, reverse }, &[a, b])
        .expect("internal error: linear_scan")
}

/// JVP: `linear_scan(a, da·y + db)`, `y` the result.
pub fn linear_scan_jvp(
    f: &mut Function,
    ins: &[Var],
    out: Var,
    axis: usize,
    reverse: bool,
    t: &[Option<Var>],
) -> Option<Var> {
    let from_a = t[0].map(|da| f.mul(da, out));
    let b = match (from_a, t[1]) {
        (None, None) => return None,
        (Some(x), None) | (None, Some(x)) => x,
        (Some(x), Some(y)) => f.add(x, y),
    };
    Some(linear_scan(f, ins[0], b, axis, reverse))
}

/// Transpose in `b`: the exclusive scan in the other direction, same `a`.
pub fn linear_scan_transpose(f: &mut Function, a: Var, ct: Var, axis: usize, reverse: bool) -> Var {
    linear_scan(f, a, ct, axis, !reverse)
}

/// Batching: a batch axis on either operand goes on both; the scan axis
/// moves one place.
pub fn linear_scan_batch(
    f: &mut Function,
    ins: &[Var],
    batched: &[bool],
    axis: usize,
    reverse: bool,
    size: &Dim,
) -> Var {
    let ab: Vec<Var> = ins
        .iter()
        .zip(batched)
        .map(|(v, b)| if *b { *v } else { f.broadcast_batch(*v, size) })
        .collect();
    linear_scan(f, ab[0], ab[1], axis + 1, reverse)
}

/// `true` at the first position along `axis` in the scan's direction (the
/// last position when `reverse`), as a bool array of `x`'s shape.
fn first_position(f: &mut Function, x: Var, axis: usize, reverse: bool) -> Var {
    let Type { dtype, shape } = f.ty(x).clone();
    let index = f
        .push(
            Op::Iota {
                shape: shape.clone(),
                axis,
                dtype,
            },
            &[],
        )
        .expect("internal error: iota");
    let first = if reverse {
        let n = f
            .push(
                Op::DimSize {
                    dim: shape.0[axis].clone(),
                    dtype,
                },
                &[],
            )
            .expect("internal error: dim_size");
        let one = f.literal(1.0, dtype);
        let last = f.sub(n, one);
        f.broadcast(last, shape.clone(), vec![])
    } else {
        f.full(0.0, dtype, &shape)
    };
    f.cmp(CmpOp::Eq, index, first)
}

/// `Π_{j<i} x_j` along `axis` (`Π_{j>i} x_j` when `reverse`), 1 at the first
/// position: the scan `z_i = x_i·z_{i-1} + [i first]·x_i` holds the
/// inclusive products, its exclusive state is the wanted product except at
/// the first position, where 1 is added to its 0.
pub fn exclusive_products(f: &mut Function, x: Var, axis: usize, reverse: bool) -> Var {
    let first = first_position(f, x, axis, reverse);
    let zero = f.zeros_like(x);
    let one = f.full_like(1.0, x);
    let start = f.select(first, x, zero);
    let y = linear_scan(f, x, start, axis, reverse);
    let at_first = f.select(first, one, zero);
    f.add(y, at_first)
}

/// The inclusive cumulative product along `axis` (`numpy.cumprod`).
pub fn cumprod(f: &mut Function, x: Var, axis: usize) -> Var {
    let before = exclusive_products(f, x, axis, false);
    f.mul(x, before)
}

/// The inclusive cumulative sum along `axis` (`numpy.cumsum`): the
/// exclusive sums `linear_scan(1, x)` plus `x`.
pub fn cumsum(f: &mut Function, x: Var, axis: usize) -> Var {
    let one = f.full_like(1.0, x);
    let before = linear_scan(f, one, x, axis, false);
    f.add(before, x)
}
