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

mod bandwidth;
mod buffer;
mod context;
mod kernels;

pub use bandwidth::measure_bandwidth;
pub use buffer::DeviceBuffer;
pub use context::gpu_available;
pub use kernels::CudaKernels;
