//! Full Jacobians and Hessians (`jax.jacfwd`, `jax.jacrev`, `jax.hessian`):
//! the JVP (or VJP) batched over a basis of tangents (or cotangents). The
//! basis is the identity on the input's (output's) shape, built in the IR
//! from iota comparisons, and the batching is one vmap per axis of that
//! shape with the axis's own size, so symbolic shapes stay symbolic: the
//! Jacobian of `y: S_y` with respect to `x: S_x` has shape `S_y ++ S_x`.

use super::jvp::jvp_raw;
use super::simplify::simplify;
use super::vjp::vjp_cotangents;
use super::vmap::{vmap_sized, BatchAxis};
use crate::ir::{Function, Var};
use crate::ops::elementwise::CmpOp;
use crate::ops::Op;
use crate::shape::Shape;
use crate::verify::debug_verify;

/// `jax.jacfwd(f, argnums=wrt)`: forward mode, one JVP per input element.
pub fn jacfwd(f: &Function, wrt: usize) -> Result<Function, String> {
    let x = check(f, wrt, "jacfwd")?;
    let x_shape = f.shape(x).clone();
    let y_rank = f.shape(f.outs[0]).rank();
    // (primals, t_x) -> t_y
    let mut t = jvp_raw(f, &[wrt]);
    t.outs.drain(..1);
    let basis_at = t.params.len() - 1;
    let batched = batch_over_basis(&t, basis_at, &x_shape, y_rank)?;
    finish(f, batched, basis_at, &x_shape, "jacfwd")
}

/// `jax.jacrev(f, argnums=wrt)`: reverse mode, one VJP per output element.
pub fn jacrev(f: &Function, wrt: usize) -> Result<Function, String> {
    check(f, wrt, "jacrev")?;
    let y_shape = f.shape(f.outs[0]).clone();
    // (primals, ct_y) -> ct_x
    let v = vjp_cotangents(f, &[wrt]);
    let basis_at = v.params.len() - 1;
    let batched = batch_over_basis(&v, basis_at, &y_shape, 0)?;
    finish(f, batched, basis_at, &y_shape, "jacrev")
}

/// `jax.hessian(f, argnums=wrt)` = `jacfwd(jacrev(f))`: forward over reverse.
pub fn hessian(f: &Function, wrt: usize) -> Result<Function, String> {
    if f.outs.len() != 1 || !f.shape(f.outs[0]).is_scalar() {
        return Err(format!(
            "hessian of `{}` needs exactly one scalar output",
            f.name
        ));
    }
    let mut h = jacfwd(&jacrev(f, wrt)?, wrt)?;
    h.name = format!("{}_hessian", f.name);
    Ok(h)
}

fn check(f: &Function, wrt: usize, what: &str) -> Result<Var, String> {
    if f.outs.len() != 1 || !f.dtype(f.outs[0]).is_float() {
        return Err(format!(
            "{what} of `{}` needs exactly one float output",
            f.name
        ));
    }
    let Some(x) = f.params.get(wrt) else {
        return Err(format!("{what} of `{}`: no parameter {wrt}", f.name));
    };
    if !f.dtype(*x).is_float() {
        return Err(format!(
            "{what} of `{}`: `{}` is not a float parameter",
            f.name, f.param_names[wrt]
        ));
    }
    Ok(*x)
}

/// Batch param `at` of `g` (of shape `s`) over each axis of `s` in turn,
/// innermost (last) axis first, each batch axis of the result landing at
/// `out_axis`: the param becomes `s ++ s` and the output gains `s`'s axes,
/// in order, at `out_axis`.
fn batch_over_basis(
    g: &Function,
    at: usize,
    s: &Shape,
    out_axis: usize,
) -> Result<Function, String> {
    let mut g = g.clone();
    for d in s.0.iter().rev() {
        let mut in_axes = vec![None; g.params.len()];
        in_axes[at] = Some(0);
        let out_axes = vec![Some(out_axis); g.outs.len()];
        g = vmap_sized(&g, &in_axes, &out_axes, &BatchAxis::unnamed(d))?;
    }
    Ok(g)
}

/// `f`'s params alone, with `batched`'s basis param (`at`) replaced by the
/// identity on `s` (shape `s ++ s`).
fn finish(
    f: &Function,
    batched: Function,
    at: usize,
    s: &Shape,
    what: &str,
) -> Result<Function, String> {
    let (mut h, mut map) =
        Function::with_params_of(&batched, &format!("{}_{what}", f.name), f.params.len());
    debug_assert_eq!(at, f.params.len());
    let dtype = batched.dtype(batched.params[at]);
    let eye = identity(&mut h, s, dtype);
    map[batched.params[at].index()] = Some(eye);
    for e in &batched.eqns {
        h.copy_eqn(e, &mut map);
    }
    h.outs = batched
        .outs
        .iter()
        .map(|o| map[o.index()].expect("verified IR"))
        .collect();
    let h = simplify(&h);
    debug_verify(&h, what);
    Ok(h)
}

/// The identity on shape `s`: a tensor of shape `s ++ s` that is 1 where
/// the two coordinates agree and 0 elsewhere.
fn identity(f: &mut Function, s: &Shape, dtype: crate::dtype::DType) -> Var {
    let r = s.rank();
    let mut both = s.clone();
    both.0.extend(s.0.iter().cloned());
    let mut acc = f.full(1.0, dtype, &both);
    let zero = f.full(0.0, dtype, &both);
    for k in 0..r {
        let mut iota = |axis| {
            f.push(
                Op::Iota {
                    shape: both.clone(),
                    axis,
                    dtype,
                },
                &[],
            )
            .expect("internal error: iota")
        };
        let (a, b) = (iota(k), iota(r + k));
        let same = f.cmp(CmpOp::Eq, a, b);
        acc = f.select(same, acc, zero);
    }
    acc
}
