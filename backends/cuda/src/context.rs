//! Opening a device without ever panicking when there is none, and the
//! [`Gpu`] every program on a device shares: its context, the one stream
//! all work is queued on, the cuBLAS handle, and the caching allocator.

use crate::buffer::{to_bytes, write_bytes, DeviceBuffer};
use cudarc::cublas::CudaBlas;
use cudarc::driver::sys::{CUdevice_attribute, CUmemPool_attribute};
use cudarc::driver::{CudaContext, CudaStream};
use oxla_core::{Buffer, DType};
use oxla_ptx::Arch;
use std::sync::{Arc, Mutex, OnceLock};

/// Whether a CUDA GPU can be used: the driver library is present and a
/// context on device 0 can be created. Never panics.
pub fn gpu_available() -> bool {
    Gpu::open(0).is_ok()
}

/// How many CUDA devices the driver reports, or why none can be used (no
/// driver library, no device). Never panics.
pub fn gpu_count() -> Result<usize, String> {
    // SAFETY: `is_culib_present` only tries to open the driver library by
    // its file names and drops it; it has no preconditions.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err("no GPU: the CUDA driver library (libcuda) is not present".into());
    }
    // cudarc panics (rather than erring) on some loading failures.
    match std::panic::catch_unwind(CudaContext::device_count) {
        Ok(Ok(n)) => Ok(usize::try_from(n).unwrap_or(0)),
        Ok(Err(e)) => Err(format!("no GPU: the CUDA driver reports no device: {e}")),
        Err(_) => Err("no GPU: the CUDA driver could not be loaded".into()),
    }
}

pub(crate) fn driver<T>(
    what: &str,
    r: Result<T, cudarc::driver::DriverError>,
) -> Result<T, String> {
    r.map_err(|e| format!("{what}: {e}"))
}

/// One device, opened once per process and shared: its primary context,
/// the stream every program, copy and cuBLAS call on it is queued on (so
/// work from several programs stays in order without synchronizing), the
/// cuBLAS handle (created on first use), and the device's properties the
/// launches need.
///
/// Opening a device also makes its default memory pool the caching
/// allocator (see [`Gpu::caching_allocator`]).
pub struct Gpu {
    ordinal: usize,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: Arch,
    sm_count: u32,
    /// Whether freed memory stays in the pool, or why not.
    pool: Result<(), String>,
    blas: OnceLock<Result<Mutex<CudaBlas>, String>>,
}

/// The devices opened so far; each is opened once and kept (its primary
/// context stays retained for the process).
static GPUS: Mutex<Vec<Arc<Gpu>>> = Mutex::new(Vec::new());

impl Gpu {
    /// The device `ordinal`, opened on the first call and shared after: every
    /// caller gets the same context and stream. Errs, never panics, when
    /// there is no such GPU (no driver, no device, too old an architecture).
    pub fn open(ordinal: usize) -> Result<Arc<Gpu>, String> {
        let mut gpus = GPUS
            .lock()
            .map_err(|_| "the device table is poisoned".to_string())?;
        if let Some(g) = gpus.iter().find(|g| g.ordinal == ordinal) {
            return Ok(g.clone());
        }
        let g = Arc::new(Gpu::open_new(ordinal)?);
        gpus.push(g.clone());
        Ok(g)
    }

    fn open_new(ordinal: usize) -> Result<Gpu, String> {
        // SAFETY: `is_culib_present` only tries to open the driver library by
        // its file names and drops it; it has no preconditions.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err("no GPU: the CUDA driver library (libcuda) is not present".into());
        }
        // cudarc panics (rather than erring) on some loading failures.
        let ctx = match std::panic::catch_unwind(|| CudaContext::new(ordinal)) {
            Ok(Ok(ctx)) => ctx,
            Ok(Err(e)) => {
                return Err(format!(
                    "no GPU: creating a CUDA context on device {ordinal} failed: {e}"
                ))
            }
            Err(_) => return Err("no GPU: the CUDA driver could not be loaded".into()),
        };
        let (major, minor) = driver("compute capability", ctx.compute_capability())?;
        let arch = Arch::for_compute_capability(major, minor)
            .ok_or_else(|| format!("compute capability {major}.{minor} is older than sm_80"))?;
        let sms = driver(
            "multiprocessor count",
            ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
        )?;
        let pool = keep_freed_memory(&ctx);
        let stream = ctx.default_stream();
        Ok(Gpu {
            ordinal,
            ctx,
            stream,
            arch,
            sm_count: sms.max(1) as u32,
            pool,
            blas: OnceLock::new(),
        })
    }

    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream all work on this device is queued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The architecture PTX is emitted for.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    pub(crate) fn sm_count(&self) -> u32 {
        self.sm_count
    }

    /// `Ok` when the device's default memory pool keeps freed memory for
    /// reuse (the caching allocator), else why not.
    ///
    /// cudarc allocates with stream-ordered `cuMemAllocAsync` from the
    /// device's default pool where the device supports memory pools, and
    /// frees with `cuMemFreeAsync` on the buffer's stream. By default that
    /// pool hands memory back to the driver at every synchronization
    /// (release threshold 0), so each call of a program would allocate its
    /// intermediates anew from the driver; opening the device sets the
    /// threshold to `u64::MAX`, so freed blocks stay in the pool and the
    /// next allocation of a like size reuses them in stream order. This is
    /// the role JAX's BFC allocator plays (XLA's `BFCAllocator` over one
    /// large reservation); the driver's pool does the bookkeeping here.
    /// Other users of the device's default pool (other libraries in the
    /// process) see the same threshold. Failing to set it only costs
    /// speed, so it is noted here rather than refused.
    pub fn caching_allocator(&self) -> Result<(), String> {
        self.pool.clone()
    }

    /// The device's cuBLAS handle, created on first use with this device's
    /// stream, or why there is none. Never panics.
    pub(crate) fn blas(&self) -> Result<&Mutex<CudaBlas>, String> {
        self.blas
            .get_or_init(|| {
                // SAFETY: `is_culib_present` only tries to open the library by
                // its file names and drops it; it has no preconditions.
                if !unsafe { cudarc::cublas::sys::is_culib_present() } {
                    return Err("the cuBLAS library (libcublas) is not present".into());
                }
                // cudarc panics when a symbol is missing from the library.
                let stream = self.stream.clone();
                match std::panic::catch_unwind(move || CudaBlas::new(stream)) {
                    Ok(Ok(blas)) => Ok(Mutex::new(blas)),
                    Ok(Err(e)) => Err(format!("creating the cuBLAS handle failed: {e}")),
                    Err(_) => Err("the cuBLAS library could not be loaded".into()),
                }
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Wait until everything queued on the device's stream has finished.
    pub fn synchronize(&self) -> Result<(), String> {
        driver("synchronize", self.stream.synchronize())
    }

    /// A zero-filled device array of shape `dims`.
    pub fn zeros(&self, dtype: DType, dims: &[usize]) -> Result<DeviceBuffer, String> {
        let len = numel(dims)?;
        let bytes = driver(
            "device allocation",
            self.stream
                .alloc_zeros::<u8>((len * dtype.size_bytes()).max(1)),
        )?;
        Ok(DeviceBuffer::new(dtype, dims.to_vec(), true, bytes))
    }

    /// A device array of shape `dims` whose elements are unspecified until
    /// a kernel or a copy writes them.
    pub(crate) fn alloc_uninit(
        &self,
        dtype: DType,
        dims: &[usize],
        shaped: bool,
    ) -> Result<DeviceBuffer, String> {
        let len = numel(dims)?;
        // SAFETY: the memory is device memory, only ever reached through
        // kernels and driver copies (never as Rust values); callers write
        // every element before the array is read.
        let bytes = driver("device allocation", unsafe {
            self.stream.alloc::<u8>((len * dtype.size_bytes()).max(1))
        })?;
        Ok(DeviceBuffer::new(dtype, dims.to_vec(), shaped, bytes))
    }

    /// Copy the host array `b` to the device as a flat array (known by its
    /// length: a program binds its dimensions from the element count).
    pub fn upload(&self, b: &Buffer) -> Result<DeviceBuffer, String> {
        self.upload_as(b, &[b.len()], false)
    }

    /// Copy the host array `b` to the device with the row-major shape
    /// `dims` (whose product must be `b.len()`): a program binds its
    /// dimension symbols from it axis by axis.
    pub fn upload_shaped(&self, b: &Buffer, dims: &[usize]) -> Result<DeviceBuffer, String> {
        if numel(dims)? != b.len() {
            return Err(format!(
                "upload: shape {dims:?} holds {} elements, the array {}",
                numel(dims)?,
                b.len()
            ));
        }
        self.upload_as(b, dims, true)
    }

    /// Queued on the stream: the bytes are staged by the driver before the
    /// call returns (`cuMemcpyHtoDAsync` from pageable memory).
    fn upload_as(&self, b: &Buffer, dims: &[usize], shaped: bool) -> Result<DeviceBuffer, String> {
        let mut d = self.alloc_uninit(b.dtype(), dims, shaped)?;
        let bytes = to_bytes(b, b.len());
        if !bytes.is_empty() {
            let mut view = d.bytes.slice_mut(0..bytes.len());
            driver("copy to device", self.stream.memcpy_htod(&bytes, &mut view))?;
        }
        Ok(d)
    }

    /// Wait for the queued work and copy `d` back to the host.
    pub fn download(&self, d: &DeviceBuffer) -> Result<Buffer, String> {
        let mut out = Buffer::zeros(d.dtype, d.len);
        if d.num_bytes() > 0 {
            let view = d.bytes.slice(0..d.num_bytes());
            let bytes = driver("copy to host", self.stream.clone_dtoh(&view))?;
            write_bytes(&mut out, &bytes);
        }
        Ok(out)
    }

    /// A device-to-device copy of `src` (same shape), queued on the stream.
    pub fn copy(&self, src: &DeviceBuffer) -> Result<DeviceBuffer, String> {
        let mut dst = self.alloc_uninit(src.dtype, &src.dims, src.shaped)?;
        let n = src.num_bytes();
        if n > 0 {
            let from = src.bytes.slice(0..n);
            let mut to = dst.bytes.slice_mut(0..n);
            driver(
                "device-to-device copy",
                self.stream.memcpy_dtod(&from, &mut to),
            )?;
        }
        Ok(dst)
    }
}

/// The element count of `dims`, or an error when it overflows.
pub(crate) fn numel(dims: &[usize]) -> Result<usize, String> {
    dims.iter()
        .try_fold(1usize, |acc, d| acc.checked_mul(*d))
        .ok_or_else(|| format!("shape {dims:?}: too many elements"))
}

/// Make the device's default memory pool keep freed memory (release
/// threshold `u64::MAX`), when the device has memory pools.
fn keep_freed_memory(ctx: &Arc<CudaContext>) -> Result<(), String> {
    if !ctx.has_async_alloc() {
        return Err(
            "the device has no memory pools: allocations are synchronous `cuMemAlloc`".into(),
        );
    }
    let dev = ctx.cu_device();
    // cudarc panics when a symbol is missing from the driver library.
    let set = std::panic::catch_unwind(|| {
        // SAFETY: `dev` is the device of a live context (from
        // `cuDeviceGet`); the pool is the device's default pool, which
        // lives as long as the device; the release threshold attribute
        // takes a pointer to a `u64` (cuuint64_t), which `threshold` is,
        // read before the call returns.
        unsafe {
            let pool = cudarc::driver::result::device::get_default_mem_pool(dev)?;
            let mut threshold: u64 = u64::MAX;
            cudarc::driver::result::mem_pool::set_attribute(
                pool,
                CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                &mut threshold as *mut u64 as *mut std::ffi::c_void,
            )
        }
    });
    match set {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("setting the memory pool's release threshold: {e}")),
        Err(_) => Err("the driver has no memory pool functions".into()),
    }
}
