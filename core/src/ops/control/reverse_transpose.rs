//! The transpose rule of the JVP of a gradient sweep: reverse over reverse
//! through a loop (`grad` of `grad`), by the symmetry of second derivatives.
//!
//! A gradient sweep `reverse_sweep(p, S)` is `G(θ, r) = ∇_{θ_S} ψ` with
//! `ψ(θ, r) = Σ_j ⟨r_j, Φ_j(θ)⟩`, where `θ` are the loop's constants and
//! initial carries, `Φ_j` the final value of carry `S.carries[j]`
//! (`SweepOf`). Its JVP for tangents of `θ_T` and of `r` is
//! `Ġ = ∂²ψ/∂θ_S∂θ_T · t_θ + (∂Φ/∂θ_S)ᵀ · t_r`, and transposing that map
//! for a cotangent `v` on `G`'s results gives
//!
//! - for `t_θ`: `∂²ψ/∂θ_T∂θ_S · v`, the JVP along `v` (on `θ_S`) of the
//!   gradient sweep for `θ_T`, `reverse_sweep(p, T)` (forward over reverse,
//!   which exists: `reverse_jvp`);
//! - for `t_r`: `∂Φ/∂θ_S · v`, the JVP of the loop itself along `v`.
//!
//! So the transpose of a reverse sweep's JVP is built from a reverse sweep's
//! JVP and a tangent loop: no new loop op, no stacked tape as a value, the
//! same checkpointing, and a `while` loop works as a `for` loop does (its
//! forward sweeps record the trip count). JAX gets there differently: its
//! scan's transpose is another scan over stacked residuals, which a
//! `while_loop` has not. The second derivative costs one tangent loop and
//! one forward-over-reverse sweep, as `hessian` does.
//!
//! The gradient sweep of `θ_T` tracks the cotangents of the carries with a
//! tangent (`T.carries`, closed under the body by `tangent_selection`): any
//! other carry does not depend on `θ_T`, so no path through it adds to
//! `∇_{θ_T} ψ`, and its `r` (if `S` has it) is dropped.
//!
//! The JVP of a JVP of a sweep (a third derivative's reverse pass) is not
//! a gradient sweep's JVP: reverse mode through it is refused with a
//! message naming forward mode, which works at every order.

use super::looping::{loop_jvp, Loop};
use super::reverse::{reverse_jvp, reverse_sweep, LoopReverse};
use crate::ir::{Function, Var};
use crate::transforms::Unsupported;

/// What reverse mode through a sweep that is not a gradient sweep's JVP
/// says.
pub(crate) const REVERSE_OVER_SWEEP: &str = "reverse mode through this loop's reverse sweep is not supported: \
     reverse over reverse through a loop works to the second order (`grad` of `grad`), \
     not through a batched gradient (`grad` of `vmap` of `grad`) or to a third order by reverse mode alone; \
     take the outer derivatives in forward mode (`jvp`/`jacfwd` of the gradient, as `hessian` does)";

/// Transpose rule of `tl`, the JVP of a gradient sweep (`known`, `cts`: as
/// `Op::transpose` takes them).
pub(crate) fn reverse_transpose(
    g: &mut Function,
    tl: &LoopReverse,
    known: &[Option<Var>],
    cts: &[Option<Var>],
) -> Vec<Option<Var>> {
    let (Some(t), Some(s)) = (tl.tangent_of(), tl.sweep_of.as_ref()) else {
        std::panic::panic_any(Unsupported(REVERSE_OVER_SWEEP.into()));
    };
    let p = &t.primal;
    let (nb, nk, nc) = (p.n_bounds(), p.n_consts, p.n_carries());
    let (na, nr) = (s.consts.len(), s.carries.len());
    // `tl`'s operands: bounds, constants, their tangents (`t.consts`),
    // carries, their tangents (`t.carries`), `r`, the `r`s' tangents.
    let at_c = nb + nk + t.consts.len();
    let at_tc = at_c + nc;
    let at_r = at_tc + t.carries.len();
    let at_tr = at_r + nr;
    let primal = |k: usize| known[k].expect("internal error: a sweep's primal operand");

    // The cotangent `v` on the gradient sweep's own results: on `θ_S`.
    let mut v: Vec<Option<Var>> = vec![None; na + nr];
    for (m, c) in tl.primal_results().into_iter().zip(cts) {
        if let Some(c) = *c {
            v[m] = Some(match v[m] {
                Some(prev) => g.add(prev, c),
                None => c,
            });
        }
    }
    let mut out = vec![None; known.len()];
    if v.iter().all(Option::is_none) {
        return out;
    }
    // The loop's operands, and `v` as a tangent of them.
    let ins: Vec<Var> = (0..nb + nk).chain(at_c..at_tc).map(primal).collect();
    let mut along: Vec<Option<Var>> = vec![None; nb + nk + nc];
    for (j, k) in s.consts.iter().enumerate() {
        along[nb + k] = v[j];
    }
    for (j, k) in s.carries.iter().enumerate() {
        along[nb + nk + k] = v[na + j];
    }

    // `t_θ`'s cotangents: the gradient sweep for `θ_T`, differentiated along `v`.
    if !t.consts.is_empty() || !t.carries.is_empty() {
        let sweep = reverse_sweep(p, &t.consts, &t.carries);
        let mut sweep_ins = ins.clone();
        for k in &t.carries {
            sweep_ins.push(match s.carries.iter().position(|c| c == k) {
                Some(j) => primal(at_r + j),
                None => {
                    let ty = p.carry_type(*k);
                    g.full(0.0, ty.dtype, &ty.shape)
                }
            });
        }
        let mut sweep_t = along.clone();
        sweep_t.extend(std::iter::repeat_n(None, t.carries.len()));
        let (_, d) = reverse_jvp(g, &sweep, &sweep_ins, &sweep_t);
        let at_tk = nb + nk;
        for (j, x) in d.into_iter().enumerate() {
            let k = if j < t.consts.len() {
                at_tk + j
            } else {
                at_tc + j - t.consts.len()
            };
            out[k] = x;
        }
    }

    // The `r`s' cotangents: the loop's final carries `S.carries`, differentiated along `v`.
    let l = Loop {
        results: s.carries.clone(),
        tangent_of: None,
        ..p.clone()
    };
    let (_, d) = loop_jvp(g, &l, &ins, &along);
    for (j, x) in d.into_iter().enumerate() {
        out[at_tr + j] = x;
    }
    out
}
