//! The op set. `Op` keeps every rule's `match` exhaustive, so a new op cannot
//! miss a rule; the rules themselves live beside each other in the family
//! files (`elementwise`, `structural`).

pub mod control;
pub mod convert;
pub mod dot_general;
pub mod elementwise;
pub mod erf;
pub mod gather;
pub mod layout;
pub mod reduce;
pub mod scan;
pub mod slicing;
pub mod structural;

use crate::dtype::DType;
use crate::ir::{Function, Type, Var};
use crate::shape::{Dim, Shape};
use crate::tensor::Tensor;
pub use dot_general::DotDims;
use elementwise::{BinaryOp, CmpOp, UnaryOp};
use std::collections::BTreeMap;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Cmp(CmpOp),
    /// `select(pred, on_true, on_false)`, elementwise.
    Select,
    /// A scalar constant.
    Literal {
        value: f64,
        dtype: DType,
    },
    /// Axis `i` of the operand becomes axis `dims[i]` of a result of `shape`;
    /// the other axes are new.
    Broadcast {
        shape: Shape,
        dims: Vec<usize>,
    },
    /// Sum over `axes` (increasing).
    ReduceSum {
        axes: Vec<usize>,
    },
    /// Inner product of two vectors.
    Dot,
    /// Max over `axes` (increasing); -inf over no elements.
    ReduceMax {
        axes: Vec<usize>,
    },
    /// Min over `axes` (increasing); +inf over no elements.
    ReduceMin {
        axes: Vec<usize>,
    },
    /// Axis `i` of the result is axis `perm[i]` of the operand.
    Transpose {
        perm: Vec<usize>,
    },
    /// The operand's elements, in row-major order, under a new shape with
    /// the same element count.
    Reshape {
        shape: Shape,
    },
    /// `lax.dot_general` (see `dot_general`).
    DotGeneral(DotDims),
    /// The identity, with a zero derivative (`jax.lax.stop_gradient`).
    StopGradient,
    /// The size of a dimension (a constant, or a symbol bound at the call)
    /// as a scalar of `dtype`: how `mean` divides by a length known only at
    /// run time.
    DimSize {
        dim: Dim,
        dtype: DType,
    },
    /// A tensor of `shape` whose element at a coordinate is that coordinate
    /// along `axis` (`lax.broadcasted_iota`): the building block of
    /// `arange`, `eye` and one-hot comparisons.
    Iota {
        shape: Shape,
        axis: usize,
        dtype: DType,
    },
    /// A cast to `dtype` with Rust's `as` semantics (see `convert`).
    Convert {
        dtype: DType,
    },
    /// The elements at `starts[k] + i·steps[k]` along each axis `k`, a result
    /// of `shape` (`lax.slice`; see `slicing`).
    Slice {
        shape: Shape,
        starts: Vec<Dim>,
        steps: Vec<u64>,
    },
    /// Zeros of `shape` with the operand at the positions a `Slice` with the
    /// same `starts` and `steps` reads (the transpose of `Slice`).
    Pad {
        shape: Shape,
        starts: Vec<Dim>,
        steps: Vec<u64>,
    },
    /// The `operands` operands joined along `axis`.
    Concatenate {
        axis: usize,
        operands: usize,
    },
    /// `x` picked along `axis` by an integer index array, the leading
    /// `batch` axes of both paired (see `gather`).
    Gather {
        axis: usize,
        batch: usize,
    },
    /// Zeros of `shape` plus the updates added at the indexed positions
    /// along `axis` (the transpose of `Gather`).
    ScatterAdd {
        axis: usize,
        batch: usize,
        shape: Shape,
    },
    /// Product over `axes` (increasing); 1 over no elements (see `scan`).
    ReduceProd {
        axes: Vec<usize>,
    },
    /// `linear_scan(a, b)`: the exclusive state `z_{i-1}` of
    /// `z_i = a_i·z_{i-1} + b_i`, `z_{-1} = 0`, along `axis`, from the last
    /// position down when `reverse` (see `scan`).
    LinearScan {
        axis: usize,
        reverse: bool,
    },
    /// A loop with a body function (see `control`); one result per carry
    /// it returns.
    Loop(Box<control::Loop>),
    /// Reverse mode through a loop (see `control`).
    LoopReverse(Box<control::LoopReverse>),
    /// `if pred { then } else { otherwise }` with branch functions (see
    /// `control::Cond`); one result per branch result.
    Cond(Box<control::Cond>),
}

/// How fusion treats an op (see `kernel::fusion`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FusionKind {
    /// One kernel instruction per element.
    Elementwise,
    /// Changes load strides only.
    Broadcast,
    /// Ends a fused group: its result is written to memory.
    Reduction,
    /// Permutes load strides (transpose) or reads a materialized operand
    /// under another shape (reshape), or at an offset (slice).
    Layout,
    /// Materialized by kernels that each store into a region of it (pad,
    /// concatenate, scatter_add).
    Assemble,
    /// A load of a materialized operand at positions read from a
    /// materialized index array (gather).
    Indexed,
    /// Ends a fused group: a scan kernel carries its state along one axis.
    Scan,
    /// A loop: its body is a program of its own, run once per step.
    Control,
}

impl Op {
    pub fn arity(&self) -> usize {
        match self {
            Op::Literal { .. } | Op::DimSize { .. } | Op::Iota { .. } => 0,
            Op::Unary(_)
            | Op::Broadcast { .. }
            | Op::ReduceSum { .. }
            | Op::ReduceMax { .. }
            | Op::ReduceMin { .. }
            | Op::ReduceProd { .. }
            | Op::Transpose { .. }
            | Op::Reshape { .. }
            | Op::StopGradient
            | Op::Convert { .. }
            | Op::Slice { .. }
            | Op::Pad { .. } => 1,
            Op::Binary(_)
            | Op::Cmp(_)
            | Op::Dot
            | Op::DotGeneral(_)
            | Op::Gather { .. }
            | Op::ScatterAdd { .. }
            | Op::LinearScan { .. } => 2,
            Op::Select => 3,
            Op::Concatenate { operands, .. } => *operands,
            Op::Loop(l) => l.n_operands(),
            Op::LoopReverse(l) => l.fwd.n_operands() + l.n_r(),
            Op::Cond(c) => c.n_operands(),
        }
    }

    /// Shape and dtype rule for every result.
    pub fn infer_all(&self, ins: &[&Type]) -> Result<Vec<Type>, String> {
        match self {
            Op::Loop(l) => l.infer(ins),
            Op::LoopReverse(l) => l.infer(ins),
            Op::Cond(c) => c.infer(ins),
            _ => Ok(vec![self.infer(ins)?]),
        }
    }

    /// Whether the op has its own rules in every transform (`control`),
    /// instead of the single-result rules below.
    pub fn is_control(&self) -> bool {
        matches!(self, Op::Loop(_) | Op::LoopReverse(_) | Op::Cond(_))
    }

    /// Shape and dtype rule.
    pub fn infer(&self, ins: &[&Type]) -> Result<Type, String> {
        if ins.len() != self.arity() {
            return Err(format!(
                "{self} takes {} operands, got {}",
                self.arity(),
                ins.len()
            ));
        }
        match self {
            Op::Loop(_) | Op::LoopReverse(_) | Op::Cond(_) => match self.infer_all(ins)?[..] {
                [ref t] => Ok(t.clone()),
                ref ts => Err(format!("{self} has {} results", ts.len())),
            },
            Op::Unary(_) => {
                if !ins[0].dtype.is_float() {
                    return Err(format!("{self} needs a float operand, got {}", ins[0]));
                }
                Ok(ins[0].clone())
            }
            Op::Binary(_) | Op::Cmp(_) => {
                if ins[0] != ins[1] || !ins[0].dtype.is_float() {
                    return Err(format!(
                        "{self} needs two float operands of one type, got {} and {}",
                        ins[0], ins[1]
                    ));
                }
                let dtype = if matches!(self, Op::Cmp(_)) {
                    DType::Bool
                } else {
                    ins[0].dtype
                };
                Ok(Type::new(dtype, ins[0].shape.clone()))
            }
            Op::Select => {
                if ins[0].dtype != DType::Bool || ins[0].shape != ins[1].shape || ins[1] != ins[2] {
                    return Err(format!(
                        "select needs a bool predicate and two operands of its shape, got {}, {}, {}",
                        ins[0], ins[1], ins[2]
                    ));
                }
                Ok(ins[1].clone())
            }
            Op::Literal { dtype, .. } => structural::literal_infer(*dtype),
            Op::Broadcast { shape, dims } => structural::broadcast_infer(ins[0], shape, dims),
            Op::ReduceSum { axes } => structural::reduce_sum_infer(ins[0], axes),
            Op::Dot => structural::dot_infer(ins[0], ins[1]),
            Op::ReduceMax { axes } => reduce::reduce_infer("reduce_max", ins[0], axes),
            Op::ReduceMin { axes } => reduce::reduce_infer("reduce_min", ins[0], axes),
            Op::ReduceProd { axes } => reduce::reduce_infer("reduce_prod", ins[0], axes),
            Op::LinearScan { axis, .. } => scan::linear_scan_infer(ins[0], ins[1], *axis),
            Op::Transpose { perm } => layout::transpose_infer(ins[0], perm),
            Op::Reshape { shape } => layout::reshape_infer(ins[0], shape),
            Op::DotGeneral(d) => dot_general::dot_general_infer(ins[0], ins[1], d),
            Op::StopGradient => Ok(ins[0].clone()),
            Op::Convert { dtype } => convert::convert_infer(ins[0], *dtype),
            Op::Slice {
                shape,
                starts,
                steps,
            } => slicing::slice_infer(ins[0], shape, starts, steps),
            Op::Pad {
                shape,
                starts,
                steps,
            } => slicing::pad_infer(ins[0], shape, starts, steps),
            Op::Concatenate { axis, .. } => slicing::concatenate_infer(ins, *axis),
            Op::Gather { axis, batch } => gather::gather_infer(ins[0], ins[1], *axis, *batch),
            Op::ScatterAdd { axis, batch, shape } => {
                gather::scatter_add_infer(ins[0], ins[1], *axis, *batch, shape)
            }
            Op::DimSize { dtype, .. } => {
                if !dtype.is_float() {
                    return Err(format!("dim_size needs a float type, got {dtype}"));
                }
                Ok(Type::scalar(*dtype))
            }
            Op::Iota { shape, axis, dtype } => {
                if !dtype.is_float() || *axis >= shape.rank() {
                    return Err(format!(
                        "iota needs a float type and an axis below the rank of {shape}, got {dtype} and {axis}"
                    ));
                }
                Ok(Type::new(*dtype, shape.clone()))
            }
        }
    }

    /// Reference evaluation; `out_shape` is the result's concrete shape and
    /// `env` binds the dimension symbols.
    pub fn eval(
        &self,
        ins: &[&Tensor],
        out_shape: &[usize],
        env: &BTreeMap<String, u64>,
    ) -> Tensor {
        let map = |x: &Tensor, dtype: DType, g: &dyn Fn(usize) -> f64| Tensor {
            dtype,
            shape: x.shape.clone(),
            data: (0..x.numel()).map(|i| dtype.round(g(i))).collect(),
        };
        match self {
            Op::Unary(op) => map(ins[0], ins[0].dtype, &|i| op.eval(ins[0].data[i])),
            Op::Binary(op) => map(ins[0], ins[0].dtype, &|i| {
                op.eval(ins[0].data[i], ins[1].data[i])
            }),
            Op::Cmp(op) => map(ins[0], DType::Bool, &|i| {
                op.eval(ins[0].data[i], ins[1].data[i]) as u8 as f64
            }),
            Op::Select => map(ins[1], ins[1].dtype, &|i| {
                if ins[0].data[i] != 0.0 {
                    ins[1].data[i]
                } else {
                    ins[2].data[i]
                }
            }),
            Op::Literal { value, dtype } => structural::literal_eval(*value, *dtype),
            Op::Broadcast { dims, .. } => structural::broadcast_eval(ins[0], out_shape, dims),
            Op::ReduceSum { axes } => structural::reduce_sum_eval(ins[0], axes),
            Op::Dot => structural::dot_eval(ins[0], ins[1]),
            Op::StopGradient => ins[0].clone(),
            Op::Convert { dtype } => convert::convert_eval(ins[0], *dtype),
            Op::DimSize { dim, dtype } => {
                let n = crate::shape::derived::eval(dim, &|s| env.get(s).copied())
                    .expect("dim_size of a bound symbol");
                Tensor::scalar(*dtype, n as f64)
            }
            Op::Iota { axis, dtype, .. } => {
                let n: usize = out_shape.iter().product();
                let data = (0..n)
                    .map(|i| crate::tensor::unravel(i, out_shape)[*axis] as f64)
                    .collect();
                Tensor::new(*dtype, out_shape.to_vec(), data)
            }
            Op::ReduceMax { axes } => reduce::reduce_choose_eval(ins[0], axes, BinaryOp::Max),
            Op::ReduceMin { axes } => reduce::reduce_choose_eval(ins[0], axes, BinaryOp::Min),
            Op::ReduceProd { axes } => scan::reduce_prod_eval(ins[0], axes),
            Op::LinearScan { axis, reverse } => {
                scan::linear_scan_eval(ins[0], ins[1], *axis, *reverse)
            }
            Op::Loop(_) | Op::LoopReverse(_) | Op::Cond(_) => {
                panic!("internal error: {self} is evaluated by `control`")
            }
            Op::Transpose { perm } => layout::transpose_eval(ins[0], perm),
            Op::Reshape { .. } => layout::reshape_eval(ins[0], out_shape),
            Op::DotGeneral(d) => dot_general::dot_general_eval(ins[0], ins[1], d),
            Op::Slice { starts, steps, .. } => {
                slicing::slice_eval(ins[0], out_shape, starts, steps, env)
            }
            Op::Pad { starts, steps, .. } => {
                slicing::pad_eval(ins[0], out_shape, starts, steps, env)
            }
            Op::Concatenate { axis, .. } => slicing::concatenate_eval(ins, *axis, out_shape),
            Op::Gather { axis, batch } => {
                gather::gather_eval(ins[0], ins[1], *axis, *batch, out_shape)
            }
            Op::ScatterAdd { axis, batch, .. } => {
                gather::scatter_add_eval(ins[0], ins[1], *axis, *batch, out_shape)
            }
        }
    }

    /// Tangent of the result given the operands' tangents (`None` = zero).
    pub fn jvp(&self, f: &mut Function, ins: &[Var], out: Var, t: &[Option<Var>]) -> Option<Var> {
        match self {
            Op::Unary(op) => t[0].and_then(|t| op.jvp(f, ins[0], out, t)),
            Op::Binary(op) => op.jvp(f, ins[0], ins[1], out, t[0], t[1]),
            Op::Cmp(_) | Op::Literal { .. } => None,
            Op::Select => {
                if t[1].is_none() && t[2].is_none() {
                    return None;
                }
                let a = t[1].unwrap_or_else(|| f.zeros_like(ins[1]));
                let b = t[2].unwrap_or_else(|| f.zeros_like(ins[2]));
                Some(f.select(ins[0], a, b))
            }
            Op::Broadcast { dims, .. } => t[0].map(|t| structural::broadcast_jvp(f, out, dims, t)),
            Op::ReduceSum { axes } => t[0].map(|t| f.reduce_sum(t, axes.clone())),
            Op::Dot => structural::dot_jvp(f, ins[0], ins[1], t[0], t[1]),
            Op::StopGradient | Op::DimSize { .. } | Op::Iota { .. } => None,
            Op::Convert { dtype } => t[0].and_then(|t| convert::convert_jvp(f, ins[0], *dtype, t)),
            Op::ReduceMax { axes } | Op::ReduceMin { axes } => {
                t[0].map(|t| reduce::reduce_choose_jvp(f, ins[0], out, axes, t))
            }
            Op::Transpose { perm } => t[0].map(|t| layout::transpose(f, t, perm.clone())),
            Op::Reshape { shape } => t[0].map(|t| layout::reshape(f, t, shape.clone())),
            Op::DotGeneral(d) => dot_general::dot_general_jvp(f, ins[0], ins[1], d, t[0], t[1]),
            Op::Slice {
                shape,
                starts,
                steps,
            } => t[0].map(|t| slicing::slice(f, t, shape.clone(), starts.clone(), steps.clone())),
            Op::Pad {
                shape,
                starts,
                steps,
            } => t[0].map(|t| slicing::pad(f, t, shape.clone(), starts.clone(), steps.clone())),
            Op::Concatenate { axis, .. } => slicing::concatenate_jvp(f, ins, *axis, t),
            // Linear in the float operand, with the same indices.
            Op::Gather { axis, batch } => t[0].map(|t| gather::gather(f, t, ins[1], *axis, *batch)),
            Op::ScatterAdd { axis, batch, shape } => {
                t[0].map(|t| gather::scatter_add(f, t, ins[1], *axis, *batch, shape.clone()))
            }
            Op::ReduceProd { axes } => t[0].map(|t| scan::reduce_prod_jvp(f, ins[0], axes, t)),
            Op::LinearScan { axis, reverse } => {
                scan::linear_scan_jvp(f, ins, out, *axis, *reverse, t)
            }
            Op::Loop(_) | Op::LoopReverse(_) | Op::Cond(_) => {
                panic!("internal error: the JVP of {self} is in `control`")
            }
        }
    }

    /// Whether the op may have a linear (tangent-carrying) operand `i`;
    /// `transpose` must handle exactly these.
    pub fn is_linear_in(&self, i: usize) -> bool {
        match self {
            Op::Unary(op) => op.is_linear(),
            Op::Binary(op) => op.linear_in(i),
            Op::Cmp(_)
            | Op::Literal { .. }
            | Op::DimSize { .. }
            | Op::Iota { .. }
            | Op::StopGradient
            | Op::ReduceMax { .. }
            | Op::ReduceMin { .. }
            | Op::ReduceProd { .. } => false,
            Op::Select => i > 0,
            Op::LinearScan { .. } => i == 1,
            Op::Loop(l) => l.is_linear_in(i),
            Op::Cond(c) => c.is_linear_in(i),
            // Reverse over reverse is not supported.
            Op::LoopReverse(_) => false,
            Op::Broadcast { .. }
            | Op::ReduceSum { .. }
            | Op::Dot
            | Op::Transpose { .. }
            | Op::Reshape { .. }
            | Op::DotGeneral(_)
            | Op::Convert { .. }
            | Op::Slice { .. }
            | Op::Pad { .. }
            | Op::Concatenate { .. } => true,
            // The indices carry no derivative.
            Op::Gather { .. } | Op::ScatterAdd { .. } => i == 0,
        }
    }

    /// Cotangents of the linear operands given the result's cotangent `ct`.
    /// `known[i]` is `Some(value)` for operands that are constants of the
    /// linear map and `None` for linear ones; `types[i]` is each operand's type.
    pub fn transpose(
        &self,
        f: &mut Function,
        known: &[Option<Var>],
        types: &[Type],
        ct: Var,
    ) -> Vec<Option<Var>> {
        match self {
            Op::Unary(UnaryOp::Neg) => vec![Some(f.neg(ct))],
            Op::Binary(op) => op.transpose(f, [known[0], known[1]], ct).to_vec(),
            Op::Select => {
                let p = known[0].expect("internal error: select predicate must be known");
                let zero = f.zeros_like(ct);
                let a = known[1].is_none().then(|| f.select(p, ct, zero));
                let b = known[2].is_none().then(|| f.select(p, zero, ct));
                vec![None, a, b]
            }
            Op::Broadcast { dims, shape } => vec![Some(structural::broadcast_transpose(
                f,
                shape.rank(),
                dims,
                ct,
            ))],
            Op::ReduceSum { axes } => vec![Some(structural::reduce_sum_transpose(
                f, &types[0], axes, ct,
            ))],
            Op::Dot => match (known[0], known[1]) {
                (None, Some(b)) => vec![Some(structural::dot_transpose(f, b, ct)), None],
                (Some(a), None) => vec![None, Some(structural::dot_transpose(f, a, ct))],
                _ => panic!("internal error: dot transposed with both or neither operand linear"),
            },
            Op::Transpose { perm } => vec![Some(layout::transpose_transpose(f, perm, ct))],
            Op::Reshape { .. } => vec![Some(layout::reshape(f, ct, types[0].shape.clone()))],
            Op::Convert { .. } => vec![Some(convert::convert_transpose(f, &types[0], ct))],
            Op::Slice { starts, steps, .. } => vec![Some(slicing::pad(
                f,
                ct,
                types[0].shape.clone(),
                starts.clone(),
                steps.clone(),
            ))],
            Op::Pad { starts, steps, .. } => vec![Some(slicing::slice(
                f,
                ct,
                types[0].shape.clone(),
                starts.clone(),
                steps.clone(),
            ))],
            Op::Concatenate { axis, .. } => {
                slicing::concatenate_transpose(f, known, types, *axis, ct)
            }
            Op::Gather { axis, batch } => {
                let idx = known[1].expect("internal error: gather indices must be known");
                let shape = types[0].shape.clone();
                vec![
                    Some(gather::scatter_add(f, ct, idx, *axis, *batch, shape)),
                    None,
                ]
            }
            Op::ScatterAdd { axis, batch, .. } => {
                let idx = known[1].expect("internal error: scatter_add indices must be known");
                vec![Some(gather::gather(f, ct, idx, *axis, *batch)), None]
            }
            Op::LinearScan { axis, reverse } => {
                let a = known[0].expect("internal error: linear_scan's `a` must be known");
                vec![
                    None,
                    Some(scan::linear_scan_transpose(f, a, ct, *axis, *reverse)),
                ]
            }
            Op::DotGeneral(d) => match (known[0], known[1]) {
                (None, Some(b)) => vec![
                    Some(dot_general::dot_general_transpose(
                        f, d, true, &types[0], b, ct,
                    )),
                    None,
                ],
                (Some(a), None) => vec![
                    None,
                    Some(dot_general::dot_general_transpose(
                        f, d, false, &types[1], a, ct,
                    )),
                ],
                _ => panic!(
                    "internal error: dot_general transposed with both or neither operand linear"
                ),
            },
            Op::Unary(_)
            | Op::Cmp(_)
            | Op::Literal { .. }
            | Op::DimSize { .. }
            | Op::Iota { .. }
            | Op::StopGradient
            | Op::ReduceMax { .. }
            | Op::ReduceMin { .. }
            | Op::ReduceProd { .. }
            | Op::LoopReverse(_) => {
                panic!("internal error: {self} is not linear")
            }
            Op::Loop(_) | Op::Cond(_) => {
                panic!("internal error: {self} is transposed by `control`")
            }
        }
    }

    /// The op applied to operands of which `batched[i]` carry a leading batch
    /// axis of size `size`; the result carries it too.
    pub fn batch(&self, f: &mut Function, ins: &[Var], batched: &[bool], size: &Dim) -> Var {
        match self {
            Op::Unary(_)
            | Op::Binary(_)
            | Op::Cmp(_)
            | Op::Select
            | Op::StopGradient
            | Op::Convert { .. } => {
                let ins: Vec<Var> = ins
                    .iter()
                    .zip(batched)
                    .map(|(v, b)| if *b { *v } else { f.broadcast_batch(*v, size) })
                    .collect();
                f.push(self.clone(), &ins)
                    .expect("internal error: batching an elementwise op")
            }
            Op::Literal { .. } | Op::DimSize { .. } | Op::Iota { .. } => {
                panic!("internal error: {self} has no operand to batch")
            }
            Op::ReduceMax { axes } => f
                .push(
                    Op::ReduceMax {
                        axes: reduce::shift_axes(axes),
                    },
                    ins,
                )
                .expect("internal error: batching reduce_max"),
            Op::ReduceMin { axes } => f
                .push(
                    Op::ReduceMin {
                        axes: reduce::shift_axes(axes),
                    },
                    ins,
                )
                .expect("internal error: batching reduce_min"),
            Op::ReduceProd { axes } => scan::reduce_prod(f, ins[0], reduce::shift_axes(axes)),
            Op::LinearScan { axis, reverse } => {
                scan::linear_scan_batch(f, ins, batched, *axis, *reverse, size)
            }
            Op::Loop(_) | Op::LoopReverse(_) | Op::Cond(_) => {
                panic!("internal error: {self} is batched by `control`")
            }
            Op::Transpose { perm } => layout::transpose_batch(f, ins[0], perm),
            Op::Reshape { shape } => layout::reshape_batch(f, ins[0], shape, size),
            Op::DotGeneral(d) => dot_general::dot_general_batch(f, ins[0], ins[1], d, batched),
            Op::Broadcast { shape, dims } => {
                structural::broadcast_batch(f, ins[0], shape, dims, size)
            }
            Op::ReduceSum { axes } => f.reduce_sum(ins[0], reduce::shift_axes(axes)),
            Op::Dot => structural::dot_batch(f, ins[0], ins[1], batched, size),
            Op::Slice {
                shape,
                starts,
                steps,
            } => slicing::slice_batch(f, ins[0], shape, starts, steps, size),
            Op::Pad {
                shape,
                starts,
                steps,
            } => slicing::pad_batch(f, ins[0], shape, starts, steps, size),
            Op::Concatenate { axis, .. } => {
                slicing::concatenate_batch(f, ins, batched, *axis, size)
            }
            Op::Gather { axis, batch } => {
                gather::gather_batch(f, ins, batched, *axis, *batch, size)
            }
            Op::ScatterAdd { axis, batch, shape } => {
                gather::scatter_add_batch(f, ins, batched, *axis, *batch, shape, size)
            }
        }
    }

    pub fn fusion_kind(&self) -> FusionKind {
        match self {
            Op::Unary(_)
            | Op::Binary(_)
            | Op::Cmp(_)
            | Op::Select
            | Op::Literal { .. }
            | Op::StopGradient
            | Op::Convert { .. }
            | Op::DimSize { .. }
            | Op::Iota { .. } => FusionKind::Elementwise,
            Op::Broadcast { .. } => FusionKind::Broadcast,
            Op::Transpose { .. } | Op::Reshape { .. } | Op::Slice { .. } => FusionKind::Layout,
            Op::Pad { .. } | Op::Concatenate { .. } | Op::ScatterAdd { .. } => FusionKind::Assemble,
            Op::Gather { .. } => FusionKind::Indexed,
            Op::ReduceSum { .. }
            | Op::ReduceMax { .. }
            | Op::ReduceMin { .. }
            | Op::ReduceProd { .. }
            | Op::Dot
            | Op::DotGeneral(_) => FusionKind::Reduction,
            Op::LinearScan { .. } => FusionKind::Scan,
            Op::Loop(_) | Op::LoopReverse(_) | Op::Cond(_) => FusionKind::Control,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |v: &[usize]| {
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        match self {
            Op::Unary(op) => f.write_str(&op.name()),
            Op::Binary(op) => f.write_str(op.name()),
            Op::Cmp(op) => f.write_str(op.name()),
            Op::Select => f.write_str("select"),
            Op::Literal { value, .. } => write!(f, "literal[{value:?}]"),
            Op::Broadcast { dims, .. } => write!(f, "broadcast[{}]", list(dims)),
            Op::ReduceSum { axes } => write!(f, "reduce_sum[{}]", list(axes)),
            Op::Dot => f.write_str("dot"),
            Op::ReduceMax { axes } => write!(f, "reduce_max[{}]", list(axes)),
            Op::ReduceMin { axes } => write!(f, "reduce_min[{}]", list(axes)),
            Op::Transpose { perm } => write!(f, "transpose[{}]", list(perm)),
            Op::Reshape { .. } => f.write_str("reshape"),
            Op::DotGeneral(d) => write!(
                f,
                "dot_general[{};{};{};{}]",
                list(&d.lhs_contract),
                list(&d.rhs_contract),
                list(&d.lhs_batch),
                list(&d.rhs_batch)
            ),
            Op::StopGradient => f.write_str("stop_gradient"),
            Op::Convert { .. } => f.write_str("convert"),
            Op::DimSize { dim, .. } => write!(f, "dim_size[{dim}]"),
            Op::Iota { axis, .. } => write!(f, "iota[{axis}]"),
            Op::Slice { starts, steps, .. } => {
                write!(f, "slice[{}]", slicing::window_text(starts, steps))
            }
            Op::Pad { starts, steps, .. } => {
                write!(f, "pad[{}]", slicing::window_text(starts, steps))
            }
            Op::Concatenate { axis, .. } => write!(f, "concatenate[{axis}]"),
            Op::Gather { axis, batch } => write!(f, "gather[{axis},{batch}]"),
            Op::ScatterAdd { axis, batch, .. } => write!(f, "scatter_add[{axis},{batch}]"),
            Op::ReduceProd { axes } => write!(f, "reduce_prod[{}]", list(axes)),
            Op::LinearScan { axis, reverse } => {
                let dir = if *reverse { ",rev" } else { "" };
                write!(f, "linear_scan[{axis}{dir}]")
            }
            Op::Loop(l) => f.write_str(&l.header()),
            Op::LoopReverse(l) => f.write_str(&l.header()),
            Op::Cond(c) => f.write_str(&c.header()),
        }
    }
}
