//! Forward mode: push tangents through every equation with the op's JVP rule.
//! Tangents are symbolic zeros (`None`) until an op makes them nonzero, so
//! derivative code only covers what the chosen inputs reach.

use super::simplify::{simplify, simplify_owned};
use crate::ir::{Function, Var};

/// Forward mode. Params: the primals, then one tangent `t_<name>` per float
/// param. Outputs: the primal outputs, then one tangent per output.
pub fn jvp(f: &Function) -> Function {
    let all: Vec<usize> = (0..f.params.len())
        .filter(|i| f.dtype(f.params[*i]).is_float())
        .collect();
    jvp_wrt(f, &all)
}

/// Forward mode with tangents for the params at `wrt` only (the others are
/// held constant). Params: the primals, then `t_<name>` per `wrt` entry, in
/// `wrt`'s order. Outputs: the primal outputs, then one tangent per output.
pub fn jvp_wrt(f: &Function, wrt: &[usize]) -> Function {
    let _running = super::Running::start();
    let g = simplify_owned(jvp_raw(f, wrt));
    super::verify_outermost(&g, "jvp");
    g
}

/// The JVP of `f` with tangent params for the params at `wrt` only, before
/// simplification (the VJP linearizes this graph).
pub(crate) fn jvp_raw(f: &Function, wrt: &[usize]) -> Function {
    // Simplified first, once: the JVP copies a cond it meets into its
    // result (the primal cond beside the tangent one), so an unsimplified
    // branch would be simplified again by every transform above it.
    let simplified;
    let f = if f.is_simplified() {
        f
    } else {
        simplified = simplify(f);
        &simplified
    };
    let (mut g, mut primal) =
        Function::with_params_of(f, &format!("{}_jvp", f.name), f.params.len());
    let mut tangent: Vec<Option<Var>> = vec![None; f.types.len()];
    for i in wrt {
        let p = f.params[*i];
        let name = format!("t_{}", f.param_names[*i]);
        tangent[p.index()] = Some(g.add_param(&name, f.ty(p).clone()));
    }
    for e in &f.eqns {
        let ins: Vec<Var> = e
            .ins
            .iter()
            .map(|v| primal[v.index()].expect("verified IR"))
            .collect();
        let ts: Vec<Option<Var>> = e.ins.iter().map(|v| tangent[v.index()]).collect();
        // Symbolic zeros in, symbolic zeros out: an equation no tangent
        // reaches is copied as it is.
        let (outs, touts) = if ts.iter().any(Option::is_some) {
            e.op.jvp(&mut g, &ins, &ts)
        } else {
            let outs = g.copy_eqn(e, &mut primal);
            let none = vec![None; outs.len()];
            (outs, none)
        };
        for ((o, p), t) in e.outs.iter().zip(outs).zip(touts) {
            primal[o.index()] = Some(p);
            tangent[o.index()] = t;
        }
    }
    g.outs = f
        .outs
        .iter()
        .map(|o| primal[o.index()].expect("verified IR"))
        .collect();
    for o in &f.outs {
        let t = match tangent[o.index()] {
            Some(t) => t,
            None => {
                let p = primal[o.index()].expect("verified IR");
                g.zeros_like(p)
            }
        };
        g.outs.push(t);
    }
    g
}
