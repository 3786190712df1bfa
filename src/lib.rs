//! # oxla
//!
//! JAX-style composable function transformations for Rust, done ahead of
//! time. Annotate a plain numeric function and name what to generate:
//!
//! ```
//! #[oxla::grad(df)]
//! fn f(x: f64, y: f64, z: f64) -> f64 {
//!     x + 2.0 * y + z * z
//! }
//! assert_eq!(df(1.0, 2.0, 3.0), (1.0, 2.0, 6.0));
//! ```
//!
//! - `#[grad(name, wrt = ..)]`, `#[value_and_grad(..)]`: reverse mode;
//! - `#[jvp(name)]`, `#[vjp(name)]`: forward and reverse mode;
//! - `#[vmap(name, in_axes = ..)]`: batching;
//! - `#[jit]`: compile the function itself into fused kernels.
//!
//! Stacked attributes compose bottom-up. Derivatives and batching are worked
//! out when the macro expands. Scalar functions become straight-line Rust;
//! array functions run as fused kernels: compiled by the build script
//! (`oxla_build::compile`) or, without one, by Cranelift on first call.
//! Each generated function `name` comes with `NAME_IR`, its IR text; see
//! [`Inspect`] to read its kernels, Cranelift IR and PTX, or set
//! `OXLA_DUMP=ir,kernels,clif,ptx`.

pub use oxla_macros::{grad, jit, jvp, value_and_grad, vjp, vmap};

/// The compiler underneath: IR, transforms, fusion, interpreters.
pub use oxla_core as core;

mod inspect;
mod runtime;
pub use inspect::Inspect;
pub use oxla_cpu::{host_supports_v3, IsaLevel};
pub use runtime::{compile_log, CompileRecord, CompiledBy, ISA_ENV};

#[doc(hidden)]
pub mod __private;
