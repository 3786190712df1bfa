//! Catalog cases of the cond (`ops::control::Cond`): a predicate on a size
//! (both branches are taken across the sizes the catalog runs, and finite
//! differences never cross it), and one comparing two parameters kept
//! apart (`sep`), so batching it makes a per-example predicate.

use super::{build, case, shape, Case, ANY, POS};
use oxla_core::ops::control::push_cond;
use oxla_core::ops::elementwise::{CmpOp, UnaryOp};
use oxla_core::*;

pub fn cond_cases(n: &Dim) -> Vec<Case> {
    let mut cases = Vec::new();
    let s1 = shape(1, n);
    let s2 = shape(2, n);
    // `if n > 2 { exp(x)·x } else { sin(x) + 1 }`.
    let f = build("cond_on_size", &[("x", s1.clone())], |f, p| {
        let len = f
            .push(
                Op::DimSize {
                    dim: n.clone(),
                    dtype: super::F,
                },
                &[],
            )
            .unwrap();
        let two = f.literal(2.5, super::F);
        let pred = f.cmp(CmpOp::Gt, len, two);
        let mut t = Function::new("big");
        let x = t.add_param("x", Type::new(super::F, s1.clone()));
        let e = t.unary(UnaryOp::Exp, x);
        t.outs = vec![t.mul(e, x)];
        let mut o = Function::new("small");
        let x = o.add_param("x", Type::new(super::F, s1.clone()));
        let s = o.unary(UnaryOp::Sin, x);
        let one = o.full(1.0, super::F, &s1);
        o.outs = vec![o.add(s, one)];
        push_cond(f, pred, &[p[0]], t, o).unwrap()
    });
    cases.push(case("cond", f, vec![ANY], vec![]));
    // `if a > b { (ln(x) + 1)·a, sum(x) } else { tanh(x)·b, b·b }`: two
    // results, a scalar meeting an array, a branch that does not read
    // every constant.
    let f = build(
        "cond_on_params",
        &[
            ("a", Shape::scalar()),
            ("b", Shape::scalar()),
            ("x", s2.clone()),
        ],
        |f, p| {
            let pred = f.cmp(CmpOp::Gt, p[0], p[1]);
            let ty = |s: &Shape| Type::new(super::F, s.clone());
            let mut t = Function::new("log_side");
            let a = t.add_param("a", ty(&Shape::scalar()));
            let _ = t.add_param("b", ty(&Shape::scalar()));
            let x = t.add_param("x", ty(&s2));
            let l = t.unary(UnaryOp::Log, x);
            let one = t.full(1.0, super::F, &s2);
            let l1 = t.add(l, one);
            let ab = t.broadcast(a, s2.clone(), vec![]);
            let r0 = t.mul(l1, ab);
            let r1 = t.reduce_sum(x, vec![0, 1]);
            t.outs = vec![r0, r1];
            let mut o = Function::new("tanh_side");
            let _ = o.add_param("a", ty(&Shape::scalar()));
            let b = o.add_param("b", ty(&Shape::scalar()));
            let x = o.add_param("x", ty(&s2));
            let th = o.unary(UnaryOp::Tanh, x);
            let bb = o.broadcast(b, s2.clone(), vec![]);
            let r0 = o.mul(th, bb);
            let r1 = o.mul(b, b);
            o.outs = vec![r0, r1];
            push_cond(f, pred, &[p[0], p[1], p[2]], t, o).unwrap()
        },
    );
    cases.push(case("cond", f, vec![ANY, ANY, POS], vec![(0, 1)]));
    cases
}
