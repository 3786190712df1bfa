//! The PTX backend's tests (every catalog kernel assembled by `ptxas`, the
//! emitted text's structure), in one binary: each file alone cost a test
//! binary (and its disk and link time) apiece.

// The op catalog of programs and inputs (shared with the IR's tests).
use oxla_test_support as common;
#[path = "../support/mod.rs"]
mod support;

mod catalog;
mod cond;
mod loops;
mod math_model;
mod ptxas;
mod structure;
