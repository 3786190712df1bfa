//! The vocabulary: the methods and functions an ndarray / jax.numpy user
//! would write, each lowered to IR ops: the array operations (`arrays`),
//! elementwise functions (`elementwise`), constructors (`constructors`),
//! sizes as values (`sizes`), slicing (`slicing`) and the collectives over
//! a named axis (`collectives`).

pub(crate) mod arrays;
pub(crate) mod collectives;
pub(crate) mod constructors;
pub(crate) mod elementwise;
pub(crate) mod sizes;
pub(crate) mod slicing;
