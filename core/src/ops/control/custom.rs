//! Custom derivative rules, as JAX's `custom_jvp` and `custom_vjp`: ops
//! that carry the function they compute and the user's rule for its
//! derivative, so that every transform uses the rule instead of
//! differentiating the function's own equations.
//!
//! - `custom_jvp_call` (`Custom::Jvp`): evaluates `primal`; its JVP rule is
//!   `jvp` applied to the primals and the tangents (a zero for a tangent
//!   that is a symbolic zero, as JAX instantiates them), which gives the
//!   primal results and their tangents. Reverse mode then linearizes and
//!   transposes what `jvp` computes, so its tangents must be linear in the
//!   tangents it takes (as JAX requires). Higher orders differentiate
//!   `jvp`'s own equations, as in JAX.
//! - `custom_vjp_call` (`Custom::Vjp`): evaluates `primal`; its JVP rule
//!   runs `fwd` (the primal results, then residuals) and a `custom_lin` of
//!   the residuals and the tangents, which reverse mode transposes by
//!   calling `bwd` on the residuals and the cotangents. Forward mode has
//!   nothing to run for a `custom_lin` (JAX: "can't apply forward-mode
//!   autodiff (jvp) to a custom_vjp function"): its JVP and its evaluation
//!   are refused, and the macros report a transform that leaves one in its
//!   result (`has_custom_lin`).
//! - Batching: every operand is given the batch axis (an unbatched one is
//!   broadcast) and each carried function is batched with all its params
//!   and results batched; the cotangent of a broadcast operand is summed by
//!   the broadcast's own transpose, as JAX's batched `bwd` sums it.
//! - Fusion and the scalar code generator see the primal only
//!   (`inline_primal`): after the transforms the rules have done their work.
//!
//! Parameter layout of the carried functions, with `float` the operands and
//! results of a float dtype (the only ones with tangents, as oxla's `jvp`
//! and `vjp` transforms lay them out):
//! - `jvp(primals…, tangents of the float primals…) -> (results…, tangents
//!   of the float results…)`;
//! - `fwd(primals…) -> (results…, residuals…)`;
//! - `bwd(residuals…, cotangents of the float results…) -> cotangents of the
//!   float primals…`;
//! - `custom_lin`'s operands: the residuals, then the tangents of the float
//!   primals; its results: the tangents of the float results.

use super::surgery::inline;
use crate::interp;
use crate::ir::{Function, Type, Var};
use crate::ops::Op;
use crate::tensor::Tensor;
use crate::transforms::vmap::{vmap_sized, BatchAxis};
use crate::transforms::Unsupported;

/// What forward mode through a `custom_vjp` function says (JAX's words).
pub const FORWARD_OVER_CUSTOM_VJP: &str = "can't apply forward-mode autodiff (jvp) to a custom_vjp function: \
     a custom_vjp rule supports reverse mode only (`grad`, `vjp`, `jacrev`, and `hessian`, whose outer \
     derivative is forward mode over the reverse one); give the function a `custom_jvp` rule for forward mode";

#[derive(Clone, Debug, PartialEq)]
pub enum Custom {
    /// `custom_jvp_call`: the primal function and its JVP rule.
    Jvp { primal: Function, jvp: Function },
    /// `custom_vjp_call`: the primal function, its forward pass (results,
    /// then residuals) and its backward pass.
    Vjp {
        primal: Function,
        fwd: Function,
        bwd: Function,
    },
    /// `custom_lin`: the tangents of a `custom_vjp` function's results,
    /// linear in the operands after the `n_res` residuals; its transpose is
    /// `bwd`.
    Lin { bwd: Function, n_res: usize },
}

fn types_of(f: &Function, vs: &[Var]) -> Vec<Type> {
    vs.iter().map(|v| f.ty(*v).clone()).collect()
}

fn floats(types: &[Type]) -> Vec<Type> {
    types
        .iter()
        .filter(|t| t.dtype.is_float())
        .cloned()
        .collect()
}

fn list(ts: &[Type]) -> String {
    ts.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// An error unless `got` is `want`, naming what is compared.
fn same(what: &str, got: &[Type], want: &[Type]) -> Result<(), String> {
    if got == want {
        return Ok(());
    }
    Err(format!(
        "{what}: ({}), expected ({})",
        list(got),
        list(want)
    ))
}

impl Custom {
    pub fn name(&self) -> &'static str {
        match self {
            Custom::Jvp { .. } => "custom_jvp_call",
            Custom::Vjp { .. } => "custom_vjp_call",
            Custom::Lin { .. } => "custom_lin",
        }
    }

    pub fn n_operands(&self) -> usize {
        match self {
            Custom::Jvp { primal, .. } | Custom::Vjp { primal, .. } => primal.params.len(),
            Custom::Lin { bwd, n_res } => n_res + bwd.outs.len(),
        }
    }

    pub fn functions(&self) -> Vec<&Function> {
        match self {
            Custom::Jvp { primal, jvp } => vec![primal, jvp],
            Custom::Vjp { primal, fwd, bwd } => vec![primal, fwd, bwd],
            Custom::Lin { bwd, .. } => vec![bwd],
        }
    }

    fn functions_mut(&mut self) -> Vec<&mut Function> {
        match self {
            Custom::Jvp { primal, jvp } => vec![primal, jvp],
            Custom::Vjp { primal, fwd, bwd } => vec![primal, fwd, bwd],
            Custom::Lin { bwd, .. } => vec![bwd],
        }
    }

    /// Each carried function mapped by `f`.
    pub fn map_functions(&self, f: impl Fn(&Function) -> Function) -> Custom {
        let mut c = self.clone();
        for g in c.functions_mut() {
            *g = f(g);
        }
        c
    }

    pub fn header(&self) -> String {
        match self {
            Custom::Lin { n_res, .. } => format!("custom_lin[{n_res}]"),
            c => format!("{}[]", c.name()),
        }
    }

    pub fn from_text(name: &str, arg: &str, fns: Vec<Function>) -> Result<Custom, String> {
        let bad = || format!("bad op `{name}[{arg}]`");
        match name {
            "custom_jvp_call" if arg.is_empty() => {
                let [primal, jvp]: [Function; 2] = fns.try_into().map_err(|_| bad())?;
                Ok(Custom::Jvp { primal, jvp })
            }
            "custom_vjp_call" if arg.is_empty() => {
                let [primal, fwd, bwd]: [Function; 3] = fns.try_into().map_err(|_| bad())?;
                Ok(Custom::Vjp { primal, fwd, bwd })
            }
            "custom_lin" => {
                let [bwd]: [Function; 1] = fns.try_into().map_err(|_| bad())?;
                let n_res = arg.parse().map_err(|_| bad())?;
                Ok(Custom::Lin { bwd, n_res })
            }
            _ => Err(bad()),
        }
    }

    /// Shape rule: the carried functions agree with each other (the layout
    /// in the module docs) and with the operands.
    pub fn infer(&self, ins: &[&Type]) -> Result<Vec<Type>, String> {
        let ins: Vec<Type> = ins.iter().map(|t| (*t).clone()).collect();
        match self {
            Custom::Jvp { primal, jvp } => {
                let p_in = types_of(primal, &primal.params);
                let p_out = types_of(primal, &primal.outs);
                same("custom_jvp_call: operands", &ins, &p_in)?;
                let want_in = [p_in.clone(), floats(&p_in)].concat();
                let want_out = [p_out.clone(), floats(&p_out)].concat();
                same(
                    "custom_jvp_call: the jvp rule's params",
                    &types_of(jvp, &jvp.params),
                    &want_in,
                )?;
                same(
                    "custom_jvp_call: the jvp rule's results",
                    &types_of(jvp, &jvp.outs),
                    &want_out,
                )?;
                Ok(p_out)
            }
            Custom::Vjp { primal, fwd, bwd } => {
                let p_in = types_of(primal, &primal.params);
                let p_out = types_of(primal, &primal.outs);
                same("custom_vjp_call: operands", &ins, &p_in)?;
                same(
                    "custom_vjp_call: fwd's params",
                    &types_of(fwd, &fwd.params),
                    &p_in,
                )?;
                let f_out = types_of(fwd, &fwd.outs);
                if f_out.len() < p_out.len() || f_out[..p_out.len()] != p_out[..] {
                    return Err(format!(
                        "custom_vjp_call: fwd's results ({}) must start with the function's ({})",
                        list(&f_out),
                        list(&p_out)
                    ));
                }
                let res = &f_out[p_out.len()..];
                same(
                    "custom_vjp_call: bwd's params",
                    &types_of(bwd, &bwd.params),
                    &[res.to_vec(), floats(&p_out)].concat(),
                )?;
                same(
                    "custom_vjp_call: bwd's results",
                    &types_of(bwd, &bwd.outs),
                    &floats(&p_in),
                )?;
                Ok(p_out)
            }
            Custom::Lin { bwd, n_res } => {
                if *n_res > bwd.params.len() {
                    return Err("custom_lin: more residuals than bwd takes".into());
                }
                same(
                    "custom_lin: residual operands",
                    &ins[..*n_res],
                    &types_of(bwd, &bwd.params[..*n_res]),
                )?;
                same(
                    "custom_lin: tangent operands",
                    &ins[*n_res..],
                    &types_of(bwd, &bwd.outs),
                )?;
                Ok(types_of(bwd, &bwd.params[*n_res..]))
            }
        }
    }

    /// Reference evaluation: the primal function. A `custom_lin` is forward
    /// mode through a `custom_vjp` function, which has no rule.
    pub fn eval(&self, ins: &[&Tensor]) -> Result<Vec<Tensor>, String> {
        let args: Vec<Tensor> = ins.iter().map(|t| (*t).clone()).collect();
        match self {
            Custom::Jvp { primal, .. } | Custom::Vjp { primal, .. } => interp::eval(primal, &args),
            Custom::Lin { .. } => Err(FORWARD_OVER_CUSTOM_VJP.into()),
        }
    }

    /// Which results may get a tangent when the operands with `ins[k]` have
    /// one: every float result, when any operand has one (the rule is
    /// opaque to the symbolic-zero analysis).
    pub fn tangent_reach(&self, ins: &[bool]) -> Vec<bool> {
        let any = ins.iter().any(|x| *x);
        let (f, outs) = match self {
            Custom::Jvp { primal, .. } | Custom::Vjp { primal, .. } => (primal, &primal.outs[..]),
            Custom::Lin { bwd, n_res } => (bwd, &bwd.params[*n_res..]),
        };
        outs.iter().map(|o| any && f.dtype(*o).is_float()).collect()
    }

    /// Operand `i` carries tangents: a `custom_lin`'s after its residuals.
    pub fn is_linear_in(&self, i: usize) -> bool {
        match self {
            Custom::Lin { n_res, .. } => i >= *n_res,
            _ => false,
        }
    }
}

/// Add `primal(args)` with the JVP rule `jvp` (JAX's `custom_jvp`); its
/// results are `primal`'s.
pub fn push_custom_jvp(
    f: &mut Function,
    args: &[Var],
    primal: Function,
    jvp: Function,
) -> Result<Vec<Var>, String> {
    f.push_all(Op::Custom(Box::new(Custom::Jvp { primal, jvp })), args)
}

/// Add `primal(args)` with the forward and backward passes `fwd` and `bwd`
/// (JAX's `custom_vjp`); its results are `primal`'s.
pub fn push_custom_vjp(
    f: &mut Function,
    args: &[Var],
    primal: Function,
    fwd: Function,
    bwd: Function,
) -> Result<Vec<Var>, String> {
    f.push_all(Op::Custom(Box::new(Custom::Vjp { primal, fwd, bwd })), args)
}

/// The tangents `t` of the float operands among `ins`, a zero for each
/// symbolic zero (JAX instantiates them for a custom rule).
fn float_tangents(g: &mut Function, ins: &[Var], t: &[Option<Var>]) -> Vec<Var> {
    let mut out = Vec::new();
    for (x, t) in ins.iter().zip(t) {
        if g.dtype(*x).is_float() {
            out.push(t.unwrap_or_else(|| g.zeros_like(*x)));
        }
    }
    out
}

/// The tangents of the results `outs`: `float_ts` for the float ones in
/// order, `None` for the others.
fn spread(g: &Function, outs: &[Var], float_ts: &[Var]) -> Vec<Option<Var>> {
    let mut it = float_ts.iter();
    outs.iter()
        .map(|o| {
            g.dtype(*o)
                .is_float()
                .then(|| *it.next().expect("a tangent per float result"))
        })
        .collect()
}

/// JVP rule of a custom op (see the module docs).
pub fn custom_jvp(
    g: &mut Function,
    c: &Custom,
    ins: &[Var],
    t: &[Option<Var>],
) -> (Vec<Var>, Vec<Option<Var>>) {
    if let Custom::Lin { .. } = c {
        std::panic::panic_any(Unsupported(FORWARD_OVER_CUSTOM_VJP.into()));
    }
    if t.iter().all(Option::is_none) {
        let outs = g
            .push_all(Op::Custom(Box::new(c.clone())), ins)
            .expect("internal error: copying a custom call");
        let none = vec![None; outs.len()];
        return (outs, none);
    }
    match c {
        Custom::Jvp { primal, jvp } => {
            let ts = float_tangents(g, ins, t);
            let args = [ins.to_vec(), ts].concat();
            let all = inline(g, jvp, &args);
            let n = primal.outs.len();
            let (outs, touts) = all.split_at(n);
            let touts = spread(g, outs, touts);
            (outs.to_vec(), touts)
        }
        Custom::Vjp { primal, fwd, bwd } => {
            let all = inline(g, fwd, ins);
            let n = primal.outs.len();
            let (outs, res) = all.split_at(n);
            let ts = float_tangents(g, ins, t);
            let lin = Custom::Lin {
                bwd: bwd.clone(),
                n_res: res.len(),
            };
            let operands = [res.to_vec(), ts].concat();
            let touts = g
                .push_all(Op::Custom(Box::new(lin)), &operands)
                .expect("internal error: building a custom_lin");
            let touts = spread(g, outs, &touts);
            (outs.to_vec(), touts)
        }
        Custom::Lin { .. } => unreachable!("refused above"),
    }
}

/// Transpose rule of a `custom_lin`: `bwd` on the residuals and the
/// cotangents (a zero for each symbolic zero, as JAX gives `bwd`).
pub(crate) fn custom_transpose(
    g: &mut Function,
    c: &Custom,
    known: &[Option<Var>],
    cts: &[Option<Var>],
) -> Vec<Option<Var>> {
    let Custom::Lin { bwd, n_res } = c else {
        panic!("internal error: {} is not linear", c.name());
    };
    let mut args: Vec<Var> = known[..*n_res]
        .iter()
        .map(|v| v.expect("internal error: a custom_lin's residual"))
        .collect();
    for (k, ct) in cts.iter().enumerate() {
        let p = bwd.params[n_res + k];
        args.push(match ct {
            Some(v) => *v,
            None => {
                let ty = bwd.ty(p).clone();
                g.full(0.0, ty.dtype, &ty.shape)
            }
        });
    }
    let back = inline(g, bwd, &args);
    let mut out = vec![None; *n_res];
    out.extend(
        back.into_iter()
            .zip(&known[*n_res..])
            .map(|(v, k)| k.is_none().then_some(v)),
    );
    out
}

/// Batching rule: every operand batched (an unbatched one broadcast), each
/// carried function batched in all its params and results.
pub fn custom_batch(
    g: &mut Function,
    c: &Custom,
    ins: &[Var],
    batched: &[bool],
    axis: &BatchAxis,
) -> Vec<Var> {
    let ins = g.batch_all(ins, batched, &axis.size);
    let bc = c.map_functions(|h| {
        let axes = vec![Some(0); h.params.len()];
        let outs = vec![Some(0); h.outs.len()];
        vmap_sized(h, &axes, &outs, axis).expect("internal error: batching a custom rule")
    });
    g.push_all(Op::Custom(Box::new(bc)), &ins)
        .expect("internal error: batching a custom call")
}

/// Whether `f` (or a function nested in it) holds a `custom_lin`: forward
/// mode through a `custom_vjp` function, which nothing can run.
pub fn has_custom_lin(f: &Function) -> bool {
    f.eqns.iter().any(|e| {
        matches!(&e.op, Op::Custom(c) if matches!(**c, Custom::Lin { .. }))
            || crate::text::nested_functions(&e.op)
                .into_iter()
                .any(has_custom_lin)
    })
}

/// `f` with every custom call replaced by its primal function's equations
/// (what fusion and the scalar code generator compile); an error for a
/// `custom_lin`. Nested functions of other ops are left as they are (fusion
/// inlines theirs when it fuses them). `None` when `f` holds no custom op.
pub fn inline_primal(f: &Function) -> Result<Option<Function>, String> {
    if !f.eqns.iter().any(|e| matches!(e.op, Op::Custom(_))) {
        return Ok(None);
    }
    let (mut g, mut map) = Function::with_params_of(f, &f.name, f.params.len());
    for e in &f.eqns {
        match &e.op {
            Op::Custom(c) => {
                let primal = match &**c {
                    Custom::Jvp { primal, .. } | Custom::Vjp { primal, .. } => primal,
                    Custom::Lin { .. } => return Err(FORWARD_OVER_CUSTOM_VJP.into()),
                };
                // The primal may itself call custom functions.
                let primal = match inline_primal(primal)? {
                    Some(p) => p,
                    None => primal.clone(),
                };
                let ins: Vec<Var> = e
                    .ins
                    .iter()
                    .map(|v| map[v.index()].expect("internal error: operand not yet mapped"))
                    .collect();
                for (o, v) in e.outs.iter().zip(inline(&mut g, &primal, &ins)) {
                    map[o.index()] = Some(v);
                }
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
    Ok(Some(g))
}
