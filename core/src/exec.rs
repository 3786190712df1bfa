//! Programs: kernels plus the host schedule that runs them, and the executor
//! every backend shares (the backend only supplies a `Launcher`).
//!
//! - `program`: the `Program` (kernels, buffers, launches, host steps),
//!   its construction, the structural check of its schedule, and its text.
//! - `bind`: binding the dimension symbols from a call's arguments, the
//!   checks of the arguments (types, shapes, bounds, empty reductions) and
//!   their messages.
//! - `call`: what a call passes and how kernels run: `Launcher` (and the
//!   interpreter's and compiled CPU kernels' launchers), `RawArg`,
//!   `RawDest`, `ArgDims`.
//! - `run`: running a program (`execute_with` and the public entry points)
//!   and the per-thread scratch pool of buffers.
//! - `host_step`, `loops`, `cond`, `pmap`, `sort`, `conv`: the loops, conds, pmaps,
//!   collectives, argsorts and convolutions of the schedule, which the host runs between
//!   launches.
//! - `direct`: the plan for a program that is one launch.
//! - `tape`: the reverse sweeps' tape counter and limit (runtime state).

mod bind;
mod call;
mod cond;
mod conv;
mod direct;
mod host_step;
mod linalg;
mod loops;
mod pmap;
mod program;
mod run;
mod sort;
pub mod tape;
pub use call::{
    raw_args, ArgDims, FnLauncher, InterpLauncher, Launcher, RawArg, RawDest, MAX_RANK,
};
pub use cond::CondStep;
pub use conv::{conv_buffers, ConvStep};
pub use direct::{DirectCall, DirectDims, FlatArg, ScalarSlots};
pub use host_step::{HostStep, Nested};
pub use linalg::LinalgStep;
pub use loops::LoopStep;
pub use pmap::{cpu_device_count, set_cpu_device_count, CollectiveStep, PmapStep, CPU_DEVICES_ENV};
use program::DimRef;
pub use program::{BufferInfo, Launch, Program, Slot};
pub use run::take_buffer;
use run::Scratch;
pub use sort::SortStep;
