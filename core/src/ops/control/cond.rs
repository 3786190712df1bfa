//! The cond op (`Cond`, JAX's `lax.cond`) and its rules.

use super::batch::mask_over;
use super::surgery::{inline, rearranged, zero_params};
use crate::dtype::DType;
use crate::interp;
use crate::ir::{Function, Type, Var};
use crate::ops::Op;
use crate::tensor::Tensor;
use crate::transforms::jvp::jvp_wrt;
use crate::transforms::vjp::vjp_cotangents;
use crate::transforms::vmap::{vmap_sized, BatchAxis};

/// `if pred { then(consts) } else { otherwise(consts) }`, in the manner of
/// JAX's `lax.cond`: only the taken branch runs. Operands: the predicate (a
/// bool scalar), then the constants the branches read; both branches take
/// the constants as params and give results of the same types, which are
/// the op's results.
///
/// Rules:
/// - JVP: the primal cond, plus a *tangent cond* on the same predicate whose
///   branches are the branches' JVPs (constants: the primal ones, then the
///   tangents taken; results: the tangents of the float results). It is
///   linear in its trailing `n_linear` constants.
/// - Transpose of a tangent cond: a cond on the same predicate of the
///   branches' transposes (each branch's VJP with respect to its linear
///   params, which a linear function's VJP does not read). Reverse over
///   reverse therefore needs nothing more.
/// - Batching: an unbatched predicate gives a cond of the batched branches;
///   a batched one runs both batched branches and selects per example, as
///   JAX does.
#[derive(Clone, Debug, PartialEq)]
pub struct Cond {
    /// Runs when the predicate holds.
    pub then: Function,
    /// Runs when it does not.
    pub otherwise: Function,
    /// How many trailing constants are tangents the branches are linear in
    /// (set on the tangent cond of a JVP; 0 otherwise).
    pub n_linear: usize,
}

impl Cond {
    pub fn n_consts(&self) -> usize {
        self.then.params.len()
    }
    pub fn n_operands(&self) -> usize {
        1 + self.n_consts()
    }
    pub fn branches(&self) -> [&Function; 2] {
        [&self.then, &self.otherwise]
    }

    pub fn infer(&self, ins: &[&Type]) -> Result<Vec<Type>, String> {
        if ins.len() != self.n_operands() {
            return Err(format!(
                "cond takes {} operands, got {}",
                self.n_operands(),
                ins.len()
            ));
        }
        if *ins[0] != Type::scalar(DType::Bool) {
            return Err(format!(
                "a cond's predicate must be a bool scalar, got {}",
                ins[0]
            ));
        }
        if self.n_linear > self.n_consts() {
            return Err("a cond is linear in more constants than it has".into());
        }
        for (name, b) in [("then", &self.then), ("else", &self.otherwise)] {
            if b.params.len() != self.n_consts() {
                return Err(format!(
                    "cond: the {name} branch takes {} params, the cond passes {}",
                    b.params.len(),
                    self.n_consts()
                ));
            }
            for (k, (p, t)) in b.params.iter().zip(&ins[1..]).enumerate() {
                if b.ty(*p) != *t {
                    return Err(format!(
                        "cond constant {k}: the {name} branch takes {}, the operand is {t}",
                        b.ty(*p)
                    ));
                }
            }
        }
        let types =
            |b: &Function| -> Vec<Type> { b.outs.iter().map(|o| b.ty(*o).clone()).collect() };
        let (t, e) = (types(&self.then), types(&self.otherwise));
        if t != e {
            let list = |v: &[Type]| {
                v.iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(format!(
                "cond: the branches' results differ: ({}) and ({})",
                list(&t),
                list(&e)
            ));
        }
        Ok(t)
    }

    /// Operand `i` is one of the tangents the cond is linear in.
    pub fn is_linear_in(&self, i: usize) -> bool {
        i >= self.n_operands() - self.n_linear && i < self.n_operands()
    }

    /// Reference evaluation: the taken branch only.
    pub fn eval(&self, ins: &[&Tensor]) -> Result<Vec<Tensor>, String> {
        let consts: Vec<Tensor> = ins[1..].iter().map(|t| (*t).clone()).collect();
        let taken = if ins[0].data[0] != 0.0 {
            &self.then
        } else {
            &self.otherwise
        };
        interp::eval(taken, &consts)
    }

    /// Each branch mapped by `f`, keeping `n_linear`.
    fn map_branches(&self, mut f: impl FnMut(&Function) -> Function, n_linear: usize) -> Cond {
        Cond {
            then: f(&self.then),
            otherwise: f(&self.otherwise),
            n_linear,
        }
    }

    /// The tangent cond for tangents of the constants at `consts`: params
    /// (constants, their tangents), results the tangents of the float
    /// results (at `float_results`).
    pub fn tangent(&self, consts: &[usize], float_results: &[usize]) -> Cond {
        let n_out = self.then.outs.len();
        let order: Vec<usize> = (0..self.n_consts() + consts.len()).collect();
        let outs: Vec<usize> = float_results.iter().map(|k| n_out + k).collect();
        self.map_branches(
            |b| {
                let j = jvp_wrt(b, consts);
                crate::transforms::simplify::simplify(&rearranged(&j, &order, &outs))
            },
            consts.len(),
        )
    }

    /// The transpose of this tangent cond: params (the primal constants,
    /// one cotangent per result), results the cotangents of the linear
    /// constants.
    pub fn transposed(&self) -> Cond {
        let nk = self.n_consts();
        let n_primal = nk - self.n_linear;
        let n_out = self.then.outs.len();
        let wrt: Vec<usize> = (n_primal..nk).collect();
        self.map_branches(
            |b| {
                let v = vjp_cotangents(b, &wrt);
                // The linear params are read as zeros: a function linear in
                // them has a VJP that does not depend on them.
                let keep: Vec<Option<usize>> =
                    (0..n_primal).chain(nk..nk + n_out).map(Some).collect();
                zero_params(&v, &keep)
            },
            0,
        )
    }

    /// The cond with only the results at `results`, taking the same
    /// constants (an unread array constant may still be what gives a
    /// branch the size of a dimension, so none is dropped here).
    pub fn with_results(&self, results: &[usize]) -> Cond {
        self.map_branches(
            |b| {
                let mut g = b.clone();
                g.outs = results.iter().map(|r| b.outs[*r]).collect();
                crate::transforms::simplify::simplify(&g)
            },
            self.n_linear,
        )
    }

    /// The cond with only the results at `results` and the constants its
    /// branches then read; also returns the constants kept.
    pub fn pruned(&self, results: &[usize]) -> (Cond, Vec<usize>) {
        let pick = |b: &Function| {
            let mut g = b.clone();
            g.outs = results.iter().map(|r| b.outs[*r]).collect();
            crate::transforms::simplify::simplify(&g)
        };
        let (t, e) = (pick(&self.then), pick(&self.otherwise));
        let read = |b: &Function| -> Vec<bool> {
            let mut used = vec![false; b.types.len()];
            for v in b.eqns.iter().flat_map(|e| &e.ins).chain(&b.outs) {
                used[v.index()] = true;
            }
            b.params.iter().map(|p| used[p.index()]).collect()
        };
        let (rt, re) = (read(&t), read(&e));
        let kept: Vec<usize> = (0..self.n_consts()).filter(|k| rt[*k] || re[*k]).collect();
        let n_primal = self.n_consts() - self.n_linear;
        let n_linear = kept.iter().filter(|k| **k >= n_primal).count();
        let all: Vec<usize> = (0..results.len()).collect();
        let cond = Cond {
            then: rearranged(&t, &kept, &all),
            otherwise: rearranged(&e, &kept, &all),
            n_linear,
        };
        (cond, kept)
    }

    /// Both branches simplified.
    pub fn simplified(&self) -> Cond {
        self.map_branches(crate::transforms::simplify::simplify, self.n_linear)
    }

    pub fn header(&self) -> String {
        format!("cond[{}]", self.n_linear)
    }

    pub fn functions(&self) -> Vec<&Function> {
        self.branches().to_vec()
    }

    pub fn from_text(arg: &str, fns: Vec<Function>) -> Result<Cond, String> {
        let bad = || format!("bad op `cond[{arg}]`");
        let [then, otherwise]: [Function; 2] = fns.try_into().map_err(|_| bad())?;
        Ok(Cond {
            then,
            otherwise,
            n_linear: arg.parse().map_err(|_| bad())?,
        })
    }
}

/// Add `if pred { then(consts) } else { otherwise(consts) }` to `f` (JAX's
/// `lax.cond`); its results are the taken branch's.
pub fn push_cond(
    f: &mut Function,
    pred: Var,
    consts: &[Var],
    then: Function,
    otherwise: Function,
) -> Result<Vec<Var>, String> {
    let c = Cond {
        then,
        otherwise,
        n_linear: 0,
    };
    let ins: Vec<Var> = std::iter::once(pred)
        .chain(consts.iter().copied())
        .collect();
    f.push_all(Op::Cond(Box::new(c)), &ins)
}

/// JVP of a cond: the primal results, and a tangent for each (`None`: zero).
pub fn cond_jvp(
    g: &mut Function,
    c: &Cond,
    ins: &[Var],
    t: &[Option<Var>],
) -> (Vec<Var>, Vec<Option<Var>>) {
    let primal = g
        .push_all(Op::Cond(Box::new(c.clone())), ins)
        .expect("internal error: copying a cond");
    let consts: Vec<usize> = (0..c.n_consts()).filter(|k| t[1 + k].is_some()).collect();
    let floats: Vec<usize> = (0..c.then.outs.len())
        .filter(|k| c.then.dtype(c.then.outs[*k]).is_float())
        .collect();
    if consts.is_empty() || floats.is_empty() {
        return (primal.clone(), vec![None; primal.len()]);
    }
    let tc = c.tangent(&consts, &floats);
    let mut operands = ins.to_vec();
    operands.extend(consts.iter().map(|k| t[1 + k].expect("a tangent")));
    // A result whose tangent is the constant 0 in both branches (it does
    // not depend on the tangents taken: a comparison's, a stop_gradient's,
    // a value computed from other params) is a symbolic zero, not a result.
    let [zt, ze] = tc.branches().map(crate::transforms::zeros::zero_results);
    let nonzero: Vec<usize> = (0..floats.len()).filter(|k| !(zt[*k] && ze[*k])).collect();
    if nonzero.is_empty() {
        return (primal.clone(), vec![None; primal.len()]);
    }
    let tc = if nonzero.len() < floats.len() {
        tc.with_results(&nonzero)
    } else {
        tc
    };
    let floats: Vec<usize> = nonzero.iter().map(|k| floats[*k]).collect();
    let tangents = g
        .push_all(Op::Cond(Box::new(tc)), &operands)
        .expect("internal error: building a tangent cond");
    let ts = (0..primal.len())
        .map(|k| floats.iter().position(|f| *f == k).map(|p| tangents[p]))
        .collect();
    (primal, ts)
}

/// Transpose rule of a tangent cond (`known`, `cts`: as `Op::transpose`
/// takes them): the cond of the branches' transposes, on the same predicate
/// and primal constants, for the results that have a cotangent only (the
/// others' are symbolic zeros, not zeros a branch would multiply by its
/// local derivatives). A constant whose cotangent is the constant 0 in both
/// transposed branches gets none. As JAX's `_cond_transpose`, a constant
/// read by one branch only gets a zero from the other (a materialized zero:
/// which branch runs is known at run time only).
pub(crate) fn cond_transpose(
    g: &mut Function,
    c: &Cond,
    known: &[Option<Var>],
    cts: &[Option<Var>],
) -> Vec<Option<Var>> {
    let live: Vec<usize> = (0..cts.len()).filter(|k| cts[*k].is_some()).collect();
    let n_primal = 1 + c.n_consts() - c.n_linear;
    let mut ins: Vec<Var> = known[..n_primal]
        .iter()
        .map(|v| v.expect("internal error: a cond's primal operand"))
        .collect();
    ins.extend(cts.iter().flatten());
    let tr = if live.len() < cts.len() {
        c.with_results(&live).transposed()
    } else {
        c.transposed()
    };
    let [zt, ze] = tr.branches().map(crate::transforms::zeros::zero_results);
    let back = g
        .push_all(Op::Cond(Box::new(tr)), &ins)
        .expect("internal error: transposing a cond");
    let mut out = vec![None; n_primal];
    out.extend(
        back.into_iter()
            .enumerate()
            .map(|(q, v)| (!(zt[q] && ze[q])).then_some(v)),
    );
    out
}

/// Batching rule of a cond: every result batched.
pub fn cond_batch(
    g: &mut Function,
    c: &Cond,
    ins: &[Var],
    batched: &[bool],
    axis: &BatchAxis,
) -> Vec<Var> {
    let consts = &ins[1..];
    let const_batched = &batched[1..];
    if !batched[0] {
        let axes: Vec<Option<usize>> = const_batched.iter().map(|b| b.then_some(0)).collect();
        let outs = vec![Some(0); c.then.outs.len()];
        let bc = c.map_branches(
            |b| vmap_sized(b, &axes, &outs, axis).expect("internal error: batching a cond branch"),
            c.n_linear,
        );
        return g
            .push_all(Op::Cond(Box::new(bc)), ins)
            .expect("internal error: batching a cond");
    }
    // A per-example predicate: both branches run, a select picks.
    let [t, e] = c
        .branches()
        .map(|b| batched_branch(g, b, consts, const_batched, axis));
    t.iter()
        .zip(&e)
        .map(|(t, e)| {
            let m = mask_over(g, ins[0], *t);
            g.select(m, *t, *e)
        })
        .collect()
}

/// The branch `b` inlined into `g` on `consts`, its results all batched.
fn batched_branch(
    g: &mut Function,
    b: &Function,
    consts: &[Var],
    batched: &[bool],
    axis: &BatchAxis,
) -> Vec<Var> {
    let size = &axis.size;
    if batched.iter().any(|x| *x) {
        let axes: Vec<Option<usize>> = batched.iter().map(|x| x.then_some(0)).collect();
        let bb = vmap_sized(b, &axes, &vec![Some(0); b.outs.len()], axis)
            .expect("internal error: batching a cond branch");
        inline(g, &bb, consts)
    } else {
        inline(g, b, consts)
            .into_iter()
            .map(|v| g.broadcast_batch(v, size))
            .collect()
    }
}
