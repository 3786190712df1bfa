//! Code generation, the last stage: the Rust items of each `GeneratedFn`
//! the transform stack hands over (`items`), as straight-line Rust for
//! scalar-only functions (`scalar`, `scalar_loop`) or as a call of a
//! `::oxla::__private::CompiledFn` for array functions (`compiled`), bound
//! to ahead-of-time kernels when the build script compiled them (`aot`,
//! `options`). Each function gets `_into` and `_device` siblings
//! (`into_fn`, `device`); `paths` holds every path the generated code names, `lints` the
//! lints allowed on what it generates.

pub mod aot;
mod compiled;
pub(crate) mod device;
mod import_uses;
mod into_fn;
mod items;
pub(crate) mod lints;
mod options;
pub(crate) mod paths;
mod scalar;
pub(crate) mod scalar_loop;
mod signature;
pub(crate) mod trait_impl;

pub use crate::stack::ir_const_name;
#[cfg(test)]
pub(crate) use compiled::aot_items;
pub(crate) use import_uses::import_uses;
pub(crate) use into_fn::dest_idents;
pub(crate) use items::{
    flat_types, float_type, generate_instance, generate_nested, generate_stubs, param_idents,
    returns_tuple, stub_body,
};
pub use items::{generate, generate_with_prelude};
pub use options::{CodegenOptions, AOT_MANIFEST_ENV, AOT_REQUIRED_ENV, MANIFEST_NO_OBJECTS};
pub(crate) use scalar::scalar_block;
#[cfg(test)]
pub(crate) use scalar::scalar_body_for_tests;
pub(crate) use signature::{param_type_tokens, result_type_tokens, rust_types};
