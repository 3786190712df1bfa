//! A bandwidth figure for the design's headline case: the fused
//! `sum(x * 2 * y + z)` over f32 arrays, one pass over memory.

use crate::kernels::CudaKernels;
use oxla_core::kernel::{Inst, InstKind, Kernel, KernelArg, Reduce, Store};
use oxla_core::ops::elementwise::BinaryOp;
use oxla_core::{Buffer, DType, Size};
use std::time::Instant;

/// The fused sum kernel over `n` elements.
fn fused_sum() -> Kernel {
    let input = KernelArg {
        dtype: DType::F32,
        output: false,
    };
    let one = Size::constant(1);
    let load = |arg| Inst {
        ty: DType::F32,
        kind: InstKind::Load {
            arg,
            strides: vec![one.clone()],
            offset: Vec::new(),
        },
    };
    let f32_inst = |kind| Inst {
        ty: DType::F32,
        kind,
    };
    Kernel {
        name: "oxla_bandwidth_fused_sum".into(),
        args: vec![
            input,
            input,
            input,
            KernelArg {
                dtype: DType::F32,
                output: true,
            },
        ],
        sizes: vec!["n".into()],
        domain: vec![Size {
            factor: 1,
            syms: vec!["n".into()],
        }],
        reduce_dims: 1,
        reduce: Reduce::Sum,
        insts: vec![
            load(0),
            load(1),
            load(2),
            f32_inst(InstKind::Const(2.0)),
            f32_inst(InstKind::Binary(BinaryOp::Mul, 0, 3)),
            f32_inst(InstKind::Binary(BinaryOp::Mul, 4, 1)),
            f32_inst(InstKind::Binary(BinaryOp::Add, 5, 2)),
        ],
        stores: vec![Store {
            arg: 3,
            value: 6,
            region: None,
        }],
        scan: None,
    }
}

/// Run the fused sum over `len` f32 elements `reps` times (after one
/// warm-up) with the data resident on the device, and return the read
/// bandwidth in GB/s (12·len bytes per run). Errs when there is no GPU.
pub fn measure_bandwidth(len: usize, reps: usize) -> Result<f64, String> {
    let ks = CudaKernels::load(&[fused_sum()])?;
    let host = Buffer::F32((0..len).map(|i| (i % 7) as f32 * 0.25).collect());
    let mut x = ks.upload(&host, len)?;
    let mut y = ks.upload(&host, len)?;
    let mut z = ks.upload(&host, len)?;
    let mut out = ks.zeros(DType::F32, 1)?;
    let sizes = [len as i64];
    ks.run_device(0, &mut [&mut x, &mut y, &mut z, &mut out], &sizes)?;
    ks.synchronize()?;
    let start = Instant::now();
    for _ in 0..reps.max(1) {
        ks.run_device(0, &mut [&mut x, &mut y, &mut z, &mut out], &sizes)?;
    }
    ks.synchronize()?;
    let secs = start.elapsed().as_secs_f64() / reps.max(1) as f64;
    Ok(12.0 * len as f64 / secs / 1e9)
}
