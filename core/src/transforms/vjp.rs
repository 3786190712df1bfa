//! Reverse mode as JAX builds it: JVP, then linearize (partial evaluation
//! splits the JVP graph into the primal part, which is copied, and the part
//! linear in the tangents), then transpose the linear part, walking it
//! backwards with each linear op's transpose rule. Only linear ops need
//! transpose rules.

use super::jvp::jvp_raw;
use super::simplify::simplify_owned;
use crate::ir::{Eqn, Function, Var};
use crate::ops::elementwise::BinaryOp;
use crate::ops::Op;
use std::collections::HashMap;

/// Where the output cotangents come from.
enum Seed {
    /// One cotangent param per output.
    Params,
    /// The single scalar output's cotangent is 1 (a gradient).
    One,
}

/// Reverse mode. Params: the primals, then one cotangent per output (`ct`, or
/// `ct0`, `ct1`, … with several outputs). Outputs: the primal outputs, then one
/// cotangent per float param (integers carry none).
pub fn vjp(f: &Function) -> Function {
    let all: Vec<usize> = (0..f.params.len())
        .filter(|i| f.dtype(f.params[*i]).is_float())
        .collect();
    vjp_wrt(f, &all)
}

/// Reverse mode with cotangents for the params at `wrt` only. Params: the
/// primals, then one cotangent per output; outputs: the primal outputs,
/// then one cotangent per `wrt` entry, in `wrt`'s order.
pub fn vjp_wrt(f: &Function, wrt: &[usize]) -> Function {
    let _running = super::Running::start();
    let g = transpose_jvp(f, wrt, Seed::Params, true);
    super::verify_outermost(&g, "vjp");
    g
}

/// The cotangents of the params at `wrt` alone. Params: the primals, then
/// one cotangent per output; outputs: one cotangent per `wrt` entry.
///
/// A function linear in the params at `wrt` (a tangent cond's branch) is
/// transposed as it is. Taking its JVP first, as for any other function,
/// made a tangent of the tangent at every level of nested conds (each
/// branch's params growing by one per level, and the work quadratic in
/// the depth or worse).
pub(crate) fn vjp_cotangents(f: &Function, wrt: &[usize]) -> Function {
    let _running = super::Running::start();
    let g = if is_linear_in(f, wrt) {
        let tangents: Vec<Var> = wrt.iter().map(|w| f.params[*w]).collect();
        let name = format!("{}_vjp", f.name);
        transpose(
            f,
            f.params.len(),
            &tangents,
            &tangents,
            &f.outs,
            None,
            Seed::Params,
            &name,
        )
    } else {
        transpose_jvp(f, wrt, Seed::Params, false)
    };
    super::verify_outermost(&g, "vjp");
    g
}

/// Every equation reading a value that depends on the params at `wrt`
/// is linear in each such operand (and no output is read nonlinearly).
fn is_linear_in(f: &Function, wrt: &[usize]) -> bool {
    let mut linear = vec![false; f.types.len()];
    for w in wrt {
        linear[f.params[*w].index()] = true;
    }
    for e in &f.eqns {
        let mut n = 0;
        for (k, v) in e.ins.iter().enumerate() {
            if linear[v.index()] {
                if !e.op.is_linear_in(k) {
                    return false;
                }
                n += 1;
            }
        }
        // Linear in each operand alone, not in both together.
        let bilinear = matches!(
            e.op,
            Op::Binary(BinaryOp::Mul) | Op::Dot | Op::DotGeneral(_)
        );
        if n > 1 && bilinear {
            return false;
        }
        for o in &e.outs {
            linear[o.index()] = n > 0;
        }
    }
    true
}

/// Gradient of a function with one scalar float output with respect to the
/// params at indices `wrt`. Outputs: one gradient per `wrt` entry.
pub fn grad(f: &Function, wrt: &[usize]) -> Result<Function, String> {
    let _running = super::Running::start();
    check_grad(f, wrt)?;
    let mut g = transpose_jvp(f, wrt, Seed::One, false);
    g.name = format!("{}_grad", f.name);
    super::verify_outermost(&g, "grad");
    Ok(g)
}

/// Like `grad`, with the value first: outputs `(value, grads...)`.
pub fn value_and_grad(f: &Function, wrt: &[usize]) -> Result<Function, String> {
    let _running = super::Running::start();
    check_grad(f, wrt)?;
    let mut g = transpose_jvp(f, wrt, Seed::One, true);
    g.name = format!("{}_value_and_grad", f.name);
    super::verify_outermost(&g, "value_and_grad");
    Ok(g)
}

fn check_grad(f: &Function, wrt: &[usize]) -> Result<(), String> {
    if f.outs.len() != 1 || !f.shape(f.outs[0]).is_scalar() || !f.dtype(f.outs[0]).is_float() {
        return Err(format!(
            "grad of `{}` needs exactly one scalar float output",
            f.name
        ));
    }
    if let Some(i) = wrt
        .iter()
        .find(|i| **i >= f.params.len() || !f.dtype(f.params[**i]).is_float())
    {
        return Err(format!(
            "grad of `{}`: argument index {i} is not a float parameter",
            f.name
        ));
    }
    Ok(())
}

fn transpose_jvp(f: &Function, wrt: &[usize], seed: Seed, keep_value: bool) -> Function {
    let j = jvp_raw(f, wrt);
    let n_primal = f.params.len();
    let n_out = f.outs.len();
    let like: Vec<Var> = wrt.iter().map(|w| j.params[*w]).collect();
    transpose(
        &j,
        n_primal,
        &j.params[n_primal..],
        &like,
        &j.outs[n_out..],
        keep_value.then(|| &j.outs[..n_out]),
        seed,
        &format!("{}_vjp", f.name),
    )
}

/// Transpose `j`, linear in its params `tangents`: the result takes `j`'s
/// first `n_keep` params, then a cotangent per entry of `seeded` (or the
/// seed 1), and gives the values `value` (if any), then the cotangent of
/// each tangent param (zeros shaped like the corresponding `like` param
/// where nothing reaches it).
#[allow(clippy::too_many_arguments)]
fn transpose(
    j: &Function,
    n_keep: usize,
    tangents: &[Var],
    like: &[Var],
    seeded: &[Var],
    value: Option<&[Var]>,
    seed: Seed,
    name: &str,
) -> Function {
    // Linearize: a value is linear when it depends on a tangent param.
    let mut linear = vec![false; j.types.len()];
    for t in tangents {
        linear[t.index()] = true;
    }
    for e in &j.eqns {
        let l = e.ins.iter().any(|v| linear[v.index()]);
        for o in &e.outs {
            linear[o.index()] = l;
        }
    }
    let is_linear = |e: &Eqn| e.ins.iter().any(|v| linear[v.index()]);

    // The primal part is copied as is.
    let (mut g, mut map) = Function::with_params_of(j, name, n_keep);
    let n_out = seeded.len();
    let mut seeds = Vec::new();
    for (i, o) in seeded.iter().enumerate() {
        let ty = j.ty(*o).clone();
        seeds.push(match seed {
            Seed::Params => {
                let name = if n_out == 1 {
                    "ct".to_string()
                } else {
                    format!("ct{i}")
                };
                g.add_param(&name, ty)
            }
            Seed::One => g.full(1.0, ty.dtype, &ty.shape),
        });
    }
    for e in j.eqns.iter().filter(|e| !is_linear(e)) {
        g.copy_eqn(e, &mut map);
    }

    // Transpose the linear part, last equation first.
    let mut ct: HashMap<Var, Var> = HashMap::new();
    let accumulate = |g: &mut Function, ct: &mut HashMap<Var, Var>, v: Var, c: Var| {
        let sum = match ct.get(&v) {
            Some(prev) => g.add(*prev, c),
            None => c,
        };
        ct.insert(v, sum);
    };
    for (s, tout) in seeds.iter().zip(seeded) {
        let tout = *tout;
        if linear[tout.index()] {
            accumulate(&mut g, &mut ct, tout, *s);
        }
    }
    for e in j.eqns.iter().rev().filter(|e| is_linear(e)) {
        let cts: Vec<Option<Var>> = e.outs.iter().map(|o| ct.remove(o)).collect();
        if cts.iter().all(Option::is_none) {
            continue;
        }
        let known: Vec<Option<Var>> = e
            .ins
            .iter()
            .map(|v| {
                if linear[v.index()] {
                    None
                } else {
                    map[v.index()]
                }
            })
            .collect();
        let types: Vec<_> = e.ins.iter().map(|v| j.ty(*v).clone()).collect();
        let back = e.op.transpose(&mut g, &known, &types, &cts);
        for (v, c) in e.ins.iter().zip(back) {
            if let (true, Some(c)) = (linear[v.index()], c) {
                accumulate(&mut g, &mut ct, *v, c);
            }
        }
    }

    if let Some(value) = value {
        g.outs = value
            .iter()
            .map(|o| map[o.index()].expect("primal output"))
            .collect();
    }
    for (t, like) in tangents.iter().zip(like) {
        let v = match ct.get(t) {
            Some(c) => *c,
            None => {
                let like = map[like.index()].expect("param");
                g.zeros_like(like)
            }
        };
        g.outs.push(v);
    }
    simplify_owned(g)
}
