//! The PTX backend's tests (every catalog kernel assembled by `ptxas`, the
//! emitted text's structure), in one binary: each file alone cost a test
//! binary (and its disk and link time) apiece.

/// The core tests' catalog of programs and inputs.
#[path = "../../../../core/tests/common/mod.rs"]
mod common;
#[path = "../support/mod.rs"]
mod support;

mod catalog;
mod cond;
mod loops;
mod math_model;
mod ptxas;
mod structure;
