//! Structured control flow: loops whose body is a function, in the manner of
//! JAX's `fori_loop` and `while_loop`, and the reverse sweep that
//! differentiates them.
//!
//! A `Loop` carries values through its body: `for i in lo..hi` (`For`: the
//! body also receives `i`) or while a condition function holds (`While`).
//! Its operands are `[lo, hi]` (i64 scalars, `For` only), the constants the
//! body reads, then the carries' initial values; its results are the final
//! values of the carries listed in `results`.
//!
//! Derivatives, each rule closed under the others:
//! - JVP: the primal loop, plus a *tangent loop* whose body is the body's
//!   JVP and whose results are the tangent carries. The tangent loop is
//!   linear in its tangent operands and remembers the loop it came from
//!   (`TangentOf`), which is what its transpose needs.
//! - Transpose of a tangent loop: a `LoopReverse`, which runs the primal loop
//!   keeping its carries (all, or every k-th with recomputation of the rest:
//!   `Checkpoint`), then sweeps back through the body's VJP. For a `While`
//!   loop the forward sweep records the trip count, so reverse mode works
//!   through `while` loops too.
//! - JVP of a `LoopReverse` (forward-over-reverse: Hessians) is a
//!   `LoopReverse` of the JVPs of its two bodies.
//! - Transpose of the JVP of a gradient sweep (reverse over reverse): the
//!   JVP of another gradient sweep plus a tangent loop, by the symmetry of
//!   second derivatives (`reverse_transpose.rs`). A sweep that is not a
//!   gradient sweep's JVP (third order by reverse mode alone, a batched
//!   gradient) is refused with a message naming forward mode.
//! - Batching: the body is batched; a batched trip count or a batched `while`
//!   condition runs until every example is done and freezes each example's
//!   carries once its own loop has ended (a select on a per-example mask).

mod batch;
mod cond;
mod custom;
mod looping;
mod pmap;
mod reverse;
mod reverse_transpose;
mod surgery;
mod transpose;

pub use crate::exec::tape::{
    note_tape_bytes, reset_tape_peak, set_tape_limit, tape_limit, tape_limit_error,
    tape_peak_bytes, with_tape_limit, TAPE_LIMIT_ENV,
};
pub use batch::{loop_batch, reverse_batch};
pub(crate) use cond::cond_transpose;
pub use cond::{cond_batch, cond_jvp, push_cond, Cond};
pub(crate) use custom::custom_transpose;
pub use custom::{
    custom_batch, custom_jvp, has_custom_lin, inline_primal, push_custom_jvp, push_custom_vjp,
    Custom, FORWARD_OVER_CUSTOM_VJP,
};
pub use looping::{loop_jvp, push_for, push_while, Checkpoint, Loop, LoopKind, TangentOf};
pub(crate) use pmap::pmap_transpose;
pub use pmap::{pmap_batch, pmap_jvp, push_pmap, Pmap};
pub use reverse::{reverse_jvp, reverse_sweep, LoopReverse, SweepOf};
pub(crate) use reverse_transpose::reverse_transpose;
pub(crate) use surgery::inline;
pub(crate) use transpose::loop_transpose;
