//! oxla-cuda: runs `oxla-ptx` kernels on NVIDIA GPUs through cudarc's
//! driver API.
//!
//! Builds and runs without CUDA: the driver library is loaded dynamically,
//! and [`gpu_available`] says (without panicking) whether a GPU can be used.
//!
//! - [`CudaKernels::load`] emits PTX for a set of kernels (sm_90 on compute
//!   capability ≥ 9, else sm_80) and loads it as one module.
//! - [`CudaKernels::run`] runs kernel `i` on host buffers: it checks the
//!   arguments like `oxla_core::kernel::interp::check_args`, copies the
//!   inputs over, zero-fills reduction outputs (the PTX calling convention
//!   requires it), launches with `oxla_ptx::launch_config` and copies the
//!   outputs back.
//! - [`DeviceBuffer`] and [`CudaKernels::run_device`] keep arrays on the
//!   device: launches are queued on the module's stream and return at once;
//!   [`CudaKernels::download`] (or [`CudaKernels::synchronize`]) waits.
//! - [`CudaProgram`] runs a whole fused `oxla_core::exec::Program`:
//!   [`CudaProgram::run_device`] binds the dimension symbols from the device
//!   arrays' lengths, checks every launch before queuing any, allocates the
//!   intermediates and outputs on the device, queues the launches in order
//!   and returns the outputs without waiting; [`CudaProgram::run`] wraps it
//!   with uploads and downloads.
//! - Matrix products among its kernels run on cuBLAS where their layout
//!   allows ([`gemm_plan`] works the calls out, as data; the handle is
//!   created once per process); the rest, and every product when cuBLAS
//!   cannot be loaded, run on their PTX kernels.

mod bandwidth;
mod blas;
mod buffer;
mod context;
#[doc(hidden)]
pub mod emulate;
pub mod gemm_plan;
mod host_steps;
mod kernels;
mod program;

pub use bandwidth::measure_bandwidth;
pub use buffer::DeviceBuffer;
pub use context::{gpu_available, gpu_count, Gpu};
pub use kernels::CudaKernels;
pub use program::CudaProgram;
