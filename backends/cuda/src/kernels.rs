//! A loaded module of kernels, and launching them.

use crate::buffer::{to_bytes, write_bytes, DeviceBuffer};
use crate::context::{driver, Gpu};
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use oxla_core::kernel::interp::check_args;
use oxla_core::{Buffer, DType, Kernel};
use oxla_ptx::{emit_module, has_work, launch_config, needs_fill, Arch, BLOCK, FILL_ENTRY};
use std::sync::Arc;

/// A set of kernels loaded on one device as one module; their launches are
/// queued on the device's one stream ([`Gpu::stream`]).
pub struct CudaKernels {
    kernels: Vec<Kernel>,
    functions: Vec<CudaFunction>,
    /// The module's fill entry (`oxla_ptx::FILL_ENTRY`), when it has one.
    fill: Option<CudaFunction>,
    gpu: Arc<Gpu>,
}

impl CudaKernels {
    /// Emit PTX for device 0's architecture and load it.
    pub fn load(kernels: &[Kernel]) -> Result<CudaKernels, String> {
        CudaKernels::load_on(&Gpu::open(0)?, kernels)
    }

    /// Emit PTX for `gpu`'s architecture and load it there.
    pub fn load_on(gpu: &Arc<Gpu>, kernels: &[Kernel]) -> Result<CudaKernels, String> {
        let ctx = gpu.context();
        let ptx = emit_module(kernels, gpu.arch())?;
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
        Ok(CudaKernels {
            kernels: kernels.to_vec(),
            functions,
            fill,
            gpu: gpu.clone(),
        })
    }

    /// The kernels at `indices` of this module (a nested program's, which
    /// the enclosing program's list holds), sharing its loaded module: no
    /// PTX is emitted or loaded again.
    pub(crate) fn subset(&self, indices: &[usize]) -> Result<CudaKernels, String> {
        let mut kernels = Vec::with_capacity(indices.len());
        let mut functions = Vec::with_capacity(indices.len());
        for i in indices {
            kernels.push(self.kernel(*i)?.clone());
            functions.push(self.functions[*i].clone());
        }
        // The fill entry is loaded when any kernel of the module needs it,
        // which covers the subset's.
        let fill = if needs_fill(&kernels) {
            Some(self.fill.clone().ok_or_else(|| {
                "internal error: a nested program needs the fill entry".to_string()
            })?)
        } else {
            None
        };
        Ok(CudaKernels {
            kernels,
            functions,
            fill,
            gpu: self.gpu.clone(),
        })
    }

    /// The device the module is loaded on.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// The architecture the PTX was emitted for.
    pub fn arch(&self) -> Arch {
        self.gpu.arch()
    }

    pub fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }

    /// Copy the first `len` elements of `b` to the device (a flat array).
    pub fn upload(&self, b: &Buffer, len: usize) -> Result<DeviceBuffer, String> {
        if len > b.len() {
            return Err(format!(
                "upload of {len} elements from a buffer of {}",
                b.len()
            ));
        }
        if len == b.len() {
            return self.gpu.upload(b);
        }
        let mut d = self.gpu.alloc_uninit(b.dtype(), &[len], false)?;
        let bytes = to_bytes(b, len);
        if !bytes.is_empty() {
            let mut view = d.bytes.slice_mut(0..bytes.len());
            driver(
                "copy to device",
                self.gpu.stream().memcpy_htod(&bytes, &mut view),
            )?;
        }
        Ok(d)
    }

    /// Copy `b` to the device with the shape `dims` ([`Gpu::upload_shaped`]).
    pub fn upload_shaped(&self, b: &Buffer, dims: &[usize]) -> Result<DeviceBuffer, String> {
        self.gpu.upload_shaped(b, dims)
    }

    /// A zero-filled flat device array.
    pub fn zeros(&self, dtype: DType, len: usize) -> Result<DeviceBuffer, String> {
        Ok(self.gpu.zeros(dtype, &[len])?.into_flat())
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
            return driver("zero output", self.gpu.stream().memset_zeros(&mut view));
        }
        let f = self
            .fill
            .as_ref()
            .ok_or_else(|| "internal error: a fill without the fill entry loaded".to_string())?;
        let mut pattern = [0u8; 8];
        pattern[..width].copy_from_slice(&bytes);
        let (count, width, bits) = (len as u64, width as u64, u64::from_le_bytes(pattern));
        let blocks = (count.div_ceil(BLOCK as u64)).clamp(1, self.gpu.sm_count() as u64 * 8) as u32;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = self.gpu.stream().launch_builder(f);
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

    /// Wait for the queued work and copy `d` back.
    pub fn download(&self, d: &DeviceBuffer) -> Result<Buffer, String> {
        self.gpu.download(d)
    }

    /// Wait until every queued launch and copy has finished.
    pub fn synchronize(&self) -> Result<(), String> {
        self.gpu.synchronize()
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
        let mut launch = self.gpu.stream().launch_builder(&self.functions[i]);
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
        let cfg = launch_config(k, sizes, self.gpu.sm_count());
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
        self.gpu.context()
    }

    /// The stream launches are queued on (the device's one stream).
    pub fn stream(&self) -> &Arc<CudaStream> {
        self.gpu.stream()
    }
}

/// `check_args` for device arrays.
fn check_device_args(k: &Kernel, bufs: &[&mut DeviceBuffer], sizes: &[i64]) -> Result<(), String> {
    k.check_call(bufs.iter().map(|b| (b.dtype, b.len)), sizes)
}
