//! Expansion of special functions (`ops::special`) into primitive ops: the
//! first step of fusion, after the transforms have used each special
//! function's own rules, so that no backend needs to know them (as XLA's
//! client library expands `ErfInv` before any backend sees it).

use crate::ir::Function;
use crate::ops::Op;
use std::borrow::Cow;

/// `f` with every special function replaced by its expansion (`f` itself,
/// uncopied, when it has none). Loop and cond bodies are left as they are:
/// fusion expands each when it fuses it.
pub fn expand_special(f: &Function) -> Cow<'_, Function> {
    if !f.eqns.iter().any(|e| matches!(e.op, Op::Special(_))) {
        return Cow::Borrowed(f);
    }
    let (mut g, mut map) = Function::with_params_of(f, &f.name, f.params.len());
    for e in &f.eqns {
        match e.op {
            Op::Special(op) => {
                let x = map[e.ins[0].index()].expect("internal error: operand not yet mapped");
                map[e.out().index()] = Some(op.expand(&mut g, x));
            }
            _ => {
                g.copy_eqn(e, &mut map);
            }
        }
    }
    g.outs = f
        .outs
        .iter()
        .map(|v| map[v.index()].expect("internal error: result not mapped"))
        .collect();
    Cow::Owned(g)
}
