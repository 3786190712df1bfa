//! Devices: where arrays live and generated functions run.
//!
//! As in JAX, `devices()` lists the default platform's devices: the GPUs when
//! a CUDA driver and a GPU are present (and oxla was built with its `cuda`
//! feature), else the CPU devices. A CPU device's arrays are host memory and
//! its calls run the CPU kernels (on every thread oxla uses); a GPU's arrays
//! live in its memory and its calls are queued on its stream.

use std::fmt;

/// A kind of device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Platform {
    /// The host's cores (`OXLA_CPU_DEVICES` devices, or one per core).
    Cpu,
    /// A CUDA GPU.
    Gpu,
}

/// One device: a platform and an index on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Device {
    platform: Platform,
    id: usize,
}

impl Device {
    /// The kind of device it is.
    pub fn platform(&self) -> Platform {
        self.platform
    }

    /// The index among the devices of its platform.
    pub fn id(&self) -> usize {
        self.id
    }

    /// Whether it is a GPU.
    pub fn is_gpu(&self) -> bool {
        self.platform == Platform::Gpu
    }

    pub(crate) fn cpu_device(id: usize) -> Device {
        Device {
            platform: Platform::Cpu,
            id,
        }
    }

    pub(crate) fn gpu_device(id: usize) -> Device {
        Device {
            platform: Platform::Gpu,
            id,
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.platform {
            Platform::Cpu => write!(f, "cpu:{}", self.id),
            Platform::Gpu => write!(f, "gpu:{}", self.id),
        }
    }
}

/// Why a device or a device array cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceError(pub(crate) String);

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DeviceError {}

/// The environment variable that sets how many CPU devices there are (as
/// JAX's `--xla_force_host_platform_device_count`); by default one per core.
pub const CPU_DEVICES_ENV: &str = oxla_core::exec::CPU_DEVICES_ENV;

/// The default platform's devices: the GPUs if there are any, else the CPU
/// devices. Never empty.
pub fn devices() -> Vec<Device> {
    let gpus = gpu_devices();
    if gpus.is_empty() {
        cpu_devices()
    } else {
        gpus
    }
}

/// Sets the number of CPU devices for the rest of the process, over
/// `OXLA_CPU_DEVICES` (JAX's `jax_num_cpu_devices`): a `#[pmap]` over `n`
/// devices needs at least `n`.
pub fn set_cpu_device_count(n: usize) {
    oxla_core::exec::set_cpu_device_count(n)
}

/// The CPU devices: as many as the last [`set_cpu_device_count`] said, else
/// `OXLA_CPU_DEVICES` if set (at least 1), else one per core.
pub fn cpu_devices() -> Vec<Device> {
    (0..oxla_core::exec::cpu_device_count())
        .map(Device::cpu_device)
        .collect()
}

/// The GPUs this process can use (none without a CUDA driver or without the
/// `cuda` feature).
pub fn gpu_devices() -> Vec<Device> {
    (0..crate::device_gpu::count())
        .map(Device::gpu_device)
        .collect()
}

/// CPU device 0.
pub fn cpu() -> Device {
    Device::cpu_device(0)
}

/// GPU `id`, or why it cannot be used.
pub fn gpu(id: usize) -> Result<Device, DeviceError> {
    let n = crate::device_gpu::count();
    if id < n {
        Ok(Device::gpu_device(id))
    } else {
        Err(DeviceError(match crate::device_gpu::unavailable() {
            Some(why) => format!("oxla: no GPU {id}: {why}"),
            None => format!("oxla: no GPU {id}: this process has {n} GPU(s)"),
        }))
    }
}
