//! Collectives over a named axis (JAX's `lax.psum`, `pmax`, `pmin`,
//! `all_gather`, `psum_scatter`, `ppermute`, `all_to_all`, `axis_index`):
//! shape rule, JVP, transpose and batching side by side.
//!
//! A collective names the axis of an enclosing `pmap` (`control::Pmap`) or
//! named `vmap` (`transforms::vmap::BatchAxis`). Its meaning is JAX's, and
//! its batching rule is that meaning: under the vmap that binds its axis, a
//! collective is an operation over the batch (`psum` sums it); under any
//! other batch it is the same collective on the batched operand. A `pmap`
//! is evaluated, in the reference interpreter, as the named vmap of its
//! body (`control::Pmap::eval`), so a collective itself has no evaluation:
//! one reached outside every binder of its axis is an error. On devices
//! the per-device program runs it as a host step (`exec`).
//!
//! The size of an axis is the dimension symbol `axis_dim(name)`, bound to
//! the number of devices when a pmap runs its body, and the batch size of
//! a named vmap: `axis_size(name)` is a `dim_size` of it, and a gathered
//! axis has it as its extent.
//!
//! Derivatives (JAX's): `psum`, `all_gather`, `psum_scatter`, `ppermute` and
//! `all_to_all` are linear; their transposes are `psum`, `psum_scatter`,
//! `all_gather`, the inverse permutation and `all_to_all` with the split
//! and concatenation axes swapped. `pmax`/`pmin` take the chooser JVP
//! (`reduce_max`'s): the tangent averaged over the devices whose value is
//! the result, itself made of `psum`s. `axis_index` has no derivative.

use crate::dtype::DType;
use crate::ir::{Function, Type, Var};
use crate::ops::elementwise::CmpOp;
use crate::ops::layout::{move_axis_perm, reshape, transpose};
use crate::ops::slicing::slice;
use crate::ops::Op;
use crate::shape::{Dim, Shape};
use crate::transforms::vmap::BatchAxis;
use std::collections::BTreeSet;
use std::fmt;

/// The dimension symbol of the axis `name`: its size (the number of
/// devices of a pmap, the batch of a named vmap).
pub fn axis_dim(name: &str) -> Dim {
    Dim::Sym(format!("{AXIS_PREFIX}{name}"))
}

/// What `axis_dim` puts before an axis name.
pub const AXIS_PREFIX: &str = "axis__";

/// Which collective.
#[derive(Clone, Debug, PartialEq)]
pub enum CollectiveKind {
    /// The sum over the axis, on every device.
    Psum,
    /// The max over the axis (NaN-propagating, as `maximum`).
    Pmax,
    /// The min over the axis.
    Pmin,
    /// Every device's operand, stacked along a new axis `axis`.
    AllGather { axis: usize },
    /// The sum over the axis of the operand, whose axis `axis` has the
    /// axis's size; device `d` keeps entry `d` of it (the axis removed).
    PsumScatter { axis: usize },
    /// `(source, destination)` pairs: a device named as a destination gets
    /// its source's operand, any other zeros.
    Ppermute { perm: Vec<(usize, usize)> },
    /// Axis `split` (of the axis's size) is split across the devices:
    /// device `j` gets entry `j` from each device, stacked along a new axis
    /// `concat` (of the result, after `split` is removed).
    AllToAll { split: usize, concat: usize },
    /// This device's index along the axis, a scalar of `dtype`.
    AxisIndex { dtype: DType },
}

/// A collective over the axis named `axis`, whose size is `size`: the
/// axis's symbol `axis_dim(axis)`, or the extent the function's own shapes
/// give it (`unify_axis`: a `psum_scatter` of a `[4]` operand needs 4
/// devices).
#[derive(Clone, Debug, PartialEq)]
pub struct Collective {
    pub kind: CollectiveKind,
    pub axis: String,
    pub size: Dim,
}

impl Collective {
    /// `kind` over `axis`, of the axis's own size.
    pub fn new(kind: CollectiveKind, axis: &str) -> Collective {
        Collective {
            kind,
            axis: axis.to_string(),
            size: axis_dim(axis),
        }
    }

    pub fn arity(&self) -> usize {
        match self.kind {
            CollectiveKind::AxisIndex { .. } => 0,
            _ => 1,
        }
    }

    /// The shape rule.
    pub fn infer(&self, ins: &[&Type]) -> Result<Type, String> {
        use CollectiveKind::*;
        if let AxisIndex { dtype } = self.kind {
            return Ok(Type::scalar(dtype));
        }
        let x = ins[0];
        if !x.dtype.is_float() {
            return Err(format!("{self} needs a float operand, got {x}"));
        }
        let rank = x.shape.rank();
        let mut dims = x.shape.0.clone();
        match &self.kind {
            Psum | Pmax | Pmin => {}
            AllGather { axis } => {
                if *axis > rank {
                    return Err(format!("{self}: axis {axis} is past the rank of {x}"));
                }
                dims.insert(*axis, self.size.clone());
            }
            PsumScatter { axis } => {
                if *axis >= rank {
                    return Err(format!("{self}: axis {axis} is not an axis of {x}"));
                }
                dims.remove(*axis);
            }
            Ppermute { perm } => check_perm(perm).map_err(|e| format!("{self}: {e}"))?,
            AllToAll { split, concat } => {
                if *split >= rank || *concat >= rank {
                    return Err(format!(
                        "{self}: split axis {split} and concat axis {concat} must be axes of {x}"
                    ));
                }
                dims.remove(*split);
                dims.insert(*concat, self.size.clone());
            }
            AxisIndex { .. } => unreachable!(),
        }
        Ok(Type::new(x.dtype, Shape(dims)))
    }

    /// Linear in its operand (everything but the choosers and the index).
    pub fn is_linear(&self) -> bool {
        use CollectiveKind::*;
        !matches!(self.kind, Pmax | Pmin | AxisIndex { .. })
    }

    /// This collective on another operand (the same axis).
    fn with(&self, kind: CollectiveKind) -> Collective {
        Collective {
            kind,
            axis: self.axis.clone(),
            size: self.size.clone(),
        }
    }

    fn push(&self, f: &mut Function, x: Var) -> Var {
        f.push(Op::Collective(self.clone()), &[x])
            .unwrap_or_else(|e| panic!("internal error: {self}: {e}"))
    }

    /// The JVP: the tangent of `out = self(x)` for the tangent `t` of `x`.
    pub fn jvp(&self, f: &mut Function, x: Var, out: Var, t: Var) -> Option<Var> {
        use CollectiveKind::*;
        match &self.kind {
            AxisIndex { .. } => None,
            // JAX's chooser rule, across devices: the tangent averaged over
            // the devices whose operand equals the result.
            Pmax | Pmin => {
                let psum = self.with(Psum);
                let hit = f.cmp(CmpOp::Eq, x, out);
                let zero = f.zeros_like(t);
                let one = f.full_like(1.0, t);
                let picked = f.select(hit, t, zero);
                let count = f.select(hit, one, zero);
                let num = psum.push(f, picked);
                let den = psum.push(f, count);
                Some(f.div(num, den))
            }
            _ => Some(self.push(f, t)),
        }
    }

    /// The transpose of a linear collective: the cotangent of its operand.
    pub fn transpose(&self, f: &mut Function, ct: Var) -> Var {
        use CollectiveKind::*;
        let kind = match &self.kind {
            Psum => Psum,
            AllGather { axis } => PsumScatter { axis: *axis },
            PsumScatter { axis } => AllGather { axis: *axis },
            Ppermute { perm } => Ppermute {
                perm: perm.iter().map(|(s, d)| (*d, *s)).collect(),
            },
            AllToAll { split, concat } => AllToAll {
                split: *concat,
                concat: *split,
            },
            Pmax | Pmin | AxisIndex { .. } => panic!("internal error: {self} is not linear"),
        };
        self.with(kind).push(f, ct)
    }

    /// The batching rule, the operand (if any) batched along axis 0.
    pub fn batch(&self, f: &mut Function, ins: &[Var], axis: &BatchAxis) -> Var {
        if axis.name.as_deref() == Some(&self.axis) {
            return self.over_batch(f, ins, &axis.size);
        }
        // Another axis: the same collective, every axis one further in.
        use CollectiveKind::*;
        let kind = match &self.kind {
            AllGather { axis } => AllGather { axis: axis + 1 },
            PsumScatter { axis } => PsumScatter { axis: axis + 1 },
            AllToAll { split, concat } => AllToAll {
                split: split + 1,
                concat: concat + 1,
            },
            k => k.clone(),
        };
        self.with(kind).push(f, ins[0])
    }

    /// The collective over the batch it names, the batch along axis 0 of
    /// size `size` (example `e` is device `e`).
    fn over_batch(&self, f: &mut Function, ins: &[Var], size: &Dim) -> Var {
        use CollectiveKind::*;
        let same_everywhere = |f: &mut Function, v: Var| f.broadcast_batch(v, size);
        match &self.kind {
            AxisIndex { dtype } => {
                let shape = Shape(vec![size.clone()]);
                let i = f
                    .push(
                        Op::Iota {
                            shape,
                            axis: 0,
                            dtype: DType::F64,
                        },
                        &[],
                    )
                    .expect("internal error: axis_index's iota");
                if *dtype == DType::F64 {
                    i
                } else {
                    f.push(Op::Convert { dtype: *dtype }, &[i])
                        .expect("internal error: axis_index's convert")
                }
            }
            Psum => {
                let s = f.reduce_sum(ins[0], vec![0]);
                same_everywhere(f, s)
            }
            Pmax | Pmin => {
                let op = if self.kind == Pmax {
                    Op::ReduceMax { axes: vec![0] }
                } else {
                    Op::ReduceMin { axes: vec![0] }
                };
                let m = f
                    .push(op, &[ins[0]])
                    .expect("internal error: pmax's reduction");
                same_everywhere(f, m)
            }
            // Every example sees the whole batch, its axis at `axis`.
            AllGather { axis } => {
                let rank = f.shape(ins[0]).rank();
                let all = transpose(f, ins[0], move_axis_perm(rank, 0, *axis));
                same_everywhere(f, all)
            }
            // Summed over the batch; entry `e` of `axis` is example `e`'s.
            PsumScatter { axis } => {
                let s = f.reduce_sum(ins[0], vec![0]);
                let rank = f.shape(s).rank();
                transpose(f, s, move_axis_perm(rank, *axis, 0))
            }
            // Example `d` takes example `s`'s operand for each pair (s, d).
            Ppermute { perm } => {
                let x = ins[0];
                let ty = f.ty(x).clone();
                let mut acc = f.zeros_like(x);
                let iota = f
                    .push(
                        Op::Iota {
                            shape: ty.shape.clone(),
                            axis: 0,
                            dtype: ty.dtype,
                        },
                        &[],
                    )
                    .expect("internal error: ppermute's iota");
                for (s, d) in perm {
                    let one_shape = {
                        let mut dims = ty.shape.0.clone();
                        dims[0] = Dim::Const(1);
                        Shape(dims)
                    };
                    let mut starts = vec![Dim::Const(0); ty.shape.rank()];
                    starts[0] = Dim::Const(*s as u64);
                    let steps = vec![1; ty.shape.rank()];
                    let row = slice(f, x, one_shape, starts, steps);
                    let row = reshape(f, row, Shape(ty.shape.0[1..].to_vec()));
                    let row = same_everywhere(f, row);
                    let dst = f.full(*d as f64, ty.dtype, &ty.shape);
                    let here = f.cmp(CmpOp::Eq, iota, dst);
                    acc = f.select(here, row, acc);
                }
                acc
            }
            // Result `e`, at `j` along `concat`, is example `j`'s entry `e`
            // along `split`.
            AllToAll { split, concat } => {
                let rank = f.shape(ins[0]).rank();
                let rest: Vec<usize> = (1..rank).filter(|a| *a != split + 1).collect();
                let mut perm = vec![split + 1];
                let mut tail = rest;
                tail.insert(*concat, 0);
                perm.extend(tail);
                transpose(f, ins[0], perm)
            }
        }
    }

    /// The text form's argument list after the op's name.
    fn text_args(&self) -> String {
        use CollectiveKind::*;
        let a = if self.size == axis_dim(&self.axis) {
            self.axis.clone()
        } else {
            format!("{}:{}", self.axis, self.size)
        };
        match &self.kind {
            Psum | Pmax | Pmin | AxisIndex { .. } => a,
            AllGather { axis } | PsumScatter { axis } => format!("{a},{axis}"),
            Ppermute { perm } => {
                let pairs: Vec<String> = perm.iter().map(|(s, d)| format!("{s}>{d}")).collect();
                format!("{a};{}", pairs.join(";"))
            }
            AllToAll { split, concat } => format!("{a},{split},{concat}"),
        }
    }

    pub fn op_name(&self) -> &'static str {
        use CollectiveKind::*;
        match self.kind {
            Psum => "psum",
            Pmax => "pmax",
            Pmin => "pmin",
            AllGather { .. } => "all_gather",
            PsumScatter { .. } => "psum_scatter",
            Ppermute { .. } => "ppermute",
            AllToAll { .. } => "all_to_all",
            AxisIndex { .. } => "axis_index",
        }
    }

    /// Parse the text form (`psum[i]`, `all_gather[i,0]`,
    /// `ppermute[i;0>1;1>0]`, `all_to_all[i,0,1]`); `out` is the result's
    /// type (`axis_index`'s dtype).
    pub fn from_text(name: &str, arg: &str, out: &Type) -> Option<Collective> {
        use CollectiveKind::*;
        let num = |s: &str| s.trim().parse::<usize>().ok();
        let parts: Vec<&str> = arg.split(',').collect();
        let (axis, kind) = match name {
            "psum" | "pmax" | "pmin" | "axis_index" => (
                arg,
                match name {
                    "psum" => Psum,
                    "pmax" => Pmax,
                    "pmin" => Pmin,
                    _ => AxisIndex { dtype: out.dtype },
                },
            ),
            "all_gather" | "psum_scatter" => {
                let [a, k] = parts[..] else { return None };
                let axis = num(k)?;
                let kind = if name == "all_gather" {
                    AllGather { axis }
                } else {
                    PsumScatter { axis }
                };
                (a, kind)
            }
            "all_to_all" => {
                let [a, s, c] = parts[..] else { return None };
                (
                    a,
                    AllToAll {
                        split: num(s)?,
                        concat: num(c)?,
                    },
                )
            }
            "ppermute" => {
                let mut it = arg.split(';');
                let a = it.next()?;
                let perm = it
                    .filter(|p| !p.is_empty())
                    .map(|p| {
                        let (s, d) = p.split_once('>')?;
                        Some((num(s)?, num(d)?))
                    })
                    .collect::<Option<Vec<_>>>()?;
                (a, Ppermute { perm })
            }
            _ => return None,
        };
        let (axis, size) = match axis.split_once(':') {
            Some((a, d)) => (a, crate::text::parse_dim(d)?),
            None => (axis, axis_dim(axis)),
        };
        Some(Collective {
            kind,
            axis: axis.to_string(),
            size,
        })
    }
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.op_name(), self.text_args())
    }
}

/// A permutation's pairs name each source and each destination once.
pub fn check_perm(perm: &[(usize, usize)]) -> Result<(), String> {
    let mut sources = BTreeSet::new();
    let mut dests = BTreeSet::new();
    for (s, d) in perm {
        if !sources.insert(*s) {
            return Err(format!("source {s} appears twice in the permutation"));
        }
        if !dests.insert(*d) {
            return Err(format!("destination {d} appears twice in the permutation"));
        }
    }
    Ok(())
}

/// Push the collective `kind` over `axis` on `x` (`None` for `axis_index`).
pub fn collective(
    f: &mut Function,
    kind: CollectiveKind,
    axis: &str,
    x: Option<Var>,
) -> Result<Var, String> {
    let op = Op::Collective(Collective::new(kind, axis));
    f.push(op, x.as_slice())
}

/// `lax.pmean`: the psum divided by the axis size.
pub fn pmean(f: &mut Function, x: Var, axis: &str) -> Result<Var, String> {
    let s = collective(f, CollectiveKind::Psum, axis, Some(x))?;
    let n = axis_size(f, axis, f.dtype(x))?;
    let shape = f.shape(x).clone();
    let n = f.broadcast(n, shape, vec![]);
    Ok(f.div(s, n))
}

/// `lax.axis_size` (`psum(1, axis)`): the axis's size as a scalar of `dtype`.
pub fn axis_size(f: &mut Function, axis: &str, dtype: DType) -> Result<Var, String> {
    f.push(
        Op::DimSize {
            dim: axis_dim(axis),
            dtype,
        },
        &[],
    )
}

/// The axis names that `f`'s collectives (and `axis_size`s) use and no
/// pmap inside `f` binds: those an enclosing pmap or named vmap must bind.
/// (An axis's size symbol in a type is not a use: after a named vmap it
/// is the batch's size.)
pub fn free_axes(f: &Function) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for e in f.eqns.iter() {
        match &e.op {
            Op::Collective(c) => {
                out.insert(c.axis.clone());
            }
            Op::DimSize {
                dim: Dim::Sym(s), ..
            } => {
                if let Some(name) = s.strip_prefix(AXIS_PREFIX) {
                    out.insert(name.to_string());
                }
            }
            Op::Pmap(p) => {
                let mut inner = free_axes(&p.body);
                inner.remove(&p.axis);
                out.extend(inner);
            }
            op => {
                for g in crate::text::nested_functions(op) {
                    out.extend(free_axes(g));
                }
            }
        }
    }
    out
}

/// The size the function's own shapes give the axis `name`: the extent of
/// the axis a `psum_scatter` scatters or an `all_to_all` splits, which must
/// be the number of devices (or the batch). `None` when nothing fixes it;
/// an error when two such extents differ.
pub fn axis_extent(f: &Function, name: &str) -> Result<Option<Dim>, String> {
    let mut found: Option<Dim> = None;
    let mut note = |d: &Dim| -> Result<(), String> {
        if *d == axis_dim(name) {
            return Ok(());
        }
        match &found {
            Some(e) if e != d => Err(format!(
                "the collectives over `{name}` need it to have both {e} and {d} devices"
            )),
            _ => {
                found = Some(d.clone());
                Ok(())
            }
        }
    };
    visit_collectives(f, name, &mut |f, e, c| {
        let at = match c.kind {
            CollectiveKind::PsumScatter { axis } => axis,
            CollectiveKind::AllToAll { split, .. } => split,
            _ => return Ok(()),
        };
        note(&f.shape(e.ins[0]).0[at])
    })?;
    Ok(found)
}

/// Calls `visit` on every collective over `name` in `f` and in the
/// functions its ops hold (not inside a pmap that binds `name` again).
fn visit_collectives(
    f: &Function,
    name: &str,
    visit: &mut dyn FnMut(&Function, &crate::ir::Eqn, &Collective) -> Result<(), String>,
) -> Result<(), String> {
    for e in f.eqns.iter() {
        match &e.op {
            Op::Collective(c) if c.axis == name => visit(f, e, c)?,
            Op::Pmap(p) if p.axis == name => {}
            op => {
                for g in crate::text::nested_functions(op) {
                    visit_collectives(g, name, visit)?;
                }
            }
        }
    }
    Ok(())
}

/// `f` with the axis `name`'s size fixed where its shapes fix it
/// (`axis_extent`), and that size: the symbol `axis_dim(name)` renamed
/// everywhere, so that a collective's results agree with the shapes they
/// meet. The pmap (or the named vmap) then has exactly that many devices
/// (examples).
pub fn unify_axis(f: &Function, name: &str) -> Result<(Function, Dim), String> {
    match axis_extent(f, name)? {
        None => Ok((f.clone(), axis_dim(name))),
        Some(d) => {
            let mut g = f.clone();
            let from = axis_dim(name);
            let Dim::Sym(from) = from else { unreachable!() };
            crate::transforms::substitute::substitute(&mut g, &from, &d);
            Ok((g, d))
        }
    }
}
