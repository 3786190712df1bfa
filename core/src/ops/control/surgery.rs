//! Function surgery the control-flow rules share: reorder, drop, zero and inline params.

use crate::ir::{Function, Var};

/// `f` with its params reordered (`order[k]` is the old index of new param
/// `k`) and its results picked by `outs`, numbered densely again (so that
/// the text form reads back to an equal function).
pub(crate) fn rearranged(f: &Function, order: &[usize], outs: &[usize]) -> Function {
    let mut g = Function::new(&f.name);
    let mut map = vec![None; f.types.len()];
    for i in order {
        let p = f.params[*i];
        map[p.index()] = Some(g.add_param(&f.param_names[*i], f.ty(p).clone()));
    }
    for e in &f.eqns {
        g.copy_eqn(e, &mut map);
    }
    g.outs = outs
        .iter()
        .map(|i| map[f.outs[*i].index()].expect("defined"))
        .collect();
    g
}

/// `f` with params in a new layout: `order[k]` is the old param that new
/// param `k` is, or `None` for a new param it ignores, typed like param `k`
/// of `like` (a while loop's body, whose params are laid out as the
/// condition's).
pub(super) fn with_unused_params(
    f: &Function,
    order: &[Option<usize>],
    like: &Function,
) -> Function {
    let mut g = Function::new(&f.name);
    let mut map = vec![None; f.types.len()];
    for (k, o) in order.iter().enumerate() {
        match o {
            Some(i) => {
                let p = f.params[*i];
                map[p.index()] = Some(g.add_param(&f.param_names[*i], f.ty(p).clone()));
            }
            None => {
                let lk = like.params[k];
                g.add_param(&like.param_names[k], like.ty(lk).clone());
            }
        }
    }
    for e in &f.eqns {
        g.copy_eqn(e, &mut map);
    }
    g.outs = f
        .outs
        .iter()
        .map(|o| map[o.index()].expect("defined"))
        .collect();
    g
}

/// `f` with the params `keep[k] == None` removed and read as zeros instead
/// (`keep[k]` is the old index of the param in position `k`).
pub(super) fn zero_params(f: &Function, keep: &[Option<usize>]) -> Function {
    let mut g = Function::new(&f.name);
    let mut map = vec![None; f.types.len()];
    for k in keep.iter().flatten() {
        let p = f.params[*k];
        map[p.index()] = Some(g.add_param(&f.param_names[*k], f.ty(p).clone()));
    }
    for (k, p) in f.params.iter().enumerate() {
        if !keep.contains(&Some(k)) {
            let t = f.ty(*p).clone();
            map[p.index()] = Some(g.full(0.0, t.dtype, &t.shape));
        }
    }
    for e in &f.eqns {
        g.copy_eqn(e, &mut map);
    }
    g.outs = f
        .outs
        .iter()
        .map(|o| map[o.index()].expect("defined"))
        .collect();
    crate::transforms::simplify::simplify(&g)
}

/// Copy `f`'s equations into `g` with `args` for its params; its results.
pub(crate) fn inline(g: &mut Function, f: &Function, args: &[Var]) -> Vec<Var> {
    let mut map = vec![None; f.types.len()];
    for (p, a) in f.params.iter().zip(args) {
        map[p.index()] = Some(*a);
    }
    for e in &f.eqns {
        g.copy_eqn(e, &mut map);
    }
    f.outs
        .iter()
        .map(|o| map[o.index()].expect("defined"))
        .collect()
}
