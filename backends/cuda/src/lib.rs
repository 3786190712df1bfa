//! oxla-cuda: runs `oxla-ptx` kernels on NVIDIA GPUs through cudarc's
//! driver API.
//!
//! Builds and runs without CUDA: the driver library is loaded dynamically,
//! and [`gpu_available`] says (without panicking) whether a GPU can be used.
//!
//! - [`Gpu::open`] opens a device once per process and shares it: its
//!   context, the one stream all work on it is queued on (so arrays from one
//!   program's call feed another's without synchronizing), its cuBLAS handle
//!   and its caching allocator (the default memory pool keeps freed memory:
//!   [`Gpu::caching_allocator`]).
//! - [`CudaKernels::load_on`] emits PTX for a set of kernels (sm_90 on
//!   compute capability ≥ 9, else sm_80) and loads it as one module.
//! - [`CudaKernels::run`] runs kernel `i` on host buffers: it checks the
//!   arguments like `oxla_core::kernel::interp::check_args`, copies the
//!   inputs over, zero-fills reduction outputs (the PTX calling convention
//!   requires it), launches with `oxla_ptx::launch_config` and copies the
//!   outputs back.
//! - [`DeviceBuffer`] keeps an array on the device with its dimensions
//!   ([`Gpu::upload_shaped`]; a flat [`Gpu::upload`] is known by its length).
//!   Launches are queued on the stream and return at once;
//!   [`Gpu::download`] (or [`Gpu::synchronize`]) waits.
//! - [`CudaProgram`] runs a whole fused `oxla_core::exec::Program`
//!   ([`CudaProgram::load_on`] a `Gpu`): [`CudaProgram::run_device`] binds
//!   the dimension symbols from the arrays' dimensions (`Program::bind_dims`),
//!   checks every launch before queuing any, allocates the intermediates and
//!   outputs on the device, queues the launches in order and returns the
//!   outputs with their shapes without waiting; [`CudaProgram::run`] and
//!   [`CudaProgram::run_shaped`] wrap it with uploads and downloads.
//! - Loops, conds and reverse sweeps (the program's host steps) run with
//!   their carried arrays on the device: each nested program is a child
//!   `CudaProgram` on the same module and stream; the host reads only the
//!   bounds and predicates (`host_steps`).
//! - Matrix products among its kernels run on cuBLAS where their layout
//!   allows ([`gemm_plan`] works the calls out, as data; one handle per
//!   device); the rest, and every product when cuBLAS cannot be loaded, run
//!   on their PTX kernels.
//! - [`emulate`] runs a program through the same schedule and host-step
//!   code on the host, with the kernel interpreter (for tests without a GPU).

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

#[cfg(test)]
mod tests {
    /// Device arrays, programs and devices can be shared across threads
    /// (behind an `Arc`) and sent between them.
    #[test]
    fn handles_are_send_and_sync() {
        fn both<T: Send + Sync>() {}
        both::<crate::DeviceBuffer>();
        both::<crate::CudaProgram>();
        both::<crate::CudaKernels>();
        both::<crate::Gpu>();
    }
}
