//! A loaded module of kernels, and launching them.

use crate::buffer::{to_bytes, write_bytes, DeviceBuffer};
use crate::context;
use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use oxla_core::kernel::interp::check_args;
use oxla_core::{Buffer, DType, Kernel};
use oxla_ptx::{emit_module, has_work, launch_config, needs_fill, Arch, BLOCK, FILL_ENTRY};
use std::sync::Arc;

/// A set of kernels loaded on device 0 as one module, with the stream
/// their launches are queued on.
pub struct CudaKernels {
    kernels: Vec<Kernel>,
    functions: Vec<CudaFunction>,
    /// The module's fill entry (`oxla_ptx::FILL_ENTRY`), when it has one.
    fill: Option<CudaFunction>,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    sm_count: u32,
    arch: Arch,
}

fn driver<T>(what: &str, r: Result<T, cudarc::driver::DriverError>) -> Result<T, String> {
    r.map_err(|e| format!("{what}: {e}"))
}

impl CudaKernels {
    /// Emit PTX for the device's architecture and load it.
    pub fn load(kernels: &[Kernel]) -> Result<CudaKernels, String> {
        let ctx = context::open()?;
        let (major, minor) = driver("compute capability", ctx.compute_capability())?;
        let arch = Arch::for_compute_capability(major, minor)
            .ok_or_else(|| format!("compute capability {major}.{minor} is older than sm_80"))?;
        let sms = driver(
            "multiprocessor count",
            ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
        )?;
        let ptx = emit_module(kernels, arch)?;
        // A program without kernels (it only passes parameters through)
        // still needs the context and stream, but no module.
        let (functions, fill) = if kernels.is_empty() {
            (Vec::new(), None)
        } else {
            let module = driver("loading PTX", ctx.load_module(Ptx::from_src(ptx)))?;
            let functions = kernels
                .iter()
                .map(|k| {
                    driver(
                        &format!("kernel `{}`", k.name),
                        module.load_function(&k.name),
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            let fill = if needs_fill(kernels) {
                Some(driver("the fill entry", module.load_function(FILL_ENTRY))?)
            } else {
                None
            };
            (functions, fill)
        };
        let stream = ctx.default_stream();
        Ok(CudaKernels {
            kernels: kernels.to_vec(),
            functions,
            fill,
            ctx,
            stream,
            sm_count: sms.max(1) as u32,
            arch,
        })
    }

    /// The architecture the PTX was emitted for.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    pub fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }

    /// Copy the first `len` elements of `b` to the device.
    pub fn upload(&self, b: &Buffer, len: usize) -> Result<DeviceBuffer, String> {
        if len > b.len() {
            return Err(format!(
                "upload of {len} elements from a buffer of {}",
                b.len()
            ));
        }
        let mut d = self.zeros(b.dtype(), len)?;
        let bytes = to_bytes(b, len);
        if !bytes.is_empty() {
            let mut view = d.bytes.slice_mut(0..bytes.len());
            driver("copy to device", self.stream.memcpy_htod(&bytes, &mut view))?;
        }
        Ok(d)
    }

    /// A zero-filled device array.
    pub fn zeros(&self, dtype: DType, len: usize) -> Result<DeviceBuffer, String> {
        let n = (len * dtype.size_bytes()).max(1);
        let bytes = driver("device allocation", self.stream.alloc_zeros::<u8>(n))?;
        Ok(DeviceBuffer { dtype, len, bytes })
    }

    /// Set the first `len` elements of `d` to `value` (rounded to its
    /// dtype), queued on the stream: a memset for zero, else the module's
    /// fill entry (loaded when some kernel is a max or min reduction).
    pub(crate) fn fill(&self, d: &mut DeviceBuffer, len: usize, value: f64) -> Result<(), String> {
        let len = len.min(d.len);
        let width = d.dtype.size_bytes();
        let bytes = to_bytes(&Buffer::from_f64(d.dtype, &[value]), 1);
        if len == 0 {
            return Ok(());
        }
        if bytes.iter().all(|b| *b == 0) {
            let mut view = d.bytes.slice_mut(0..len * width);
            return driver("zero output", self.stream.memset_zeros(&mut view));
        }
        let f = self
            .fill
            .as_ref()
            .ok_or_else(|| "internal error: a fill without the fill entry loaded".to_string())?;
        let mut pattern = [0u8; 8];
        pattern[..width].copy_from_slice(&bytes);
        let (count, width, bits) = (len as u64, width as u64, u64::from_le_bytes(pattern));
        let blocks = (count.div_ceil(BLOCK as u64)).clamp(1, self.sm_count as u64 * 8) as u32;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = self.stream.launch_builder(f);
        launch.arg(&mut d.bytes);
        launch.arg(&count);
        launch.arg(&width);
        launch.arg(&bits);
        // SAFETY: the fill entry takes (dst, count, width, bits) as four u64
        // (`oxla_ptx::fill`), pushed in that order; it writes `count`
        // elements of `width` bytes from `dst`, and `count <= d.len`
        // elements of `d.dtype` (whose size is `width`) are allocated there.
        unsafe { launch.launch(cfg) }.map_err(|e| format!("launching the fill: {e}"))?;
        Ok(())
    }

    /// A device array whose elements are unspecified until a kernel or a
    /// copy writes them (for outputs a map kernel writes whole).
    pub(crate) fn alloc_uninit(&self, dtype: DType, len: usize) -> Result<DeviceBuffer, String> {
        let n = (len * dtype.size_bytes()).max(1);
        // SAFETY: the memory is device memory, only ever reached through
        // kernels and driver copies (never as Rust values); callers write
        // every element before the array is read.
        let bytes = driver("device allocation", unsafe { self.stream.alloc::<u8>(n) })?;
        Ok(DeviceBuffer { dtype, len, bytes })
    }

    /// Wait for the queued work and copy `d` back.
    pub fn download(&self, d: &DeviceBuffer) -> Result<Buffer, String> {
        let mut out = Buffer::zeros(d.dtype, d.len);
        if d.num_bytes() > 0 {
            let view = d.bytes.slice(0..d.num_bytes());
            let bytes = driver("copy to host", self.stream.clone_dtoh(&view))?;
            write_bytes(&mut out, &bytes);
        }
        Ok(out)
    }

    /// Wait until every queued launch and copy has finished.
    pub fn synchronize(&self) -> Result<(), String> {
        driver("synchronize", self.stream.synchronize())
    }

    /// Run kernel `i` on host buffers (inputs then outputs, in `args`
    /// order), like `oxla_core::kernel::interp::run`.
    pub fn run(&self, i: usize, bufs: &mut [Buffer], sizes: &[i64]) -> Result<(), String> {
        let k = self.kernel(i)?;
        check_args(k, bufs, sizes)?;
        let mut dev = Vec::with_capacity(bufs.len());
        for (a, (arg, b)) in k.args.iter().zip(bufs.iter()).enumerate() {
            dev.push(if arg.output {
                self.zeros(arg.dtype, k.output_len(sizes))?
            } else {
                self.upload(b, k.input_extent(a, sizes))?
            });
        }
        let mut refs: Vec<&mut DeviceBuffer> = dev.iter_mut().collect();
        self.run_device(i, &mut refs, sizes)?;
        for (arg, (d, b)) in k.args.iter().zip(dev.iter().zip(bufs.iter_mut())) {
            if arg.output {
                let host = self.download(d)?;
                let bytes = to_bytes(&host, host.len());
                write_bytes(b, &bytes);
            }
        }
        Ok(())
    }

    /// Queue kernel `i` on device arrays (inputs then outputs, in `args`
    /// order). Returns once the launch is queued.
    pub fn run_device(
        &self,
        i: usize,
        bufs: &mut [&mut DeviceBuffer],
        sizes: &[i64],
    ) -> Result<(), String> {
        let k = self.kernel(i)?;
        check_device_args(k, bufs, sizes)?;
        if k.is_reduction() {
            // The PTX convention: blocks combine into outputs holding the
            // reduction's identity (zeros, -inf or +inf). Only the elements
            // the kernel writes, like the interpreter.
            let out_len = k.output_len(sizes);
            for (arg, b) in k.args.iter().zip(bufs.iter_mut()) {
                if arg.output {
                    self.fill(b, out_len, k.reduce.identity())?;
                }
            }
        }
        if !has_work(k, sizes) {
            return Ok(());
        }
        let cfg = self.launch_config(k, sizes);
        let mut launch = self.stream.launch_builder(&self.functions[i]);
        for b in bufs.iter_mut() {
            launch.arg(&mut b.bytes);
        }
        for s in sizes {
            launch.arg(s);
        }
        // SAFETY: the entry was emitted by `oxla_ptx` for this kernel, whose
        // convention is one u64 device address per buffer in `args` order
        // then one u64 per size in `sizes` order: exactly the arguments
        // pushed above. `check_device_args` verified the arity, the dtypes,
        // that the sizes are non-negative, and that every buffer holds the
        // elements the kernel reads or writes; the buffers are distinct
        // (`&mut`), so outputs alias nothing; the block size comes from
        // `launch_config`, matching the entry's `.maxntid`; reduction outputs
        // were filled with the identity above on the same stream.
        unsafe { launch.launch(cfg) }.map_err(|e| format!("launching `{}`: {e}", k.name))?;
        Ok(())
    }

    /// The grid and block for kernel `k` at `sizes` (`oxla_ptx::launch_config`).
    pub(crate) fn launch_config(&self, k: &Kernel, sizes: &[i64]) -> LaunchConfig {
        let cfg = launch_config(k, sizes, self.sm_count);
        LaunchConfig {
            grid_dim: cfg.grid,
            block_dim: cfg.block,
            shared_mem_bytes: cfg.shared_bytes,
        }
    }

    /// The loaded entry of kernel `i` (an index into `kernels()`).
    pub(crate) fn function(&self, i: usize) -> &CudaFunction {
        &self.functions[i]
    }

    fn kernel(&self, i: usize) -> Result<&Kernel, String> {
        self.kernels
            .get(i)
            .ok_or_else(|| format!("no kernel {i}: {} are loaded", self.kernels.len()))
    }

    /// The context the module lives in.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream launches are queued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
}

/// `check_args` for device arrays.
fn check_device_args(k: &Kernel, bufs: &[&mut DeviceBuffer], sizes: &[i64]) -> Result<(), String> {
    k.check_call(bufs.iter().map(|b| (b.dtype, b.len)), sizes)
}
