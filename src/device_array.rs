//! `DeviceArray`: an immutable array on one device, as `jax.Array` is.
//!
//! On a CPU device it is a shared host array; on a GPU its elements live in
//! device memory and stay there between calls, so `f_device(g_device(&x))`
//! never copies through the host. A GPU array returned by a call may still
//! be being computed: reading it (`to_host`, `item`) waits, as JAX's
//! asynchronous dispatch does. Cloning shares the elements.

use crate::__private::Element;
use crate::device::{Device, DeviceError, Platform};
use crate::device_gpu::{self, GpuBuffer};
use ndarray::{ArcArray, Array, AsArray, Dimension, Ix0, IxDyn};
use oxla_core::DType;
use std::marker::PhantomData;
use std::sync::Arc;

/// An array of `T` with dimensionality `D` on a [`Device`].
pub struct DeviceArray<T: Element, D: Dimension> {
    pub(crate) device: Device,
    pub(crate) dim: D,
    pub(crate) storage: Storage<T, D>,
}

pub(crate) enum Storage<T, D> {
    /// On a CPU device.
    Host(ArcArray<T, D>),
    /// On a GPU (row-major, `dim`'s element count).
    Gpu(Arc<GpuBuffer>, PhantomData<T>),
}

impl<T: Element, D: Dimension> Clone for DeviceArray<T, D> {
    fn clone(&self) -> Self {
        DeviceArray {
            device: self.device,
            dim: self.dim.clone(),
            storage: match &self.storage {
                Storage::Host(a) => Storage::Host(a.clone()),
                Storage::Gpu(b, _) => Storage::Gpu(b.clone(), PhantomData),
            },
        }
    }
}

/// Copy `x` to `device` (JAX's `jax.device_put`). `x` is anything ndarray
/// views: `&Array2<f32>`, an `ArrayView`, a `&[f64]` (rank 1).
pub fn device_put<'a, T: Element, D: Dimension>(
    x: impl AsArray<'a, T, D>,
    device: &Device,
) -> Result<DeviceArray<T, D>, DeviceError> {
    DeviceArray::from_array(x, device)
}

impl<T: Element, D: Dimension> DeviceArray<T, D> {
    /// Copy `x` to `device`.
    pub fn from_array<'a>(x: impl AsArray<'a, T, D>, device: &Device) -> Result<Self, DeviceError> {
        let view = x.into();
        let dim = view.raw_dim();
        let storage = match device.platform() {
            Platform::Cpu => Storage::Host(view.to_owned().into_shared()),
            Platform::Gpu => {
                // Row-major elements, whatever the view's layout.
                let elems: Vec<T> = view.iter().copied().collect();
                let b = device_gpu::upload(device.id(), T::into_buffer(elems), dim.slice())?;
                Storage::Gpu(Arc::new(b), PhantomData)
            }
        };
        Ok(DeviceArray {
            device: *device,
            dim,
            storage,
        })
    }

    /// The device the elements live on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The size of each axis (ndarray's `shape`).
    pub fn shape(&self) -> &[usize] {
        self.dim.slice()
    }

    /// The shape as ndarray's dimension type (ndarray's `raw_dim`).
    pub fn raw_dim(&self) -> D {
        self.dim.clone()
    }

    /// The number of axes.
    pub fn ndim(&self) -> usize {
        self.dim.ndim()
    }

    /// The element count.
    pub fn len(&self) -> usize {
        self.dim.size()
    }

    /// Whether it has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type, as a value.
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }

    /// Copy to the host, waiting for the computation that produces it.
    /// Panics (naming the device) if the device fails.
    #[track_caller]
    pub fn to_host(&self) -> Array<T, D> {
        match &self.storage {
            Storage::Host(a) => a.to_owned(),
            Storage::Gpu(b, _) => {
                let buf = device_gpu::download(b).unwrap_or_else(|e| panic!("{e}"));
                Array::from_shape_vec(self.dim.clone(), T::take(buf))
                    .expect("a device buffer holds its shape's element count")
            }
        }
    }

    /// `to_host`, consuming the array (no copy on a CPU device when the
    /// elements are not shared).
    #[track_caller]
    pub fn into_ndarray(self) -> Array<T, D> {
        match self.storage {
            Storage::Host(a) => a.into_owned(),
            Storage::Gpu(..) => self.to_host(),
        }
    }

    /// The elements in row-major order, on the host.
    #[track_caller]
    pub fn to_vec(&self) -> Vec<T> {
        self.to_host().iter().copied().collect()
    }

    /// Copy to another device (a clone when it is already there).
    pub fn to_device(&self, device: &Device) -> Result<Self, DeviceError> {
        if *device == self.device {
            return Ok(self.clone());
        }
        DeviceArray::from_array(&self.to_host(), device)
    }

    /// Wait until the elements are computed (JAX's `block_until_ready`).
    #[track_caller]
    pub fn block_until_ready(&self) -> &Self {
        if let Storage::Gpu(b, _) = &self.storage {
            device_gpu::synchronize(b).unwrap_or_else(|e| panic!("{e}"));
        }
        self
    }

    /// The same elements with dynamic dimensionality.
    pub fn into_dyn(self) -> DeviceArray<T, IxDyn> {
        DeviceArray {
            device: self.device,
            dim: self.dim.into_dyn(),
            storage: match self.storage {
                Storage::Host(a) => Storage::Host(a.into_dyn()),
                Storage::Gpu(b, _) => Storage::Gpu(b, PhantomData),
            },
        }
    }
}

impl<T: Element> DeviceArray<T, Ix0> {
    /// A scalar on `device`.
    pub fn scalar(x: T, device: &Device) -> Result<Self, DeviceError> {
        DeviceArray::from_array(&ndarray::arr0(x), device)
    }

    /// The value, on the host (waits for it).
    #[track_caller]
    pub fn item(&self) -> T {
        self.to_host().into_scalar()
    }
}

impl<T: Element + std::fmt::Debug, D: Dimension> std::fmt::Debug for DeviceArray<T, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceArray<{}>{:?} on {}",
            T::DTYPE,
            self.shape(),
            self.device
        )
    }
}
