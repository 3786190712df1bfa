//! Opening the device without ever panicking when there is none.

use cudarc::driver::CudaContext;
use std::sync::Arc;

/// Whether a CUDA GPU can be used: the driver library is present and a
/// context on device 0 can be created. Never panics.
pub fn gpu_available() -> bool {
    open().is_ok()
}

/// A context on device 0, or why there is none.
pub(crate) fn open() -> Result<Arc<CudaContext>, String> {
    // SAFETY: `is_culib_present` only tries to open the driver library by
    // its file names and drops it; it has no preconditions.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err("no GPU: the CUDA driver library (libcuda) is not present".into());
    }
    // cudarc panics (rather than erring) on some loading failures.
    match std::panic::catch_unwind(|| CudaContext::new(0)) {
        Ok(Ok(ctx)) => Ok(ctx),
        Ok(Err(e)) => Err(format!("no GPU: creating a CUDA context failed: {e}")),
        Err(_) => Err("no GPU: the CUDA driver could not be loaded".into()),
    }
}
