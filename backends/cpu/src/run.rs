//! The safe way to call a compiled kernel.

use oxla_core::kernel::interp::check_args;
use oxla_core::{Buffer, Kernel, KernelFn};

/// Run `f`, the compiled form of `kernel`, on `bufs` (inputs then outputs, in
/// `kernel.args` order) after checking the calling convention: buffer count,
/// element types, non-negative sizes and that every buffer holds the elements
/// the kernel reads or writes.
pub fn run_checked(
    f: KernelFn,
    kernel: &Kernel,
    bufs: &mut [Buffer],
    sizes: &[i64],
) -> Result<(), String> {
    check_args(kernel, bufs, sizes)?;
    let ptrs: Vec<*mut u8> = bufs.iter_mut().map(|b| b.as_mut_ptr()).collect();
    // SAFETY: `check_args` verified arity, dtypes, sizes and buffer lengths,
    // so every load and store the kernel makes is in bounds. The buffers are
    // distinct `&mut` borrows, so outputs alias neither inputs nor each other.
    // `f` must be `kernel` compiled by this crate (the caller's contract, as
    // for the `JitModule` that produced it, which must still be alive).
    unsafe { f(ptrs.as_ptr(), sizes.as_ptr()) };
    Ok(())
}
