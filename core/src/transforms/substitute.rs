//! Renaming a dimension symbol throughout a function: its types, the
//! shapes and dimensions its ops name, and the functions its ops hold.

use crate::ir::Function;
use crate::ops::control::Loop;
use crate::ops::Op;
use crate::shape::derived::rename;
use crate::shape::{Dim, Shape};

/// Replace the dimension symbol `from` by `to` everywhere in `f`.
pub fn substitute(f: &mut Function, from: &str, to: &Dim) {
    let fix = |shape: &mut Shape| {
        for d in shape.0.iter_mut() {
            *d = rename(d, from, to);
        }
    };
    for t in f.types.iter_mut() {
        fix(&mut t.shape);
    }
    for e in f.eqns.iter_mut() {
        match &mut e.op {
            Op::Broadcast { shape, .. } | Op::Reshape { shape } | Op::Iota { shape, .. } => {
                fix(shape)
            }
            Op::Slice { shape, starts, .. } | Op::Pad { shape, starts, .. } => {
                fix(shape);
                for d in starts.iter_mut() {
                    *d = rename(d, from, to);
                }
            }
            Op::ScatterAdd { shape, .. } => fix(shape),
            Op::DimSize { dim, .. } => *dim = rename(dim, from, to),
            Op::Conv(p) => {
                for a in p.axes.iter_mut() {
                    a.len = rename(&a.len, from, to);
                }
            }
            Op::Loop(l) => substitute_in_loop(l, from, to),
            Op::LoopReverse(l) => {
                substitute_in_loop(&mut l.fwd, from, to);
                substitute(&mut l.back, from, to);
            }
            Op::Cond(c) => {
                substitute(&mut c.then, from, to);
                substitute(&mut c.otherwise, from, to);
            }
            Op::Custom(c) => {
                let renamed = c.map_functions(|g| {
                    let mut g = g.clone();
                    substitute(&mut g, from, to);
                    g
                });
                **c = renamed;
            }
            Op::Collective(c) => c.size = rename(&c.size, from, to),
            Op::Pmap(p) => {
                p.size = rename(&p.size, from, to);
                substitute(&mut p.body, from, to);
            }
            _ => {}
        }
    }
}

fn substitute_in_loop(l: &mut Loop, from: &str, to: &Dim) {
    substitute(&mut l.body, from, to);
    if let Some(c) = l.cond.as_mut() {
        substitute(c, from, to);
    }
    if let Some(t) = l.tangent_of.as_mut() {
        substitute_in_loop(&mut t.primal, from, to);
    }
}
