//! The op set. `Op` keeps every rule's `match` exhaustive, so a new op cannot
//! miss a rule; the rules themselves live beside each other in the family
//! files: `elementwise` (unary, binary, comparisons, select), `structural`
//! (literal, broadcast, reduce_sum, dot), `reduce` (reduce_max/min),
//! `layout` (transpose, reshape), `dot_general`, `convert`, `slicing`
//! (slice, pad, concatenate), `gather` (gather, scatter_add), `scan`
//! (reduce_prod, linear_scan), `sort` (argsort), `linalg` (cholesky,
//! triangular and LU solves, determinants), `conv` (conv_general_dilated)
//! and `pool` (reduce_window, built on conv), `special` (functions expanded into primitive
//! ops before fusion: erf_inv) and `control` (loops, reverse sweeps, conds,
//! custom derivative rules);
//! `erf` and `erf_inv` hold those functions' numerics. The files a new op
//! touches are listed in `docs/ADDING_AN_OP.md`.

pub mod collective;
pub mod control;
pub mod conv;
pub mod convert;
pub mod dot_general;
pub mod elementwise;
pub mod erf;
pub mod erf_inv;
pub mod gather;
pub mod layout;
pub mod linalg;
pub mod pool;
pub mod reduce;
pub mod scan;
pub mod slicing;
pub mod sort;
pub mod special;
pub mod structural;

use crate::dtype::DType;
use crate::ir::{Function, Type, Var};
use crate::shape::{Dim, Shape};
use crate::tensor::Tensor;
use crate::transforms::vmap::BatchAxis;
use collective::Collective;
pub use dot_general::DotDims;
use elementwise::{BinaryOp, CmpOp, UnaryOp};
use special::SpecialFn;
use std::collections::BTreeMap;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Unary(UnaryOp),
    /// A special function (`special`): a primitive to the transforms,
    /// expanded into primitive ops before fusion.
    Special(SpecialFn),
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
    /// A collective over a named axis (see `collective`).
    Collective(Collective),
    /// A body run once per device along a named axis (see
    /// `control::Pmap`); one result per body result.
    Pmap(Box<control::Pmap>),
    /// A function with a custom derivative rule (`custom_jvp_call`,
    /// `custom_vjp_call`) or a custom_vjp function's linear tangent map
    /// (`custom_lin`); see `control::Custom`.
    Custom(Box<control::Custom>),
    /// The permutation sorting each lane along `axis`, stable, in JAX's
    /// order, or its first `k` entries (see `sort`).
    Argsort {
        axis: usize,
        descending: bool,
        k: Option<u64>,
    },
    /// Dense linear algebra on the last two axes (see `linalg`).
    Linalg(linalg::LinalgOp),
    /// `lax.conv_general_dilated` in the layout NCHW/OIHW/NCHW (see
    /// `conv`).
    Conv(conv::ConvParams),
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
    /// A loop or a cond: its body or branches are programs of their own,
    /// which the host runs as a step of the program.
    Control,
    /// A collective: the per-device program's host step that reaches the
    /// other devices.
    Collective,
    /// A host step that sorts the lanes of a materialized operand.
    Sort,
    /// A host step that factors or solves materialized matrices.
    Linalg,
    /// A host step that convolves materialized operands (im2col + gemm).
    Conv,
}

impl FusionKind {
    /// Run by the host between launches, on materialized operands.
    pub fn is_host_step(self) -> bool {
        matches!(
            self,
            FusionKind::Control
                | FusionKind::Collective
                | FusionKind::Sort
                | FusionKind::Linalg
                | FusionKind::Conv
        )
    }
}

impl Op {
    pub fn arity(&self) -> usize {
        match self {
            Op::Literal { .. } | Op::DimSize { .. } | Op::Iota { .. } => 0,
            Op::Unary(_)
            | Op::Special(_)
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
            | Op::Pad { .. }
            | Op::Argsort { .. } => 1,
            Op::Binary(_)
            | Op::Cmp(_)
            | Op::Dot
            | Op::DotGeneral(_)
            | Op::Gather { .. }
            | Op::ScatterAdd { .. }
            | Op::LinearScan { .. }
            | Op::Conv(_) => 2,
            Op::Select => 3,
            Op::Concatenate { operands, .. } => *operands,
            Op::Loop(l) => l.n_operands(),
            Op::LoopReverse(l) => l.fwd.n_operands() + l.n_r(),
            Op::Cond(c) => c.n_operands(),
            Op::Collective(c) => c.arity(),
            Op::Pmap(p) => p.n_operands(),
            Op::Custom(c) => c.n_operands(),
            Op::Linalg(op) => op.arity(),
        }
    }

    /// Shape and dtype rule: the type of every result.
    pub fn infer_all(&self, ins: &[&Type]) -> Result<Vec<Type>, String> {
        if ins.len() != self.arity() {
            return Err(format!(
                "{self} takes {} operands, got {}",
                self.arity(),
                ins.len()
            ));
        }
        let one = |t: Result<Type, String>| t.map(|t| vec![t]);
        match self {
            Op::Loop(l) => l.infer(ins),
            Op::LoopReverse(l) => l.infer(ins),
            Op::Cond(c) => c.infer(ins),
            Op::Pmap(p) => p.infer(ins),
            Op::Custom(c) => c.infer(ins),
            Op::Collective(c) => one(c.infer(ins)),
            Op::Unary(_) | Op::Special(_) => {
                if !ins[0].dtype.is_float() {
                    return Err(format!("{self} needs a float operand, got {}", ins[0]));
                }
                one(Ok(ins[0].clone()))
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
                one(Ok(Type::new(dtype, ins[0].shape.clone())))
            }
            Op::Select => {
                if ins[0].dtype != DType::Bool || ins[0].shape != ins[1].shape || ins[1] != ins[2] {
                    return Err(format!(
                        "select needs a bool predicate and two operands of its shape, got {}, {}, {}",
                        ins[0], ins[1], ins[2]
                    ));
                }
                one(Ok(ins[1].clone()))
            }
            Op::Literal { dtype, .. } => one(structural::literal_infer(*dtype)),
            Op::Broadcast { shape, dims } => one(structural::broadcast_infer(ins[0], shape, dims)),
            Op::ReduceSum { axes } => one(structural::reduce_sum_infer(ins[0], axes)),
            Op::Dot => one(structural::dot_infer(ins[0], ins[1])),
            Op::ReduceMax { axes } => one(reduce::reduce_infer("reduce_max", ins[0], axes)),
            Op::ReduceMin { axes } => one(reduce::reduce_infer("reduce_min", ins[0], axes)),
            Op::ReduceProd { axes } => one(reduce::reduce_infer("reduce_prod", ins[0], axes)),
            Op::LinearScan { axis, .. } => one(scan::linear_scan_infer(ins[0], ins[1], *axis)),
            Op::Transpose { perm } => one(layout::transpose_infer(ins[0], perm)),
            Op::Reshape { shape } => one(layout::reshape_infer(ins[0], shape)),
            Op::DotGeneral(d) => one(dot_general::dot_general_infer(ins[0], ins[1], d)),
            Op::Conv(p) => one(conv::conv_infer(ins[0], ins[1], p)),
            Op::StopGradient => one(Ok(ins[0].clone())),
            Op::Convert { dtype } => one(convert::convert_infer(ins[0], *dtype)),
            Op::Slice {
                shape,
                starts,
                steps,
            } => one(slicing::slice_infer(ins[0], shape, starts, steps)),
            Op::Pad {
                shape,
                starts,
                steps,
            } => one(slicing::pad_infer(ins[0], shape, starts, steps)),
            Op::Concatenate { axis, .. } => one(slicing::concatenate_infer(ins, *axis)),
            Op::Gather { axis, batch } => one(gather::gather_infer(ins[0], ins[1], *axis, *batch)),
            Op::Argsort { axis, k, .. } => one(sort::argsort_infer(ins[0], *axis, *k)),
            Op::Linalg(op) => one(op.infer(ins)),
            Op::ScatterAdd { axis, batch, shape } => one(gather::scatter_add_infer(
                ins[0], ins[1], *axis, *batch, shape,
            )),
            Op::DimSize { dtype, .. } => {
                if !dtype.is_float() {
                    return Err(format!("dim_size needs a float type, got {dtype}"));
                }
                one(Ok(Type::scalar(*dtype)))
            }
            Op::Iota { shape, axis, dtype } => {
                if !dtype.is_float() || *axis >= shape.rank() {
                    return Err(format!(
                        "iota needs a float type and an axis below the rank of {shape}, got {dtype} and {axis}"
                    ));
                }
                one(Ok(Type::new(*dtype, shape.clone())))
            }
        }
    }

    /// Whether the op's operands include functions (a loop's body, a
    /// cond's branches): fusion makes it a host step of the program.
    pub fn is_control(&self) -> bool {
        self.fusion_kind() == FusionKind::Control
    }

    /// Reference evaluation of every result; `out_shapes` are the results'
    /// concrete shapes and `env` binds the dimension symbols. A loop's error
    /// (its tape over the limit) is the only failure.
    pub fn eval(
        &self,
        ins: &[&Tensor],
        out_shapes: &[Vec<usize>],
        env: &BTreeMap<String, u64>,
    ) -> Result<Vec<Tensor>, String> {
        let map = |x: &Tensor, dtype: DType, g: &dyn Fn(usize) -> f64| Tensor {
            dtype,
            shape: x.shape.clone(),
            data: (0..x.numel()).map(|i| dtype.round(g(i))).collect(),
        };
        let out_shape = || &out_shapes[0][..];
        let one = |t: Tensor| Ok(vec![t]);
        match self {
            Op::Unary(op) => one(map(ins[0], ins[0].dtype, &|i| op.eval(ins[0].data[i]))),
            Op::Special(op) => one(map(ins[0], ins[0].dtype, &|i| op.eval(ins[0].data[i]))),
            Op::Binary(op) => one(map(ins[0], ins[0].dtype, &|i| {
                op.eval(ins[0].data[i], ins[1].data[i])
            })),
            Op::Cmp(op) => one(map(ins[0], DType::Bool, &|i| {
                op.eval(ins[0].data[i], ins[1].data[i]) as u8 as f64
            })),
            Op::Select => one(map(ins[1], ins[1].dtype, &|i| {
                if ins[0].data[i] != 0.0 {
                    ins[1].data[i]
                } else {
                    ins[2].data[i]
                }
            })),
            Op::Literal { value, dtype } => one(structural::literal_eval(*value, *dtype)),
            Op::Broadcast { dims, .. } => {
                one(structural::broadcast_eval(ins[0], out_shape(), dims))
            }
            Op::ReduceSum { axes } => one(structural::reduce_sum_eval(ins[0], axes)),
            Op::Dot => one(structural::dot_eval(ins[0], ins[1])),
            Op::StopGradient => one(ins[0].clone()),
            Op::Convert { dtype } => one(convert::convert_eval(ins[0], *dtype)),
            Op::DimSize { dim, dtype } => {
                let n = crate::shape::derived::eval(dim, &|s| env.get(s).copied())
                    .expect("dim_size of a bound symbol");
                one(Tensor::scalar(*dtype, n as f64))
            }
            Op::Iota { axis, dtype, .. } => {
                let shape = out_shape();
                let n: usize = shape.iter().product();
                let data = (0..n)
                    .map(|i| crate::tensor::unravel(i, shape)[*axis] as f64)
                    .collect();
                one(Tensor::new(*dtype, shape.to_vec(), data))
            }
            Op::ReduceMax { axes } => one(reduce::reduce_choose_eval(ins[0], axes, BinaryOp::Max)),
            Op::ReduceMin { axes } => one(reduce::reduce_choose_eval(ins[0], axes, BinaryOp::Min)),
            Op::ReduceProd { axes } => one(scan::reduce_prod_eval(ins[0], axes)),
            Op::LinearScan { axis, reverse } => {
                one(scan::linear_scan_eval(ins[0], ins[1], *axis, *reverse))
            }
            Op::Loop(l) => l.eval(ins),
            Op::LoopReverse(l) => l.eval(ins),
            Op::Cond(c) => c.eval(ins),
            Op::Pmap(p) => p.eval(ins),
            Op::Custom(c) => c.eval(ins),
            Op::Collective(c) => Err(format!(
                "`{c}` runs outside every pmap and vmap over the axis `{}`",
                c.axis
            )),
            Op::Transpose { perm } => one(layout::transpose_eval(ins[0], perm)),
            Op::Argsort {
                axis,
                descending,
                k,
            } => sort::argsort_eval(ins[0], *axis, *descending, *k).map(|t| vec![t]),
            Op::Linalg(op) => one(op.eval(ins)),
            Op::Reshape { .. } => one(layout::reshape_eval(ins[0], out_shape())),
            Op::DotGeneral(d) => one(dot_general::dot_general_eval(ins[0], ins[1], d)),
            Op::Conv(p) => one(conv::conv_eval(ins[0], ins[1], p, out_shape())),
            Op::Slice { starts, steps, .. } => {
                one(slicing::slice_eval(ins[0], out_shape(), starts, steps, env))
            }
            Op::Pad { starts, steps, .. } => {
                one(slicing::pad_eval(ins[0], out_shape(), starts, steps, env))
            }
            Op::Concatenate { axis, .. } => one(slicing::concatenate_eval(ins, *axis, out_shape())),
            Op::Gather { axis, batch } => one(gather::gather_eval(
                ins[0],
                ins[1],
                *axis,
                *batch,
                out_shape(),
            )),
            Op::ScatterAdd { axis, batch, .. } => one(gather::scatter_add_eval(
                ins[0],
                ins[1],
                *axis,
                *batch,
                out_shape(),
            )),
        }
    }

    /// JVP rule: the primal results and their tangents (`None`: a symbolic
    /// zero), given the operands' tangents `t` (`None`: zero). A single-result
    /// op gives its tangent as a function of its primal result, which is
    /// pushed first; a control op builds both itself.
    pub fn jvp(
        &self,
        f: &mut Function,
        ins: &[Var],
        t: &[Option<Var>],
    ) -> (Vec<Var>, Vec<Option<Var>>) {
        let tangent: TangentRule = match self {
            Op::Loop(l) => return control::loop_jvp(f, l, ins, t),
            Op::LoopReverse(l) => return control::reverse_jvp(f, l, ins, t),
            Op::Cond(c) => return control::cond_jvp(f, c, ins, t),
            Op::Pmap(p) => return control::pmap_jvp(f, p, ins, t),
            Op::Custom(c) => return control::custom_jvp(f, c, ins, t),
            Op::Collective(c) => rule(move |f, out| match (ins.first(), t.first()) {
                (Some(x), Some(Some(t))) => c.jvp(f, *x, out, *t),
                _ => None,
            }),
            Op::Unary(op) => rule(move |f, out| t[0].and_then(|t| op.jvp(f, ins[0], out, t))),
            Op::Special(op) => rule(move |f, out| t[0].map(|t| op.jvp(f, ins[0], out, t))),
            Op::Binary(op) => rule(move |f, out| op.jvp(f, ins[0], ins[1], out, t[0], t[1])),
            Op::Linalg(op) => rule(move |f, out| op.jvp(f, ins, out, t)),
            Op::Cmp(_)
            | Op::Literal { .. }
            | Op::StopGradient
            | Op::DimSize { .. }
            | Op::Iota { .. }
            | Op::Argsort { .. } => rule(|_, _| None),
            Op::Select => rule(move |f, _| {
                if t[1].is_none() && t[2].is_none() {
                    return None;
                }
                let a = t[1].unwrap_or_else(|| f.zeros_like(ins[1]));
                let b = t[2].unwrap_or_else(|| f.zeros_like(ins[2]));
                Some(f.select(ins[0], a, b))
            }),
            Op::Broadcast { dims, .. } => {
                rule(move |f, out| t[0].map(|t| structural::broadcast_jvp(f, out, dims, t)))
            }
            Op::ReduceSum { axes } => rule(move |f, _| t[0].map(|t| f.reduce_sum(t, axes.clone()))),
            Op::Dot => rule(move |f, _| structural::dot_jvp(f, ins[0], ins[1], t[0], t[1])),
            Op::Convert { dtype } => {
                rule(move |f, _| t[0].and_then(|t| convert::convert_jvp(f, ins[0], *dtype, t)))
            }
            Op::ReduceMax { axes } | Op::ReduceMin { axes } => {
                rule(move |f, out| t[0].map(|t| reduce::reduce_choose_jvp(f, ins[0], out, axes, t)))
            }
            Op::Transpose { perm } => {
                rule(move |f, _| t[0].map(|t| layout::transpose(f, t, perm.clone())))
            }
            Op::Reshape { shape } => {
                rule(move |f, _| t[0].map(|t| layout::reshape(f, t, shape.clone())))
            }
            Op::DotGeneral(d) => {
                rule(move |f, _| dot_general::dot_general_jvp(f, ins[0], ins[1], d, t[0], t[1]))
            }
            Op::Conv(p) => rule(move |f, _| conv::conv_jvp(f, ins[0], ins[1], p, t[0], t[1])),
            Op::Slice {
                shape,
                starts,
                steps,
            } => rule(move |f, _| {
                t[0].map(|t| slicing::slice(f, t, shape.clone(), starts.clone(), steps.clone()))
            }),
            Op::Pad {
                shape,
                starts,
                steps,
            } => rule(move |f, _| {
                t[0].map(|t| slicing::pad(f, t, shape.clone(), starts.clone(), steps.clone()))
            }),
            Op::Concatenate { axis, .. } => {
                rule(move |f, _| slicing::concatenate_jvp(f, ins, *axis, t))
            }
            // Linear in the float operand, with the same indices.
            Op::Gather { axis, batch } => {
                rule(move |f, _| t[0].map(|t| gather::gather(f, t, ins[1], *axis, *batch)))
            }
            Op::ScatterAdd { axis, batch, shape } => rule(move |f, _| {
                t[0].map(|t| gather::scatter_add(f, t, ins[1], *axis, *batch, shape.clone()))
            }),
            Op::ReduceProd { axes } => {
                rule(move |f, _| t[0].map(|t| scan::reduce_prod_jvp(f, ins[0], axes, t)))
            }
            Op::LinearScan { axis, reverse } => {
                rule(move |f, out| scan::linear_scan_jvp(f, ins, out, *axis, *reverse, t))
            }
        };
        let out = f
            .push(self.clone(), ins)
            .unwrap_or_else(|e| panic!("internal error: the primal of {self}'s JVP: {e}"));
        let t = tangent(f, out);
        (vec![out], vec![t])
    }

    /// Which results may get a nonzero tangent when the operands with
    /// `ins[k]` have one (`transforms::zeros`): not through a comparison,
    /// `stop_gradient`, a constant, a rounding or sign op, a select's
    /// predicate or a gather's indices; a cond's per result from its
    /// branches; a loop's by a fixpoint over its carries.
    pub fn tangent_reach(&self, ins: &[bool]) -> Vec<bool> {
        use crate::transforms::zeros::{loop_tangent_reach, tangent_reach};
        let one = |on: bool| vec![on];
        match self {
            Op::Cond(c) => {
                let [a, b] = c.branches().map(|br| tangent_reach(br, &ins[1..]));
                a.iter().zip(&b).map(|(x, y)| *x || *y).collect()
            }
            Op::Loop(l) => {
                let (_, carries) = loop_tangent_reach(l, ins);
                l.results.iter().map(|r| carries[*r]).collect()
            }
            Op::LoopReverse(l) => vec![true; l.results.len()],
            Op::Pmap(p) => tangent_reach(&p.body, ins),
            Op::Custom(c) => c.tangent_reach(ins),
            Op::Cmp(_)
            | Op::Literal { .. }
            | Op::DimSize { .. }
            | Op::Iota { .. }
            | Op::Argsort { .. }
            | Op::StopGradient
            | Op::Collective(Collective {
                kind: collective::CollectiveKind::AxisIndex { .. },
                ..
            })
            | Op::Unary(UnaryOp::Round(_) | UnaryOp::Sign | UnaryOp::Signum) => one(false),
            Op::Select => one(ins[1] || ins[2]),
            Op::Linalg(op) => one(op.has_tangent() && ins.iter().any(|x| *x)),
            Op::Gather { .. } | Op::ScatterAdd { .. } => one(ins[0]),
            _ => one(ins.iter().any(|x| *x)),
        }
    }

    /// Which operands a cotangent on the results with `outs[k]` reaches
    /// (`transforms::zeros`): a cond's, what its branches read for those
    /// results (not its predicate); a loop's, what its body reads for the
    /// carries a cotangent reaches at any step (never its bounds); any other
    /// op's, all of them (only the linear ones' answers mean anything).
    pub fn cotangent_reach(&self, outs: &[bool]) -> Vec<bool> {
        use crate::transforms::zeros::{cotangent_reach, loop_cotangent_reach};
        match self {
            Op::Cond(c) => {
                let [a, b] = c.branches().map(|br| cotangent_reach(br, outs));
                std::iter::once(false)
                    .chain(a.iter().zip(&b).map(|(x, y)| *x || *y))
                    .collect()
            }
            Op::Loop(l) => {
                let mut results = vec![false; l.n_carries()];
                for (k, on) in l.results.iter().zip(outs) {
                    results[*k] |= *on;
                }
                let (consts, carries) = loop_cotangent_reach(l, &results);
                vec![false; l.n_bounds()]
                    .into_iter()
                    .chain(consts)
                    .chain(carries)
                    .collect()
            }
            Op::Pmap(p) => cotangent_reach(&p.body, outs),
            _ => vec![true; self.arity()],
        }
    }

    /// Whether the op may have a linear (tangent-carrying) operand `i`;
    /// `transpose` must handle exactly these.
    pub fn is_linear_in(&self, i: usize) -> bool {
        match self {
            Op::Unary(op) => op.is_linear(),
            Op::Special(_) => false,
            Op::Binary(op) => op.linear_in(i),
            Op::Cmp(_)
            | Op::Literal { .. }
            | Op::DimSize { .. }
            | Op::Iota { .. }
            | Op::StopGradient
            | Op::ReduceMax { .. }
            | Op::ReduceMin { .. }
            | Op::ReduceProd { .. }
            | Op::Argsort { .. } => false,
            Op::Select => i > 0,
            Op::LinearScan { .. } => i == 1,
            Op::Linalg(op) => op.is_linear_in(i),
            Op::Loop(l) => l.is_linear_in(i),
            Op::Cond(c) => c.is_linear_in(i),
            Op::Pmap(p) => p.is_linear_in(i),
            Op::Custom(c) => c.is_linear_in(i),
            Op::Collective(c) => c.is_linear(),
            // The JVP of a gradient sweep, in its tangents.
            Op::LoopReverse(l) => l.is_linear_in(i),
            Op::Broadcast { .. }
            | Op::ReduceSum { .. }
            | Op::Dot
            | Op::Transpose { .. }
            | Op::Reshape { .. }
            | Op::DotGeneral(_)
            | Op::Conv(_)
            | Op::Convert { .. }
            | Op::Slice { .. }
            | Op::Pad { .. }
            | Op::Concatenate { .. } => true,
            // The indices carry no derivative.
            Op::Gather { .. } | Op::ScatterAdd { .. } => i == 0,
        }
    }

    /// Transpose rule: the cotangents of the linear operands (`None`: a
    /// symbolic zero) given each result's cotangent `cts` (`None`: zero; not
    /// all of them). `known[i]` is `Some(value)` for operands that are
    /// constants of the linear map and `None` for linear ones; `types[i]` is
    /// each operand's type.
    pub fn transpose(
        &self,
        f: &mut Function,
        known: &[Option<Var>],
        types: &[Type],
        cts: &[Option<Var>],
    ) -> Vec<Option<Var>> {
        // Linear only as a gradient sweep's JVP; any other is refused there
        // with a message, not the assertion below.
        if let Op::LoopReverse(l) = self {
            return control::reverse_transpose(f, l, known, cts);
        }
        for (k, v) in known.iter().enumerate() {
            assert!(
                v.is_some() || self.is_linear_in(k),
                "internal error: `{self}` is not linear in operand {k}"
            );
        }
        // A single result's cotangent (it has one: not all are zero).
        let ct = || cts[0].expect("internal error: a transpose without cotangents");
        match self {
            Op::Unary(UnaryOp::Neg) => vec![Some(f.neg(ct()))],
            Op::Binary(op) => op.transpose(f, [known[0], known[1]], ct()).to_vec(),
            Op::Select => {
                let p = known[0].expect("internal error: select predicate must be known");
                let zero = f.zeros_like(ct());
                let a = known[1].is_none().then(|| f.select(p, ct(), zero));
                let b = known[2].is_none().then(|| f.select(p, zero, ct()));
                vec![None, a, b]
            }
            Op::Broadcast { dims, shape } => vec![Some(structural::broadcast_transpose(
                f,
                shape.rank(),
                dims,
                ct(),
            ))],
            Op::ReduceSum { axes } => vec![Some(structural::reduce_sum_transpose(
                f,
                &types[0],
                axes,
                ct(),
            ))],
            Op::Dot => match (known[0], known[1]) {
                (None, Some(b)) => vec![Some(structural::dot_transpose(f, b, ct())), None],
                (Some(a), None) => vec![None, Some(structural::dot_transpose(f, a, ct()))],
                _ => panic!("internal error: dot transposed with both or neither operand linear"),
            },
            Op::Transpose { perm } => vec![Some(layout::transpose_transpose(f, perm, ct()))],
            Op::Reshape { .. } => vec![Some(layout::reshape(f, ct(), types[0].shape.clone()))],
            Op::Convert { .. } => vec![Some(convert::convert_transpose(f, &types[0], ct()))],
            Op::Slice { starts, steps, .. } => vec![Some(slicing::pad(
                f,
                ct(),
                types[0].shape.clone(),
                starts.clone(),
                steps.clone(),
            ))],
            Op::Pad { starts, steps, .. } => vec![Some(slicing::slice(
                f,
                ct(),
                types[0].shape.clone(),
                starts.clone(),
                steps.clone(),
            ))],
            Op::Concatenate { axis, .. } => {
                slicing::concatenate_transpose(f, known, types, *axis, ct())
            }
            Op::Gather { axis, batch } => {
                let idx = known[1].expect("internal error: gather indices must be known");
                let shape = types[0].shape.clone();
                vec![
                    Some(gather::scatter_add(f, ct(), idx, *axis, *batch, shape)),
                    None,
                ]
            }
            Op::ScatterAdd { axis, batch, .. } => {
                let idx = known[1].expect("internal error: scatter_add indices must be known");
                vec![Some(gather::gather(f, ct(), idx, *axis, *batch)), None]
            }
            Op::Linalg(op) => {
                let a = known[0].expect("internal error: a solve's matrix must be known");
                vec![None, Some(op.transpose(f, a, ct()))]
            }
            Op::LinearScan { axis, reverse } => {
                let a = known[0].expect("internal error: linear_scan's `a` must be known");
                vec![
                    None,
                    Some(scan::linear_scan_transpose(f, a, ct(), *axis, *reverse)),
                ]
            }
            Op::DotGeneral(d) => match (known[0], known[1]) {
                (None, Some(b)) => vec![
                    Some(dot_general::dot_general_transpose(
                        f,
                        d,
                        true,
                        &types[0],
                        b,
                        ct(),
                    )),
                    None,
                ],
                (Some(a), None) => vec![
                    None,
                    Some(dot_general::dot_general_transpose(
                        f,
                        d,
                        false,
                        &types[1],
                        a,
                        ct(),
                    )),
                ],
                _ => panic!(
                    "internal error: dot_general transposed with both or neither operand linear"
                ),
            },
            Op::Conv(p) => match (known[0], known[1]) {
                (None, Some(w)) => vec![
                    Some(conv::conv_transpose_lhs(f, p, &types[0], w, ct())),
                    None,
                ],
                (Some(x), None) => vec![
                    None,
                    Some(conv::conv_transpose_rhs(f, p, &types[1], x, ct())),
                ],
                _ => panic!("internal error: conv transposed with both or neither operand linear"),
            },
            Op::Unary(_)
            | Op::Special(_)
            | Op::Cmp(_)
            | Op::Literal { .. }
            | Op::DimSize { .. }
            | Op::Iota { .. }
            | Op::StopGradient
            | Op::ReduceMax { .. }
            | Op::ReduceMin { .. }
            | Op::ReduceProd { .. }
            | Op::Argsort { .. }
            | Op::LoopReverse(_) => {
                panic!("internal error: {self} is not linear")
            }
            Op::Loop(l) => control::loop_transpose(f, l, known, cts),
            Op::Cond(c) => control::cond_transpose(f, c, known, cts),
            Op::Pmap(p) => control::pmap_transpose(f, p, known, cts),
            Op::Custom(c) => control::custom_transpose(f, c, known, cts),
            Op::Collective(c) => vec![Some(c.transpose(f, ct()))],
        }
    }

    /// Batching rule: the op applied to operands of which `batched[i]` carry
    /// a leading batch axis of size `axis.size` (at least one does, unless
    /// the op has a collective over `axis.name`); every result carries it
    /// too.
    pub fn batch(
        &self,
        f: &mut Function,
        ins: &[Var],
        batched: &[bool],
        axis: &BatchAxis,
    ) -> Vec<Var> {
        let size = &axis.size;
        let one = |v: Var| vec![v];
        match self {
            Op::Unary(_)
            | Op::Special(_)
            | Op::Binary(_)
            | Op::Cmp(_)
            | Op::Select
            | Op::StopGradient
            | Op::Convert { .. } => {
                let ins = f.batch_all(ins, batched, size);
                one(f
                    .push(self.clone(), &ins)
                    .expect("internal error: batching an elementwise op"))
            }
            Op::Literal { .. } | Op::DimSize { .. } | Op::Iota { .. } => {
                panic!("internal error: {self} has no operand to batch")
            }
            Op::ReduceMax { axes } => one(f
                .push(
                    Op::ReduceMax {
                        axes: reduce::shift_axes(axes),
                    },
                    ins,
                )
                .expect("internal error: batching reduce_max")),
            Op::ReduceMin { axes } => one(f
                .push(
                    Op::ReduceMin {
                        axes: reduce::shift_axes(axes),
                    },
                    ins,
                )
                .expect("internal error: batching reduce_min")),
            Op::ReduceProd { axes } => one(scan::reduce_prod(f, ins[0], reduce::shift_axes(axes))),
            Op::LinearScan { axis, reverse } => one(scan::linear_scan_batch(
                f, ins, batched, *axis, *reverse, size,
            )),
            Op::Loop(l) => control::loop_batch(f, l, ins, batched, axis),
            Op::LoopReverse(l) => control::reverse_batch(f, l, ins, batched, axis),
            Op::Cond(c) => control::cond_batch(f, c, ins, batched, axis),
            Op::Pmap(p) => control::pmap_batch(f, p, ins, batched, axis),
            Op::Custom(c) => control::custom_batch(f, c, ins, batched, axis),
            Op::Collective(c) => one(c.batch(f, ins, axis)),
            Op::Transpose { perm } => one(layout::transpose_batch(f, ins[0], perm)),
            Op::Argsort {
                axis,
                descending,
                k,
            } => one(sort::argsort_batch(f, ins[0], *axis, *descending, *k)),
            Op::Reshape { shape } => one(layout::reshape_batch(f, ins[0], shape, size)),
            Op::Linalg(op) => one(op.batch(f, ins, batched, axis)),
            Op::DotGeneral(d) => one(dot_general::dot_general_batch(
                f, ins[0], ins[1], d, batched,
            )),
            Op::Conv(p) => one(conv::conv_batch(f, ins[0], ins[1], p, batched)),
            Op::Broadcast { shape, dims } => {
                one(structural::broadcast_batch(f, ins[0], shape, dims, size))
            }
            Op::ReduceSum { axes } => one(f.reduce_sum(ins[0], reduce::shift_axes(axes))),
            Op::Dot => one(structural::dot_batch(f, ins[0], ins[1], batched, size)),
            Op::Slice {
                shape,
                starts,
                steps,
            } => one(slicing::slice_batch(f, ins[0], shape, starts, steps, size)),
            Op::Pad {
                shape,
                starts,
                steps,
            } => one(slicing::pad_batch(f, ins[0], shape, starts, steps, size)),
            Op::Concatenate { axis, .. } => {
                one(slicing::concatenate_batch(f, ins, batched, *axis, size))
            }
            Op::Gather { axis, batch } => {
                one(gather::gather_batch(f, ins, batched, *axis, *batch, size))
            }
            Op::ScatterAdd { axis, batch, shape } => one(gather::scatter_add_batch(
                f, ins, batched, *axis, *batch, shape, size,
            )),
        }
    }

    /// Whether the op runs a collective over the axis `name` that no pmap
    /// inside it binds (a named vmap batches such an op even when none of
    /// its operands is batched).
    pub fn uses_axis(&self, name: &str) -> bool {
        match self {
            Op::Collective(c) => c.axis == name,
            Op::Pmap(p) => p.axis != name && function_uses_axis(&p.body, name),
            op => crate::text::nested_functions(op)
                .iter()
                .any(|g| function_uses_axis(g, name)),
        }
    }

    /// How fusion treats the op (see `FusionKind`).
    pub fn fusion_kind(&self) -> FusionKind {
        match self {
            Op::Unary(_)
            | Op::Special(_)
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
            Op::Loop(_) | Op::LoopReverse(_) | Op::Cond(_) | Op::Pmap(_) | Op::Custom(_) => {
                FusionKind::Control
            }
            Op::Collective(_) => FusionKind::Collective,
            Op::Argsort { .. } => FusionKind::Sort,
            Op::Linalg(_) => FusionKind::Linalg,
            Op::Conv(_) => FusionKind::Conv,
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
            Op::Special(op) => f.write_str(op.name()),
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
            Op::Conv(p) => write!(f, "conv[{}]", p.text()),
            Op::StopGradient => f.write_str("stop_gradient"),
            Op::Convert { .. } => f.write_str("convert"),
            Op::DimSize { dim, .. } => write!(f, "dim_size[{dim}]"),
            Op::Iota { axis, .. } => write!(f, "iota[{axis}]"),
            Op::Argsort {
                axis,
                descending,
                k,
            } => {
                let dir = if *descending { "desc" } else { "asc" };
                match k {
                    Some(k) => write!(f, "argsort[{axis},{dir},{k}]"),
                    None => write!(f, "argsort[{axis},{dir}]"),
                }
            }
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
            Op::Pmap(p) => f.write_str(&p.header()),
            Op::Custom(c) => f.write_str(&c.header()),
            Op::Collective(c) => write!(f, "{c}"),
            Op::Linalg(op) => write!(f, "{op}"),
        }
    }
}

/// Whether an equation of `f` uses the axis `name` (`Op::uses_axis`).
pub fn function_uses_axis(f: &Function, name: &str) -> bool {
    f.eqns.iter().any(|e| e.op.uses_axis(name))
}

/// A single-result op's tangent, given its primal result.
type TangentRule<'a> = Box<dyn Fn(&mut Function, Var) -> Option<Var> + 'a>;

/// Boxes a tangent rule (naming its argument types once).
fn rule<'a>(r: impl Fn(&mut Function, Var) -> Option<Var> + 'a) -> TangentRule<'a> {
    Box::new(r)
}
