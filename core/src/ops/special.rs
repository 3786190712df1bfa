//! Special functions: elementwise ops that are primitives to the transforms
//! (each has its own derivative rule, as JAX's `erf_inv_p` has) but whose
//! kernels are an expansion into primitive ops, as XLA's client library
//! expands `ErfInv` into HLO arithmetic. Fusion expands them first
//! (`transforms::expand`), so no backend knows them: a new special function
//! is one variant here, its math in a file of its own, and its catalog case.
//!
//! Every rule of every special function is here, side by side: its name
//! (also its text form and its Rust spelling `name(x)`), the f64 reference
//! value, the JVP, and the expansion.

use crate::ir::{Function, Var};
use crate::ops::elementwise::UnaryOp;
use crate::ops::erf_inv;

/// A special function of one float operand.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum SpecialFn {
    /// The inverse of the error function on (-1, 1) (`jax.lax.erf_inv`,
    /// `jax.scipy.special.erfinv`): ±inf at ±1, NaN beyond.
    ErfInv,
}

impl SpecialFn {
    /// Every special function (the text parser and the Rust spelling look
    /// names up here).
    pub const ALL: [SpecialFn; 1] = [SpecialFn::ErfInv];

    /// The text form's name, which is also the Rust spelling `name(x)`.
    pub fn name(self) -> &'static str {
        match self {
            SpecialFn::ErfInv => "erf_inv",
        }
    }

    /// The function of that name, if there is one.
    pub fn from_name(name: &str) -> Option<SpecialFn> {
        SpecialFn::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The reference value in f64 (callers round to the dtype): what the
    /// interpreter and generated scalar code compute, and what every
    /// backend's expansion is checked against.
    pub fn eval(self, x: f64) -> f64 {
        match self {
            SpecialFn::ErfInv => erf_inv::reference(x),
        }
    }

    /// Tangent of `y = op(x)` given the tangent `t` of `x`.
    pub fn jvp(self, f: &mut Function, _x: Var, y: Var, t: Var) -> Var {
        match self {
            SpecialFn::ErfInv => {
                // √π/2 · e^(y²), JAX's rule (in terms of the result, so its
                // own derivatives follow from exp and mul).
                let y2 = f.mul(y, y);
                let e = f.unary(UnaryOp::Exp, y2);
                let c = f.full_like(std::f64::consts::PI.sqrt() / 2.0, y);
                let d = f.mul(c, e);
                f.mul(t, d)
            }
        }
    }

    /// The value as primitive ops, in the operand's dtype: what kernels run.
    pub fn expand(self, f: &mut Function, x: Var) -> Var {
        match self {
            SpecialFn::ErfInv => erf_inv::expand(f, x),
        }
    }
}
