//! `simplify`: constant folding, algebraic identities, common-subexpression
//! elimination and dead-code elimination, in one forward sweep that rebuilds
//! the function densely, then a backward liveness sweep.

use crate::ir::{Function, Var};
use crate::ops::control::Cond;
use crate::ops::elementwise::{BinaryOp, UnaryOp};
use crate::ops::{DotDims, FusionKind, Op};
use crate::tensor::Tensor;
use std::collections::HashMap;

/// Constant folding, algebraic identities, CSE and DCE.
pub fn simplify(f: &Function) -> Function {
    if f.is_simplified() {
        return f.clone();
    }
    simplify_owned(f.clone())
}

/// `simplify`, taking the function: its equations (a cond's branches
/// among them) are moved into the result, not copied.
///
/// The work is linear in the size of the function, nested functions
/// included, at any depth of nested conds:
/// - a function `simplify` returned is marked (`Function::mark_simplified`)
///   and not simplified again, nor are the branches of its conds: each
///   transform simplifies its result, and the branches of nested conds were
///   simplified by the transform of the level below;
/// - the forward sweep goes down into the branches of conds (`forward`),
///   then dead-code elimination goes down from the top (`dce`), pruning
///   each cond to the results its user reads before its branches are
///   swept (bottom up, each level's pruning swept every level below it
///   again);
/// - the verifier runs once, on the outermost transform's result (it
///   checks nested functions too).
pub(crate) fn simplify_owned(f: Function) -> Function {
    if f.is_simplified() {
        return f;
    }
    let _running = super::Running::start();
    let mut g = dce(forward(f), None);
    g.mark_simplified();
    super::verify_outermost(&g, "simplify");
    g
}

/// The forward sweep: folding, identities and CSE, rebuilding `f` densely;
/// the branches of its conds are swept too (those not marked simplified).
fn forward(mut f: Function) -> Function {
    let (mut g, mut map) = Function::with_params_of(&f, &f.name, f.params.len());
    let mut seen: HashMap<String, Vec<Var>> = HashMap::new();
    // Equations holding functions (conds, loops), by their key without the
    // functions: the equations of `g` to compare whole. (Printing the
    // functions into the key printed each nested branch once per level
    // above it: quadratic in the depth of nested conds.)
    let mut seen_nested: HashMap<String, Vec<usize>> = HashMap::new();
    let swaps: Vec<Option<(DotDims, Var, Var)>> = {
        let uses = use_counts(&f);
        let defs = f.definitions();
        f.eqns
            .iter()
            .map(|e| transposed_product(&f, &defs, &uses, &e.op, e.ins.first().copied()))
            .collect()
    };
    let types = std::mem::take(&mut f.types);
    // `g`'s definitions, kept up to date as it grows (recomputing them for
    // every equation made simplify quadratic in the function's size).
    let mut g_defs = Definitions::default();
    for (e, swapped) in std::mem::take(&mut f.eqns).into_iter().zip(swaps) {
        let ins: Vec<Var> = e
            .ins
            .iter()
            .map(|v| map[v.index()].expect("verified IR"))
            .collect();
        let (op, ins) = match swapped {
            Some((d, a, b)) => {
                let (a, b) = (
                    map[a.index()].expect("verified IR"),
                    map[b.index()].expect("verified IR"),
                );
                (Op::DotGeneral(d), vec![a, b])
            }
            // A cond's branches are simplified as functions of their own.
            None => match e.op {
                Op::Cond(c) => {
                    let c = *c;
                    let sweep = |b: Function| if b.is_simplified() { b } else { forward(b) };
                    let c = Cond {
                        then: sweep(c.then),
                        otherwise: sweep(c.otherwise),
                        n_linear: c.n_linear,
                    };
                    (Op::Cond(Box::new(c)), ins)
                }
                op => (op, ins),
            },
        };
        g_defs.update(&g);
        // A cond on a constant predicate is its taken branch.
        if let Op::Cond(c) = &op {
            if let Some(p) = g.literal_value(ins[0], &g_defs.0) {
                let taken = if p != 0.0 { &c.then } else { &c.otherwise };
                let out = crate::ops::control::inline(&mut g, taken, &ins[1..]);
                for (o, v) in e.outs.iter().zip(out) {
                    map[o.index()] = Some(v);
                }
                continue;
            }
        }
        let out = match rewrite(&mut g, &g_defs.0, &op, &ins) {
            Some(v) => vec![v],
            None => {
                let tys: Vec<String> = e
                    .outs
                    .iter()
                    .map(|o| types[o.index()].to_string())
                    .collect();
                let key = format!("{} {:?} {:?}", op, ins, tys);
                if crate::text::nested_functions(&op).is_empty() {
                    match seen.get(&key) {
                        Some(v) => v.clone(),
                        None => {
                            let v = g
                                .push_all(op, &ins)
                                .expect("internal error: re-typing an equation");
                            seen.insert(key, v.clone());
                            v
                        }
                    }
                } else {
                    let same = seen_nested
                        .get(&key)
                        .and_then(|es| es.iter().find(|i| g.eqns[**i].op == op));
                    match same {
                        Some(i) => g.eqns[*i].outs.clone(),
                        None => {
                            let v = g
                                .push_all(op, &ins)
                                .expect("internal error: re-typing an equation");
                            seen_nested.entry(key).or_default().push(g.eqns.len() - 1);
                            v
                        }
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
            let r = match op.eval(&refs, &[vec![]], &Default::default()) {
                Ok(mut r) if r.len() == 1 => r.remove(0),
                _ => panic!("internal error: folding {op}"),
            };
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

/// Drop equations whose values reach no output, renumbering densely; with
/// `params`, keep only the params at those indices, in that order (the
/// others must be unread). A cond gives only its live results and takes
/// only the constants its branches then read: it is pruned during the
/// backward liveness sweep, its branches swept with only those results
/// (top down: a cond's branches are swept once, knowing what their user
/// reads), so what fed the constants it no longer takes is found dead in
/// the same sweep. Every branch swept is marked simplified (`forward` has
/// been through it); a cond whose branches are marked and whose results
/// are all live is kept as it is. Takes `f` by value: its equations are
/// moved, not copied (a copy of a cond copies its branches whole).
fn dce(mut f: Function, params: Option<&[usize]>) -> Function {
    let mut live = vec![false; f.types.len()];
    for o in &f.outs {
        live[o.index()] = true;
    }
    type Pruned = (Cond, Vec<usize>, Vec<usize>);
    let mut pruned: Vec<Option<Pruned>> = (0..f.eqns.len()).map(|_| None).collect();
    for (i, e) in f.eqns.iter_mut().enumerate().rev() {
        if !e.outs.iter().any(|o| live[o.index()]) {
            continue;
        }
        if let Op::Cond(c) = &e.op {
            let all_live = e.outs.iter().all(|o| live[o.index()]);
            if !(all_live && c.then.is_simplified() && c.otherwise.is_simplified()) {
                let results: Vec<usize> = (0..e.outs.len())
                    .filter(|k| live[e.outs[*k].index()])
                    .collect();
                // Moved out (the equation is rebuilt from `pruned`).
                let Op::Cond(c) = std::mem::replace(&mut e.op, Op::StopGradient) else {
                    unreachable!()
                };
                let (c, kept) = pruned_cond(*c, &results);
                live[e.ins[0].index()] = true;
                for k in &kept {
                    live[e.ins[1 + k].index()] = true;
                }
                pruned[i] = Some((c, kept, results));
                continue;
            }
        }
        for v in &e.ins {
            live[v.index()] = true;
        }
    }
    let mut g = Function::new(&f.name);
    let mut map = vec![None; f.types.len()];
    let all: Vec<usize>;
    let params = match params {
        Some(p) => p,
        None => {
            all = (0..f.params.len()).collect();
            &all
        }
    };
    for k in params {
        let p = f.params[*k];
        map[p.index()] = Some(g.add_param(&f.param_names[*k], f.ty(p).clone()));
    }
    let outs = std::mem::take(&mut f.outs);
    for (e, p) in std::mem::take(&mut f.eqns).into_iter().zip(pruned) {
        if !e.outs.iter().any(|o| live[o.index()]) {
            continue;
        }
        let mapped = |map: &[Option<Var>], v: &Var| map[v.index()].expect("verified IR");
        match p {
            Some((c, kept, results)) => {
                let ins: Vec<Var> = std::iter::once(e.ins[0])
                    .chain(kept.iter().map(|k| e.ins[1 + k]))
                    .map(|v| mapped(&map, &v))
                    .collect();
                let new = g
                    .push_all(Op::Cond(Box::new(c)), &ins)
                    .expect("internal error: pruning a cond");
                for (k, v) in results.iter().zip(new) {
                    map[e.outs[*k].index()] = Some(v);
                }
            }
            None => {
                let ins: Vec<Var> = e.ins.iter().map(|v| mapped(&map, v)).collect();
                let new = g
                    .push_all(e.op, &ins)
                    .expect("internal error: re-typing an equation");
                for (o, v) in e.outs.iter().zip(new) {
                    map[o.index()] = Some(v);
                }
            }
        }
    }
    g.outs = outs
        .iter()
        .map(|o| map[o.index()].expect("verified IR"))
        .collect();
    g
}

/// The cond `c` with only the results at `results` and the constants its
/// branches then read (each branch swept by `dce` and marked simplified);
/// also the constants kept.
fn pruned_cond(c: Cond, results: &[usize]) -> (Cond, Vec<usize>) {
    let n_consts = c.n_consts();
    let n_primal = n_consts - c.n_linear;
    let all_results = results.len() == c.then.outs.len();
    let pick = |mut b: Function| {
        b.outs = results.iter().map(|r| b.outs[*r]).collect();
        dce(b, None)
    };
    let (t, e) = (pick(c.then), pick(c.otherwise));
    let read = |b: &Function| -> Vec<bool> {
        let mut used = vec![false; b.types.len()];
        for v in b.eqns.iter().flat_map(|e| &e.ins).chain(&b.outs) {
            used[v.index()] = true;
        }
        b.params.iter().map(|p| used[p.index()]).collect()
    };
    let (rt, re) = (read(&t), read(&e));
    // With every result live, every constant is kept (an unread array
    // constant may still be what gives a branch the size of a dimension).
    let kept: Vec<usize> = (0..n_consts)
        .filter(|k| all_results || rt[*k] || re[*k])
        .collect();
    let n_linear = kept.iter().filter(|k| **k >= n_primal).count();
    let branch = |b: Function| {
        let mut g = if kept.len() == n_consts {
            b
        } else {
            // Only the params change: the branch is swept again, the
            // conds inside it kept as they are (all live and marked).
            dce(b, Some(&kept))
        };
        g.mark_simplified();
        g
    };
    let cond = Cond {
        then: branch(t),
        otherwise: branch(e),
        n_linear,
    };
    (cond, kept)
}
