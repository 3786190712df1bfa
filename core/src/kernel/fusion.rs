//! Fusion: IR function → `Program` of kernels.
//!
//! Values are *materialized* (written to memory) only where they must be:
//! parameters, outputs, results of reductions (`reduce_sum`, `reduce_max`,
//! `reduce_min`, `reduce_prod`, `dot`, `dot_general`) and of scans
//! (`linear_scan`: a scan kernel carries its state along one axis, so
//! nothing after it fuses into it), the operand of a reshape that
//! regroups axes, an operand of `dot_general` that is not already a
//! plain load, the operand and the indices of a gather (an indexed load),
//! a scatter-add's result (a zero fill, then a kernel that adds into it),
//! the operands and results of a loop or a cond (a step the host runs: its
//! bodies or branches are programs of their own, see `exec::HostStep`),
//! a transcendental expression that a broadcast would
//! otherwise recompute along new axes, and every conversion to an integer
//! (the store converts; see `materialize`). Every other value — elementwise ops,
//! literals, broadcasts, transposes — is computed inside the kernel of each
//! materialized value that needs it, so `sum(x * 2 * y + z)` is one kernel
//! with no temporaries. A broadcast becomes a stride (0 along the new axes)
//! on the loads below it, a transpose a permutation of those strides.
//!
//! Coordinates are passed down as a map (`cmap`) from the value's axes to
//! domain axes; an axis whose coordinate is always 0 (a unit axis a reshape
//! removed) maps to [`ZERO`].
//!
//! - `schedule`: `fuse`, the driver: the program's buffers, launches and
//!   host steps, in the function's order.
//! - `host_steps`: the loop and cond steps, whose bodies and branches are
//!   fused into programs of their own.
//! - `materialize`: which values get a buffer, and the checks of what a
//!   kernel may compute.
//! - `builder`: `KernelBuilder`, which emits one kernel's instructions for
//!   a materialized value (coordinate maps, loads, reductions, scans,
//!   products).
//! - `assemble`: the kernels that write a pad, a concatenation or a
//!   scatter-add into regions of their result.

mod assemble;
mod builder;
mod host_steps;
mod materialize;
mod schedule;
pub use builder::ZERO;
pub use schedule::fuse;
