//! Queuing a [`GemmPlan`]'s calls on cuBLAS.
//!
//! One handle per device ([`Gpu`](crate::Gpu)), created on first use with
//! the device's one stream, so the calls stay in order with the PTX
//! launches of every program on it. It is kept behind a mutex (a handle is
//! not for concurrent use). cuBLAS is loaded dynamically; where it cannot
//! be loaded the products stay on their PTX kernels and the reason is kept.

use crate::buffer::DeviceBuffer;
use crate::gemm_plan::{Factor, GemmCall, GemmPlan, Transpose};
use cudarc::cublas::result::gemm_strided_batched_ex;
use cudarc::cublas::sys::{
    cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t, cudaDataType_t,
};
use cudarc::cublas::CudaBlas;
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use oxla_core::DType;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// cuBLAS's name for `dtype` in memory, and the type its products are
/// summed in (f32 for the half types, as their kernels sum; no TF32).
fn types(dtype: DType) -> Option<(cudaDataType_t, cublasComputeType_t)> {
    Some(match dtype {
        DType::F16 => (
            cudaDataType_t::CUDA_R_16F,
            cublasComputeType_t::CUBLAS_COMPUTE_32F,
        ),
        DType::BF16 => (
            cudaDataType_t::CUDA_R_16BF,
            cublasComputeType_t::CUBLAS_COMPUTE_32F,
        ),
        DType::F32 => (
            cudaDataType_t::CUDA_R_32F,
            cublasComputeType_t::CUBLAS_COMPUTE_32F,
        ),
        DType::F64 => (
            cudaDataType_t::CUDA_R_64F,
            cublasComputeType_t::CUBLAS_COMPUTE_64F,
        ),
        _ => return None,
    })
}

/// Whether cuBLAS multiplies arrays of `dtype` here.
pub(crate) fn supports(dtype: DType) -> bool {
    types(dtype).is_some()
}

fn op(t: Transpose) -> cublasOperation_t {
    match t {
        Transpose::N => cublasOperation_t::CUBLAS_OP_N,
        Transpose::T => cublasOperation_t::CUBLAS_OP_T,
    }
}

/// Queue `plan`'s calls on `stream`: `out = lhs · rhs` (all of `dtype`).
/// Checks that every element the calls touch lies in its buffer first.
pub(crate) fn run(
    blas: &Mutex<CudaBlas>,
    stream: &Arc<CudaStream>,
    plan: &GemmPlan,
    dtype: DType,
    lhs: &DeviceBuffer,
    rhs: &DeviceBuffer,
    out: &mut DeviceBuffer,
) -> Result<(), String> {
    let (data, compute) = types(dtype).ok_or_else(|| format!("cuBLAS: no products of {dtype}"))?;
    for (what, d, factor) in [
        ("left factor", lhs, Some(Factor::Lhs)),
        ("right factor", rhs, Some(Factor::Rhs)),
        ("output", &*out, None),
    ] {
        let need = plan.reach(factor);
        if d.dtype != dtype || need > d.len {
            return Err(format!(
                "internal error: cuBLAS {what} needs {need} elements of {dtype}, the buffer holds {} of {}",
                d.len, d.dtype
            ));
        }
    }
    if plan.calls.is_empty() {
        // A product with no terms.
        if out.num_bytes() > 0 {
            let mut view = out.bytes.slice_mut(0..out.num_bytes());
            stream
                .memset_zeros(&mut view)
                .map_err(|e| format!("zero output: {e}"))?;
        }
        return Ok(());
    }
    let mut blas = blas
        .lock()
        .map_err(|_| "the cuBLAS handle is poisoned".to_string())?;
    // SAFETY: the handle is only used under this lock; it belongs to the
    // device whose stream this is (`Gpu::blas`), as every buffer of the
    // program does, and setting its stream to the one it was created with
    // only keeps the calls ordered with the program's launches.
    unsafe { blas.set_stream(stream.clone()) }.map_err(|e| format!("cuBLAS stream: {e}"))?;
    stream
        .context()
        .bind_to_thread()
        .map_err(|e| format!("binding the context: {e}"))?;
    let width = dtype.size_bytes() as u64;
    let (pl, _rl) = lhs.bytes.device_ptr(stream);
    let (pr, _rr) = rhs.bytes.device_ptr(stream);
    let (po, _ro) = out.bytes.device_ptr_mut(stream);
    let base = |f: Factor| match f {
        Factor::Lhs => pl,
        Factor::Rhs => pr,
    };
    for c in &plan.calls {
        let GemmCall { a, b, .. } = *c;
        let at = |p: u64, offset: usize| (p + offset as u64 * width) as *mut c_void;
        let (a_ptr, b_ptr, c_ptr) = (
            at(base(a.factor), a.offset),
            at(base(b.factor), b.offset),
            at(po, c.c_offset),
        );
        let beta = if c.accumulate { 1.0 } else { 0.0 };
        let (alpha64, beta64, alpha32, beta32) = (1.0f64, beta, 1.0f32, beta as f32);
        let (alpha, beta): (*const c_void, *const c_void) = if dtype == DType::F64 {
            (&alpha64 as *const f64 as _, &beta64 as *const f64 as _)
        } else {
            (&alpha32 as *const f32 as _, &beta32 as *const f32 as _)
        };
        // SAFETY: the pointers are device addresses of live buffers of
        // `dtype` (checked above), kept alive by the borrows of `lhs`, `rhs`
        // and `out` (and the `device_ptr` guards) until the calls are
        // queued; every element a call reads or writes lies inside its
        // buffer (`plan.reach`, checked above), the output aliases neither
        // input (the schedule gives each launch's outputs to it alone), and
        // the output positions of one call are distinct (the plan's output
        // is row-major). `m, n, k, batch ≥ 1` and each `ld` ≥ the rows of
        // its stored matrix (`gemm_plan::plan`); alpha and beta are host
        // values of the compute type's scale type (f64 for
        // CUBLAS_COMPUTE_64F, f32 for CUBLAS_COMPUTE_32F), read before the
        // call returns (the handle's default host pointer mode).
        unsafe {
            gemm_strided_batched_ex(
                *blas.handle(),
                op(a.op),
                op(b.op),
                c.m,
                c.n,
                c.k,
                alpha,
                a_ptr,
                data,
                a.ld,
                a.batch_stride,
                b_ptr,
                data,
                b.ld,
                b.batch_stride,
                beta,
                c_ptr,
                data,
                c.ldc,
                c.c_batch_stride,
                c.batch,
                compute,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(|e| format!("cuBLAS gemm: {e}"))?;
    }
    Ok(())
}
