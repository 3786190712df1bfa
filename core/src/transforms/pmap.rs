//! `pmap` as a transform: a function of one `Pmap` op (`ops::control`)
//! over the given function, with JAX's `in_axes`/`out_axes`.

use super::simplify::simplify_owned;
use crate::ir::{Function, Var};
use crate::ops::control::push_pmap;
use crate::ops::layout::{move_axis_perm, reshape, transpose};
use crate::ops::slicing::slice;
use crate::shape::{Dim, Shape};

/// `jax.pmap(f, axis_name, in_axes, out_axes)`: param `i` is split across
/// the devices along its axis `in_axes[i]` (`None`: every device gets it
/// whole); result `j` is stacked along `out_axes[j]` (`None`: the result
/// must be the same on every device, as after a `psum`, and device 0's is
/// returned). The number of devices is a new dimension symbol (`d`, or `d1`,
/// … if `f` already uses `d`), the extent of the mapped axes.
pub fn pmap(
    f: &Function,
    axis_name: &str,
    in_axes: &[Option<usize>],
    out_axes: &[Option<usize>],
) -> Result<Function, String> {
    let _running = super::Running::start();
    let what = format!("pmap of `{}` over `{axis_name}`", f.name);
    if in_axes.len() != f.params.len() || out_axes.len() != f.outs.len() {
        return Err(format!(
            "{what}: {} in_axes for {} parameters and {} out_axes for {} results",
            in_axes.len(),
            f.params.len(),
            out_axes.len(),
            f.outs.len()
        ));
    }
    if in_axes.iter().all(Option::is_none) {
        return Err(format!("{what} needs at least one mapped argument"));
    }
    let used = f.symbols();
    let n = (0..)
        .map(|i| {
            if i == 0 {
                "d".to_string()
            } else {
                format!("d{i}")
            }
        })
        .find(|s| !used.contains(s))
        .map(Dim::Sym)
        .expect("a free symbol");
    let mut g = Function::new(&format!("{}_pmap", f.name));
    let mut operands: Vec<Var> = Vec::new();
    for ((p, name), axis) in f.params.iter().zip(&f.param_names).zip(in_axes) {
        let mut ty = f.ty(*p).clone();
        let rank = ty.shape.rank();
        let v = match axis {
            Some(a) if *a > rank => {
                return Err(format!(
                    "{what}: in_axes entry {a} for `{name}` is out of range: it has rank {rank}"
                ))
            }
            Some(a) => {
                ty.shape.0.insert(*a, n.clone());
                let v = g.add_param(name, ty);
                transpose(&mut g, v, move_axis_perm(rank + 1, *a, 0))
            }
            None => g.add_param(name, ty),
        };
        operands.push(v);
    }
    let mapped: Vec<bool> = in_axes.iter().map(Option::is_some).collect();
    let outs =
        push_pmap(&mut g, f, axis_name, mapped, &operands).map_err(|e| format!("{what}: {e}"))?;
    for (j, (v, axis)) in outs.into_iter().zip(out_axes).enumerate() {
        let rank = g.shape(v).rank();
        let v = match axis {
            Some(a) if *a >= rank => {
                return Err(format!(
                    "{what}: out_axes entry {a} for result {j} is out of range: it has rank {}",
                    rank - 1
                ))
            }
            Some(a) => transpose(&mut g, v, move_axis_perm(rank, 0, *a)),
            // Device 0's copy of a replicated result.
            None => {
                let shape = g.shape(v).clone();
                let mut one = shape.clone();
                one.0[0] = Dim::Const(1);
                let first = slice(&mut g, v, one, vec![Dim::Const(0); rank], vec![1; rank]);
                reshape(&mut g, first, Shape(shape.0[1..].to_vec()))
            }
        };
        g.outs.push(v);
    }
    let g = simplify_owned(g);
    super::verify_outermost(&g, "pmap");
    Ok(g)
}
