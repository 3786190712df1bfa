//! Batching: every value either carries a leading batch axis or is shared by
//! all examples; each op's batching rule maps batched operands to a batched
//! result. A batch axis elsewhere in a parameter is moved to the front on
//! the way in, and the result's batch axis moved to its `out_axes` position
//! on the way out (two transposes, which fusion folds into load strides).

use super::simplify::simplify_owned;
use crate::ir::{Function, Var};
use crate::ops::layout::{move_axis_perm, transpose};
use crate::shape::Dim;

/// The axis a vmap batches over: its size, and the name collectives over it
/// use (`#[vmap(.., axis_name = i)]`; `None` for an unnamed batch). Under a
/// named batch, a collective naming it is a reduction over the batch (JAX's
/// batching rule of `psum` and the others, `ops::collective`).
#[derive(Clone, Debug, PartialEq)]
pub struct BatchAxis {
    pub size: Dim,
    pub name: Option<String>,
}

impl BatchAxis {
    /// An unnamed batch of `size`.
    pub fn unnamed(size: &Dim) -> BatchAxis {
        BatchAxis {
            size: size.clone(),
            name: None,
        }
    }

    /// A batch over the axis `name`, of the size that name's dimension
    /// symbol (`collective::axis_dim`) takes.
    pub fn named(name: &str) -> BatchAxis {
        BatchAxis {
            size: crate::ops::collective::axis_dim(name),
            name: Some(name.to_string()),
        }
    }
}

/// Batch `f` over a new leading axis: `in_axes[i]` is `Some(0)` for a batched
/// param and `None` for one shared by every example. Every output is batched
/// along axis 0 (see `vmap_axes` for other axes).
pub fn vmap(f: &Function, in_axes: &[Option<usize>]) -> Result<Function, String> {
    vmap_axes(f, in_axes, &vec![Some(0); f.outs.len()])
}

/// `jax.vmap(f, in_axes, out_axes)`: param `i` carries the batch along axis
/// `in_axes[i]` (`None`: shared by every example); output `j` carries it
/// along axis `out_axes[j]` (`None`: the output must not depend on the
/// batched params, and is returned once). The batch size is a new dimension
/// symbol (`b`, or `b1`, … if `f` already uses `b`).
pub fn vmap_axes(
    f: &Function,
    in_axes: &[Option<usize>],
    out_axes: &[Option<usize>],
) -> Result<Function, String> {
    let used = f.symbols();
    let size = (0..)
        .map(|i| {
            if i == 0 {
                "b".to_string()
            } else {
                format!("b{i}")
            }
        })
        .find(|s| !used.contains(s))
        .expect("a free symbol");
    vmap_sized(f, in_axes, out_axes, &BatchAxis::unnamed(&Dim::Sym(size)))
}

/// `vmap_axes` over the named axis `name` (`jax.vmap(.., axis_name=name)`):
/// collectives over `name` in `f` become reductions over the batch. The
/// batch size is the axis's dimension symbol (`collective::axis_dim`).
pub fn vmap_named(
    f: &Function,
    in_axes: &[Option<usize>],
    out_axes: &[Option<usize>],
    name: &str,
) -> Result<Function, String> {
    let (f, size) = crate::ops::collective::unify_axis(f, name)?;
    let axis = BatchAxis {
        size,
        name: Some(name.to_string()),
    };
    vmap_sized(&f, in_axes, out_axes, &axis)
}

/// `vmap_axes` over a given batch axis (the jacobians batch over a basis
/// whose size is a dimension `f` already has; a named batch's size is its
/// axis symbol).
pub(crate) fn vmap_sized(
    f: &Function,
    in_axes: &[Option<usize>],
    out_axes: &[Option<usize>],
    axis: &BatchAxis,
) -> Result<Function, String> {
    let _running = super::Running::start();
    let size = &axis.size;
    check_axes(f, in_axes, out_axes, axis.name.is_some())?;
    let mut g = Function::new(&format!("{}_vmap", f.name));
    let mut map: Vec<Option<Var>> = vec![None; f.types.len()];
    let mut batched = vec![false; f.types.len()];
    for ((p, name), axis) in f.params.iter().zip(&f.param_names).zip(in_axes) {
        let mut ty = f.ty(*p).clone();
        let v = match axis {
            Some(a) => {
                ty.shape.0.insert(*a, size.clone());
                batched[p.index()] = true;
                let rank = ty.shape.rank();
                let v = g.add_param(name, ty);
                transpose(&mut g, v, move_axis_perm(rank, *a, 0))
            }
            None => g.add_param(name, ty),
        };
        map[p.index()] = Some(v);
    }
    for e in &f.eqns {
        let mut flags: Vec<bool> = e.ins.iter().map(|v| batched[v.index()]).collect();
        // An op with a collective over this batch's name is batched even
        // when no operand is: `psum(x)` of a shared `x` is `n·x`, and
        // `axis_index` differs per example.
        let names_batch = axis.name.as_deref().is_some_and(|n| e.op.uses_axis(n));
        let outs = if flags.iter().any(|b| *b) || names_batch {
            for o in &e.outs {
                batched[o.index()] = true;
            }
            let mut ins: Vec<Var> = e
                .ins
                .iter()
                .map(|v| map[v.index()].expect("verified IR"))
                .collect();
            if !flags.iter().any(|b| *b) && !ins.is_empty() {
                for (v, b) in ins.iter_mut().zip(flags.iter_mut()) {
                    *v = g.broadcast_batch(*v, size);
                    *b = true;
                }
            }
            e.op.batch(&mut g, &ins, &flags, axis)
        } else {
            g.copy_eqn(e, &mut map)
        };
        for (o, v) in e.outs.iter().zip(outs) {
            map[o.index()] = Some(v);
        }
    }
    for (j, (o, axis)) in f.outs.iter().zip(out_axes).enumerate() {
        let v = map[o.index()].expect("verified IR");
        let v = match (axis, batched[o.index()]) {
            (None, false) => v,
            (None, true) => {
                return Err(format!(
                    "vmap of `{}`: out_axes entry {j} is None, but result {j} depends on a batched argument",
                    f.name
                ))
            }
            (Some(a), b) => {
                let v = if b { v } else { g.broadcast_batch(v, size) };
                let rank = g.shape(v).rank();
                transpose(&mut g, v, move_axis_perm(rank, 0, *a))
            }
        };
        g.outs.push(v);
    }
    let g = simplify_owned(g);
    super::verify_outermost(&g, "vmap");
    Ok(g)
}

fn check_axes(
    f: &Function,
    in_axes: &[Option<usize>],
    out_axes: &[Option<usize>],
    named: bool,
) -> Result<(), String> {
    if in_axes.len() != f.params.len() {
        return Err(format!(
            "vmap of `{}`: {} in_axes for {} parameters",
            f.name,
            in_axes.len(),
            f.params.len()
        ));
    }
    if out_axes.len() != f.outs.len() {
        return Err(format!(
            "vmap of `{}`: {} out_axes for {} results",
            f.name,
            out_axes.len(),
            f.outs.len()
        ));
    }
    // A named batch may batch nothing but its collectives (a pmap body
    // whose params are all replicated).
    if !named && in_axes.iter().all(Option::is_none) {
        return Err(format!(
            "vmap of `{}` needs at least one batched argument",
            f.name
        ));
    }
    // A batch axis may be any of 0..=rank of the example's value.
    let in_range = |kind: &str, what: String, axis: &Option<usize>, rank: usize| {
        match axis {
        Some(a) if *a > rank => Err(format!(
            "vmap of `{}`: {kind} entry {a} for {what} is out of range: it has rank {rank}, so the batch axis is 0..={rank}",
            f.name
        )),
        _ => Ok(()),
    }
    };
    for ((p, name), a) in f.params.iter().zip(&f.param_names).zip(in_axes) {
        in_range("in_axes", format!("`{name}`"), a, f.shape(*p).rank())?;
    }
    for (j, (o, a)) in f.outs.iter().zip(out_axes).enumerate() {
        in_range("out_axes", format!("result {j}"), a, f.shape(*o).rank())?;
    }
    Ok(())
}
