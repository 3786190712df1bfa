//! Batching: every value either carries a leading batch axis or is shared by
//! all examples; each op's batching rule maps batched operands to a batched
//! result.

use super::simplify::simplify;
use crate::ir::{Function, Var};
use crate::shape::{Dim, Shape};
use crate::verify::debug_verify;

/// Batch `f` over a new leading axis: `in_axes[i]` is `Some(0)` for a batched
/// param and `None` for one shared by every example. Every output is batched
/// along axis 0. The batch size is a new dimension symbol (`b`, or `b1`, … if
/// `f` already uses `b`).
pub fn vmap(f: &Function, in_axes: &[Option<usize>]) -> Result<Function, String> {
    if in_axes.len() != f.params.len() {
        return Err(format!(
            "vmap of `{}`: {} in_axes for {} parameters",
            f.name,
            in_axes.len(),
            f.params.len()
        ));
    }
    if let Some(a) = in_axes.iter().flatten().find(|a| **a != 0) {
        return Err(format!(
            "vmap of `{}`: in_axes entry {a} is not supported; use 0 or None",
            f.name
        ));
    }
    if in_axes.iter().all(Option::is_none) {
        return Err(format!(
            "vmap of `{}` needs at least one batched argument",
            f.name
        ));
    }
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
    let size = Dim::Sym(size);

    let mut g = Function::new(&format!("{}_vmap", f.name));
    let mut map: Vec<Option<Var>> = vec![None; f.types.len()];
    let mut batched = vec![false; f.types.len()];
    for ((p, name), axis) in f.params.iter().zip(&f.param_names).zip(in_axes) {
        let mut ty = f.ty(*p).clone();
        if axis.is_some() {
            let mut dims = vec![size.clone()];
            dims.extend(ty.shape.0);
            ty.shape = Shape(dims);
            batched[p.index()] = true;
        }
        map[p.index()] = Some(g.add_param(name, ty));
    }
    for e in &f.eqns {
        let flags: Vec<bool> = e.ins.iter().map(|v| batched[v.index()]).collect();
        let out = if flags.iter().any(|b| *b) {
            batched[e.out.index()] = true;
            let ins: Vec<Var> = e
                .ins
                .iter()
                .map(|v| map[v.index()].expect("verified IR"))
                .collect();
            e.op.batch(&mut g, &ins, &flags, &size)
        } else {
            g.copy_eqn(e, &map)
        };
        map[e.out.index()] = Some(out);
    }
    for o in &f.outs {
        let v = map[o.index()].expect("verified IR");
        let v = if batched[o.index()] {
            v
        } else {
            g.broadcast_batch(v, &size)
        };
        g.outs.push(v);
    }
    let g = simplify(&g);
    debug_verify(&g, "vmap");
    Ok(g)
}
