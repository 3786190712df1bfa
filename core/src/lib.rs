//! oxla-core: the IR, its ops and their rules, the transforms, fusion into
//! kernel IR, and the reference interpreters.
//!
//! The pipeline, each step a named pass whose output prints:
//! `Function` (IR) → transforms (`jvp`, `vjp`, `grad`, `vmap`, `simplify`) →
//! `kernel::fusion::fuse` → `Program` of `Kernel`s → a backend.

pub mod buffer;
pub mod comm;
pub mod dtype;
pub mod exec;
pub mod interp;
pub mod ir;
pub mod kernel;
pub mod ops;
pub mod shape;
pub mod tensor;
pub mod text;
pub mod transforms;
pub mod verify;

pub use buffer::Buffer;
pub use dtype::DType;
pub use ir::{Eqn, Function, Type, Var};
pub use kernel::{Kernel, KernelFn};
pub use ops::{DotDims, Op};
pub use shape::{Dim, Shape, Size};
pub use tensor::Tensor;
