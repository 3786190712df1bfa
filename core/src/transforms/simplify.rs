//! `simplify`: constant folding, algebraic identities, common-subexpression
//! elimination and dead-code elimination, in one forward sweep that rebuilds
//! the function densely, then a backward liveness sweep.

use crate::ir::{Function, Var};
use crate::ops::elementwise::{BinaryOp, UnaryOp};
use crate::ops::{DotDims, FusionKind, Op};
use crate::tensor::Tensor;
use crate::verify::debug_verify;
use std::collections::HashMap;

/// Constant folding, algebraic identities, CSE and DCE.
pub fn simplify(f: &Function) -> Function {
    let g = dce(&forward(f));
    debug_verify(&g, "simplify");
    g
}

fn forward(f: &Function) -> Function {
    let (mut g, mut map) = Function::with_params_of(f, &f.name, f.params.len());
    let mut seen: HashMap<String, Vec<Var>> = HashMap::new();
    let uses = use_counts(f);
    let defs = f.definitions();
    // `g`'s definitions, kept up to date as it grows (recomputing them for
    // every equation made simplify quadratic in the function's size).
    let mut g_defs = Definitions::default();
    for e in &f.eqns {
        let ins: Vec<Var> = e
            .ins
            .iter()
            .map(|v| map[v.index()].expect("verified IR"))
            .collect();
        let swapped = transposed_product(f, &defs, &uses, &e.op, e.ins.first().copied());
        let (op, ins) = match swapped {
            Some((d, a, b)) => {
                let (a, b) = (
                    map[a.index()].expect("verified IR"),
                    map[b.index()].expect("verified IR"),
                );
                (Op::DotGeneral(d), vec![a, b])
            }
            // A cond's branches are simplified as functions of their own.
            None => match &e.op {
                Op::Cond(c) => (Op::Cond(Box::new(c.simplified())), ins),
                op => (op.clone(), ins),
            },
        };
        let (op, ins) = (&op, &ins[..]);
        g_defs.update(&g);
        // A cond on a constant predicate is its taken branch.
        if let Op::Cond(c) = op {
            if let Some(p) = g.literal_value(ins[0], &g_defs.0) {
                let taken = if p != 0.0 { &c.then } else { &c.otherwise };
                let out = crate::ops::control::inline(&mut g, taken, &ins[1..]);
                for (o, v) in e.outs.iter().zip(out) {
                    map[o.index()] = Some(v);
                }
                continue;
            }
        }
        let out = match rewrite(&mut g, &g_defs.0, op, ins) {
            Some(v) => vec![v],
            None => {
                let tys: Vec<String> = e.outs.iter().map(|o| f.ty(*o).to_string()).collect();
                let key = format!("{} {:?} {:?}{}", op, ins, tys, crate::text::nested_text(op));
                match seen.get(&key) {
                    Some(v) => v.clone(),
                    None => {
                        let v = g
                            .push_all(op.clone(), ins)
                            .expect("internal error: re-typing an equation");
                        seen.insert(key, v.clone());
                        v
                    }
                }
            }
        };
        for (o, v) in e.outs.iter().zip(out) {
            map[o.index()] = Some(v);
        }
    }
    g.outs = f
        .outs
        .iter()
        .map(|o| map[o.index()].expect("verified IR"))
        .collect();
    g
}

/// `Function::definitions` of a function that only grows, extended with
/// the equations added since the last update.
#[derive(Default)]
struct Definitions(Vec<Option<usize>>, usize);

impl Definitions {
    fn update(&mut self, g: &Function) {
        self.0.resize(g.types.len(), None);
        for (i, e) in g.eqns.iter().enumerate().skip(self.1) {
            for o in &e.outs {
                self.0[o.index()] = Some(i);
            }
        }
        self.1 = g.eqns.len();
    }
}

/// An existing or folded value equal to `op(ins)`, if a rule applies
/// (`defs`: `g.definitions()`).
fn rewrite(g: &mut Function, defs: &[Option<usize>], op: &Op, ins: &[Var]) -> Option<Var> {
    let lit = |v: Var| g.literal_value(v, defs);
    let def_op = |v: Var| defs[v.index()].map(|i| &g.eqns[i]);
    // Constant folding of elementwise ops on literals.
    if op.fusion_kind() == FusionKind::Elementwise && !ins.is_empty() {
        if let Some(vals) = ins.iter().map(|v| lit(*v)).collect::<Option<Vec<f64>>>() {
            let ts: Vec<Tensor> = ins
                .iter()
                .zip(&vals)
                .map(|(v, x)| Tensor::scalar(g.dtype(*v), *x))
                .collect();
            let refs: Vec<&Tensor> = ts.iter().collect();
            let r = op.eval(&refs, &[], &Default::default());
            let shape = g.shape(ins[ins.len() - 1]).clone();
            return Some(g.full(r.data[0], r.dtype, &shape));
        }
    }
    match op {
        Op::Binary(BinaryOp::Add) if lit(ins[0]) == Some(0.0) => Some(ins[1]),
        Op::Binary(BinaryOp::Add | BinaryOp::Sub) if lit(ins[1]) == Some(0.0) => Some(ins[0]),
        Op::Binary(BinaryOp::Mul) if lit(ins[0]) == Some(1.0) => Some(ins[1]),
        Op::Binary(BinaryOp::Mul | BinaryOp::Div) if lit(ins[1]) == Some(1.0) => Some(ins[0]),
        Op::Binary(BinaryOp::Sub) if lit(ins[0]) == Some(0.0) => Some(g.neg(ins[1])),
        Op::Unary(UnaryOp::Neg) => match def_op(ins[0]) {
            Some(e) if e.op == Op::Unary(UnaryOp::Neg) => Some(e.ins[0]),
            _ => None,
        },
        Op::Unary(UnaryOp::Powi(1)) => Some(ins[0]),
        Op::Select => match lit(ins[0]) {
            Some(p) => Some(if p != 0.0 { ins[1] } else { ins[2] }),
            None if ins[1] == ins[2] => Some(ins[1]),
            None => None,
        },
        Op::Broadcast { shape, .. } if g.shape(ins[0]) == shape => Some(ins[0]),
        Op::ReduceSum { axes } if axes.is_empty() => Some(ins[0]),
        _ => None,
    }
}

/// How many times each value is read by an equation or returned.
fn use_counts(f: &Function) -> Vec<usize> {
    let mut n = vec![0; f.types.len()];
    for v in f.eqns.iter().flat_map(|e| &e.ins).chain(&f.outs) {
        n[v.index()] += 1;
    }
    n
}

/// `transpose(dot_general(a, b))` whose permutation puts `b`'s free axes
/// before `a`'s (batch axes staying first) is `dot_general(b, a)` with the
/// dimension numbers swapped: the product is written in the transposed
/// order directly, with no copy. The reverse-mode rule of `dot_general`
/// makes exactly this shape for a weight matrix's gradient. Only when the
/// product has no other use, so it is not computed twice.
fn transposed_product(
    f: &Function,
    defs: &[Option<usize>],
    uses: &[usize],
    op: &Op,
    operand: Option<Var>,
) -> Option<(DotDims, Var, Var)> {
    let Op::Transpose { perm } = op else {
        return None;
    };
    let v = operand?;
    let e = &f.eqns[defs[v.index()]?];
    let Op::DotGeneral(d) = &e.op else {
        return None;
    };
    if uses[v.index()] != 1 {
        return None;
    }
    let nb = d.lhs_batch.len();
    let nl = d.lhs_free(f.shape(e.ins[0]).rank()).len();
    let nr = d.rhs_free(f.shape(e.ins[1]).rank()).len();
    let want: Vec<usize> = (0..nb)
        .chain(nb + nl..nb + nl + nr)
        .chain(nb..nb + nl)
        .collect();
    (*perm == want).then(|| (d.swapped(), e.ins[1], e.ins[0]))
}

/// Drop equations whose values reach no output, renumbering densely.
fn dce(f: &Function) -> Function {
    let mut live = vec![false; f.types.len()];
    for o in &f.outs {
        live[o.index()] = true;
    }
    for e in f.eqns.iter().rev() {
        if e.outs.iter().any(|o| live[o.index()]) {
            for i in &e.ins {
                live[i.index()] = true;
            }
        }
    }
    let (mut g, mut map) = Function::with_params_of(f, &f.name, f.params.len());
    let mut pruned_any = false;
    for e in f
        .eqns
        .iter()
        .filter(|e| e.outs.iter().any(|o| live[o.index()]))
    {
        match &e.op {
            // A cond gives only its live results, and takes only the
            // constants its branches then read.
            Op::Cond(c) if e.outs.iter().any(|o| !live[o.index()]) => {
                let results: Vec<usize> = (0..e.outs.len())
                    .filter(|k| live[e.outs[*k].index()])
                    .collect();
                let (pruned, kept) = c.pruned(&results);
                let ins: Vec<Var> = std::iter::once(e.ins[0])
                    .chain(kept.iter().map(|k| e.ins[1 + k]))
                    .map(|v| map[v.index()].expect("verified IR"))
                    .collect();
                let outs = g
                    .push_all(Op::Cond(Box::new(pruned)), &ins)
                    .expect("internal error: pruning a cond");
                for (k, v) in results.iter().zip(outs) {
                    map[e.outs[*k].index()] = Some(v);
                }
                pruned_any = true;
            }
            _ => {
                g.copy_eqn(e, &mut map);
            }
        }
    }
    g.outs = f
        .outs
        .iter()
        .map(|o| map[o.index()].expect("verified IR"))
        .collect();
    // What fed the constants a pruned cond no longer takes is dead now.
    if pruned_any {
        dce(&g)
    } else {
        g
    }
}
