//! Parameter structs (JAX's pytrees): `#[derive(oxla::Tree)]` and functions
//! that take or return such structs.
//!
//! The derive emits the `oxla::Tree` impl and, as a helper does (see
//! `helpers`), a uniquely named `#[macro_export]` macro re-exported under
//! the struct's name, whose payload is the struct's definition (its fields'
//! names and types) with the definitions of the structs its fields name,
//! resolved where it is written. An annotated function whose parameter or
//! result type is a path that is no oxla type (`&Mlp`, `crate::m::Mlp`)
//! defers to that macro, like a call of an unknown helper.
//!
//! With every struct known, the function is flattened in its source: each
//! leaf of a struct parameter `p` becomes a parameter `p__w1` (a field of a
//! nested struct `p__layer__w`), `p.w1` in the body names it, a struct
//! passed to a helper passes its leaves, a struct result is the tuple of its
//! leaves, and `wrt = p` names every leaf of `p`. The flat function goes
//! through the usual pipeline; each generated function is then wrapped in
//! one with the user's types, which passes the leaves in and builds the
//! structs of the results (`Tree::__from_leaves`).
//!
//! The parts: `def` (a struct's definition), `derive`, `flatten` and
//! `rewrite` (the flat function's signature and body), `wrap`.

mod def;
mod derive;
mod flatten;
mod rewrite;
mod wrap;

pub(crate) use def::DERIVE_KIND;
pub use derive::expand_derive;
pub(crate) use derive::expand_derive_with;
pub(crate) use flatten::{expand_stack_flat, flatten_fn, flatten_helper, Flattened};
pub(crate) use wrap::generate;
