//! Lowering, the stage after parsing and resolution: the function's body
//! (syn) → an oxla IR `Function`, which the transform stack takes.
//!
//! Every unsupported construct is reported as a spanned error that says what
//! is supported instead; lowering carries on past errors (a failed expression
//! lowers to `None`) so that one expansion reports all of them.

mod calls;
mod function;
mod lowerer;
mod operators;
mod syntax;

pub use function::{
    dim_symbol, length_symbol, lower_fn, lower_fn_checked, lower_fn_full, IndexCheck,
};
pub(crate) use function::{ident_name, param_ir_type, return_tys};
pub(crate) use lowerer::{BindKind, Binding, Lowerer, Scope};
pub(crate) use syntax::{
    cmp_op, early_return, if_span, is_compound_assign, segment_names, strip_parens, substitute,
    FLOAT_PATH_METHODS,
};
