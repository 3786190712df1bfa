//! The transform stack, the stage after lowering: the original function's
//! IR, then each attribute applied in turn (`apply`), every result
//! simplified. It hands code generation a `GeneratedFn` per function to emit
//! (`generated`); `collect` runs the same stack for the build helper.

mod apply;
mod generated;

pub(crate) use apply::{apply_stack, guard};
pub(crate) use apply::{as_helper, axes_unchecked_if, unbound_axes};
pub use apply::{expand_stack, has_free_axes};
pub use generated::{ir_const_name, GeneratedFn, Origin, Original};
