//! Batching: every value either carries a leading batch axis or is shared by
//! all examples; each op's batching rule maps batched operands to a batched
//! result. A batch axis elsewhere in a parameter is moved to the front on
//! the way in, and the result's batch axis moved to its `out_axes` position
//! on the way out (two transposes, which fusion folds into load strides).

use super::simplify::simplify_owned;
use crate::ir::{Function, Var};
use crate::ops::layout::{move_axis_perm, transpose};
use crate::shape::Dim;

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
    vmap_sized(f, in_axes, out_axes, &Dim::Sym(size))
}

/// `vmap_axes` with a given batch size (the jacobians batch over a basis
/// whose size is a dimension `f` already has).
pub(crate) fn vmap_sized(
    f: &Function,
    in_axes: &[Option<usize>],
    out_axes: &[Option<usize>],
    size: &Dim,
) -> Result<Function, String> {
    let _running = super::Running::start();
    check_axes(f, in_axes, out_axes)?;
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
        let flags: Vec<bool> = e.ins.iter().map(|v| batched[v.index()]).collect();
        let outs = if flags.iter().any(|b| *b) {
            for o in &e.outs {
                batched[o.index()] = true;
            }
            let ins: Vec<Var> = e
                .ins
                .iter()
                .map(|v| map[v.index()].expect("verified IR"))
                .collect();
            e.op.batch(&mut g, &ins, &flags, size)
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
    if in_axes.iter().all(Option::is_none) {
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
