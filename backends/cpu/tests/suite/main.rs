//! The CPU backend's tests (Cranelift kernels, native kernels, programs
//! against the interpreter), in one binary: each file alone cost a test
//! binary (and its disk and link time) apiece.

/// The accuracy harness, shared with the `accuracy` example.
#[path = "../accuracy/mod.rs"]
mod accuracy;
/// Kernel builders and comparisons of this backend's tests.
#[path = "../common/mod.rs"]
mod common;
// The op catalog of programs and inputs (shared with the IR's tests).
use oxla_test_support as ir_common;
#[path = "../common/random_ir.rs"]
mod random_ir;

mod catalog_programs;
mod cond;
mod gather_programs;
mod harness;
mod kernels;
mod loops;
mod math_error;
mod matmul;
mod native;
mod nd_kernels;
mod nd_programs;
mod object;
mod ops;
mod pow;
mod random_programs;
mod reductions;
mod rounding;
mod slicing_programs;
mod storage;
