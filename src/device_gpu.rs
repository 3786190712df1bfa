//! GPUs through `oxla-cuda`: opening each GPU once, moving arrays on and off
//! it, and running a generated function's program there.
//!
//! Each GPU is opened once per process (`oxla_cuda::Gpu`: a context, one
//! stream every call is queued on, the cuBLAS handle). A function's program
//! is fused from its IR text and its PTX emitted and loaded the first time
//! it runs on a GPU, then kept for the process, one per (IR, GPU).

use crate::__private::CompiledFn;
use crate::device::{Device, DeviceError};
use crate::device_call::DeviceArgRef;
use oxla_core::exec::{ArgDims, RawArg};
use oxla_core::kernel::fusion::fuse;
use oxla_core::{Buffer, DType};
use oxla_cuda::{CudaProgram, DeviceBuffer, Gpu};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// An array on a GPU, with the GPU it is on.
pub struct GpuBuffer {
    gpu: Arc<Gpu>,
    buf: DeviceBuffer,
}

/// The GPU count, found once (0 without a driver or a device).
pub(crate) fn count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| oxla_cuda::gpu_count().unwrap_or(0))
}

/// Why there is no GPU, when there is none.
pub(crate) fn unavailable() -> Option<String> {
    match oxla_cuda::gpu_count() {
        Ok(0) => Some("the CUDA driver reports no device".into()),
        Ok(_) => None,
        Err(e) => Some(e),
    }
}

/// GPU `id` (opened once per process by `Gpu::open`).
fn gpu(id: usize) -> Result<Arc<Gpu>, String> {
    Gpu::open(id).map_err(|e| format!("oxla: gpu:{id}: {e}"))
}

pub(crate) fn upload(id: usize, b: Buffer, dims: &[usize]) -> Result<GpuBuffer, DeviceError> {
    let gpu = gpu(id).map_err(DeviceError)?;
    let buf = gpu
        .upload_shaped(&b, dims)
        .map_err(|e| DeviceError(format!("oxla: gpu:{id}: copying to the device: {e}")))?;
    Ok(GpuBuffer { gpu, buf })
}

pub(crate) fn download(b: &GpuBuffer) -> Result<Buffer, DeviceError> {
    b.gpu.download(&b.buf).map_err(|e| {
        DeviceError(format!(
            "oxla: gpu:{}: copying to the host: {e}",
            b.gpu.ordinal()
        ))
    })
}

pub(crate) fn synchronize(b: &GpuBuffer) -> Result<(), DeviceError> {
    b.gpu
        .synchronize()
        .map_err(|e| DeviceError(format!("oxla: gpu:{}: {e}", b.gpu.ordinal())))
}

/// The results of a GPU call, taken by index.
pub(crate) struct GpuOutputs {
    gpu: Arc<Gpu>,
    device: Device,
    outs: Vec<Option<DeviceBuffer>>,
}

impl GpuOutputs {
    pub(crate) fn take(&mut self, i: usize, dtype: DType) -> (GpuBuffer, Vec<usize>, Device) {
        let buf = self.outs[i]
            .take()
            .unwrap_or_else(|| panic!("internal error: device result {i} taken twice"));
        assert_eq!(
            buf.dtype(),
            dtype,
            "internal error: device result {i} has the wrong element type"
        );
        let dims = buf.dims().to_vec();
        (
            GpuBuffer {
                gpu: self.gpu.clone(),
                buf,
            },
            dims,
            self.device,
        )
    }
}

/// `f`'s program on GPU `id`, loaded on its first call there.
fn program(f: &CompiledFn, id: usize, gpu: &Arc<Gpu>) -> Result<Arc<CudaProgram>, String> {
    type Key = (usize, usize, usize);
    static PROGRAMS: OnceLock<Mutex<HashMap<Key, Arc<CudaProgram>>>> = OnceLock::new();
    // The IR text of a generated function is a `'static` literal: its
    // address and length name it.
    let key = (f.ir.as_ptr() as usize, f.ir.len(), id);
    let programs = PROGRAMS.get_or_init(Default::default);
    // Held while loading: a second thread wanting the same program waits.
    let mut map = programs.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = map.get(&key) {
        return Ok(p.clone());
    }
    let function = oxla_core::text::parse(f.ir).map_err(|e| format!("internal error: {e}"))?;
    let fused = fuse(&function)?;
    let p = Arc::new(CudaProgram::load_on(gpu, fused)?);
    map.insert(key, p.clone());
    Ok(p)
}

/// Run `f` on GPU `device` (every array argument is there).
pub(crate) fn call(
    f: &CompiledFn,
    device: Device,
    args: &[DeviceArgRef<'_>],
) -> Result<GpuOutputs, String> {
    let id = device.id();
    let gpu = gpu(id)?;
    let p = program(f, id, &gpu)
        .map_err(|e| format!("oxla: `{}` on {device}: {e}", f.function_name()))?;
    // Host scalars go over with the call (queued on the same stream).
    let mut scalars: Vec<Option<DeviceBuffer>> = Vec::with_capacity(args.len());
    for a in args {
        scalars.push(match a {
            DeviceArgRef::Scalar(b) => Some(
                gpu.upload_shaped(b, &[])
                    .map_err(|e| format!("oxla: {device}: copying a scalar argument: {e}"))?,
            ),
            _ => None,
        });
    }
    let bufs: Vec<&DeviceBuffer> = args
        .iter()
        .zip(&scalars)
        .map(|(a, s)| match (a, s) {
            (DeviceArgRef::Gpu(b, _), _) => &b.buf,
            (_, Some(s)) => s,
            _ => unreachable!("checked: every array is on {device}"),
        })
        .collect();
    check_indices(f, &p, &gpu, &bufs)?;
    let outs = p.run_device(&bufs).map_err(|e| format!("oxla: {e}"))?;
    Ok(GpuOutputs {
        gpu,
        device,
        outs: outs.into_iter().map(Some).collect(),
    })
}

/// The checked index arguments (`take` and `select` on parameters): read
/// back to the host and checked before anything runs, as on the CPU. This
/// waits for them to be computed.
fn check_indices(
    f: &CompiledFn,
    p: &CudaProgram,
    gpu: &Gpu,
    bufs: &[&DeviceBuffer],
) -> Result<(), String> {
    if f.checks.is_empty() {
        return Ok(());
    }
    let names = &p.program().function.param_names;
    let mut copies: Vec<Option<Buffer>> = Vec::with_capacity(bufs.len());
    for (i, b) in bufs.iter().enumerate() {
        let checked = f
            .checks
            .iter()
            .any(|(n, _)| names.get(i).map(String::as_str) == Some(*n));
        copies.push(if checked {
            Some(gpu.download(b)?)
        } else {
            None
        });
    }
    let raw: Vec<RawArg> = bufs
        .iter()
        .zip(&copies)
        .map(|(b, c)| RawArg {
            dtype: b.dtype(),
            // Only the checked arguments' elements are read (their copies).
            ptr: c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
            len: b.len(),
            dims: ArgDims::new(b.dims()).unwrap_or(ArgDims::FLAT),
        })
        .collect();
    f.check_indices_of(p.program(), &raw)
        .map_err(|e| format!("oxla: {e}"))
}
