//! Functions generic over their float type: `fn f<T: oxla::Float>(x: T) -> T`.
//!
//! The IR is monomorphic, so the function is lowered once per float type:
//! `instantiate` writes the item with `T` replaced by `f32` (then `f64`) —
//! in types, in `T::…` paths, and `T::zero()`/`T::one()`/`T::from(v)` as
//! literals or casts — and the transform stack runs on each instance as on
//! any function. For each generated function `name` the expansion emits one
//! public generic `name<T: oxla::Float>` whose body holds both instances as
//! items of their own block and calls the one `T` is, moving arguments and
//! results between `T` and the concrete type with `oxla::Float`'s identity
//! conversions (see the facade's `float.rs`): no copy, nothing per element.
//! Both instances lower from the same item, so the build script, which
//! collects them the same way, compiles the kernels of both.
//!
//! The parts: `instantiate` (the instances' source), `expand` (their
//! pipeline), `wrap` (the generic function around them).

mod expand;
mod instantiate;
mod wrap;

pub(crate) use expand::{collect, expand, stubs};
#[cfg(test)]
pub(crate) use instantiate::{float_param, instantiate};
pub(crate) use instantiate::{instantiate_helper, is_generic};
