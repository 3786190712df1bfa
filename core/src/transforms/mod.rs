//! Transforms: each takes an IR function and returns an IR function, so they
//! compose in any order and to any depth.

pub mod jacobian;
pub mod jvp;
pub mod simplify;
pub mod vjp;
pub mod vmap;

pub use jacobian::{hessian, jacfwd, jacrev};
pub use jvp::{jvp, jvp_wrt};
pub use simplify::simplify;
pub use vjp::{grad, value_and_grad, vjp, vjp_wrt};
pub use vmap::{vmap, vmap_axes};
