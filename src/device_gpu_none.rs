//! GPUs when oxla is built without its `cuda` feature: there are none, and
//! nothing here is ever made (`GpuBuffer` and `GpuOutputs` have no
//! constructor).

use crate::__private::CompiledFn;
use crate::device::{Device, DeviceError};
use crate::device_call::DeviceArgRef;
use oxla_core::{Buffer, DType};

/// An array on a GPU: none is made in this build.
pub struct GpuBuffer(());

/// The results of a GPU call: none is made in this build.
pub(crate) struct GpuOutputs(());

const NONE_MADE: &str = "internal error: no GPU value exists without the `cuda` feature";

impl GpuOutputs {
    pub(crate) fn take(&mut self, _: usize, _: DType) -> (GpuBuffer, Vec<usize>, Device) {
        unreachable!("{NONE_MADE}")
    }
}

const WHY: &str = "oxla was built without its `cuda` feature";

pub(crate) fn count() -> usize {
    0
}

pub(crate) fn unavailable() -> Option<String> {
    Some(WHY.into())
}

pub(crate) fn upload(_: usize, _: Buffer, _: &[usize]) -> Result<GpuBuffer, DeviceError> {
    Err(DeviceError(format!("oxla: {WHY}")))
}

pub(crate) fn download(_: &GpuBuffer) -> Result<Buffer, DeviceError> {
    unreachable!("{NONE_MADE}")
}

pub(crate) fn synchronize(_: &GpuBuffer) -> Result<(), DeviceError> {
    unreachable!("{NONE_MADE}")
}

pub(crate) fn call(
    _: &CompiledFn,
    d: Device,
    _: &[DeviceArgRef<'_>],
) -> Result<GpuOutputs, String> {
    Err(format!("oxla: cannot run on {d}: {WHY}"))
}
