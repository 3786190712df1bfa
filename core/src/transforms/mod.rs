//! Transforms: each takes an IR function and returns an IR function, so they
//! compose in any order and to any depth.

pub mod broadcast;
pub mod expand;
pub mod jacobian;
pub mod jvp;
pub mod pmap;
pub mod simplify;
pub mod step;
pub mod substitute;
pub mod vjp;
pub mod vmap;
pub(crate) mod zeros;

pub use expand::expand_special;
pub use jacobian::{hessian, jacfwd, jacrev};
pub use jvp::{jvp, jvp_wrt};
pub use pmap::pmap;
pub use simplify::simplify;
pub use step::Step;
pub use vjp::{grad, value_and_grad, vjp, vjp_wrt};
pub use vmap::{vmap, vmap_axes, vmap_named};

use crate::ir::Function;
use std::cell::Cell;

/// A transform's refusal of something it does not support, raised as a
/// panic payload from deep inside a rule (a transpose has no error path)
/// and reported by the macros as a plain error, not an internal one.
#[derive(Clone, Debug)]
pub struct Unsupported(pub String);

thread_local! {
    /// How many transforms (simplify included) are running on this thread.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Held while a transform runs (see `verify_outermost`).
pub(crate) struct Running;

impl Running {
    pub(crate) fn start() -> Running {
        DEPTH.with(|d| d.set(d.get() + 1));
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
    }
}

/// `debug_verify` for the result of the outermost running transform only.
/// The transforms of a cond's branches run inside the transform of the
/// function holding the cond, and the verifier checks nested functions
/// too: verifying at every level re-read each branch once per level above
/// it, quadratic in the depth of nested conds. What an inner transform
/// returns is checked as part of the outer result.
pub(crate) fn verify_outermost(f: &Function, pass: &str) {
    if DEPTH.with(Cell::get) <= 1 {
        crate::verify::debug_verify(f, pass);
    }
}
