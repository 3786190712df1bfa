//! Shared helpers of the IR's tests and the backends' test suites: a
//! catalog of small functions (one or more per op, plus composites), random
//! inputs in each op's domain, finite differences and tolerance comparison,
//! and the lists that keep the catalog covering every op. A crate of its
//! own (unpublished), so each test suite takes it as a dev-dependency.

pub mod catalog;
pub mod cond;
pub mod coverage;
pub mod harness;
pub mod inputs;
pub mod loops;
pub mod mpirun;
pub mod nd;

pub use catalog::*;
pub use coverage::*;
pub use harness::*;
pub use inputs::*;
