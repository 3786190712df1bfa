//! Lowering, the stage after parsing and resolution: the function's body
//! (syn) → an oxla IR `Function`, which the transform stack takes.
//!
//! Every unsupported construct is reported as a spanned error that says what
//! is supported instead; lowering carries on past errors (a failed expression
//! lowers to `None`) so that one expansion reports all of them.
//!
//! The `Lowerer` (`lowerer`, `operators`, `calls`) lowers a function
//! (`function`) with `control` flow and the `vocab`ulary; crate constants
//! become hidden parameters (`consts`); calls of helpers and of generated
//! functions are inlined (`inline`, `call_generated`). After an error,
//! `placeholder` builds an IR from the signature alone. Writes into a
//! `let mut` array (`x[i] = v`, `x.slice_mut(..).assign(&y)`) are
//! functional `updates`.

pub(crate) mod call_generated;
mod calls;
pub mod consts;
pub(crate) mod control;
pub(crate) mod custom;
mod function;
pub(crate) mod inline;
mod lowerer;
mod operators;
pub(crate) mod placeholder;
mod syntax;
mod updates;
pub(crate) mod vocab;

pub use function::{
    dim_symbol, length_symbol, lower_fn, lower_fn_checked, lower_fn_full, IndexCheck,
};
pub(crate) use function::{ident_name, lower_fn_axes, param_ir_type, return_tys, AxisSpans};
pub(crate) use lowerer::{BindKind, Binding, Lowerer, Scope};
pub(crate) use syntax::{
    cmp_op, early_return, if_span, is_compound_assign, segment_names, strip_parens, substitute,
    FLOAT_PATH_METHODS,
};
pub(crate) use updates::{slice_assign_target, written_variable};
