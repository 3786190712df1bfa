//! Calling a generated function on device arrays: the `<name>_device`
//! sibling of every array function calls `CompiledFn::call_device`.
//!
//! The call runs where its array arguments live. On a CPU device it is the
//! ordinary call on the host arrays; on a GPU the function's program is
//! fused and its PTX loaded once per GPU (see `device_gpu`), and the call
//! queues its launches and returns device arrays without waiting.

use crate::__private::{Arg, CompiledFn, Element, Outputs};
use crate::device::{devices, Device, Platform};
use crate::device_array::{DeviceArray, Storage};
use crate::device_gpu::{self, GpuBuffer, GpuOutputs};
use ndarray::{Dimension, Ix0};
use oxla_core::Buffer;
use std::marker::PhantomData;
use std::sync::Arc;

/// What a `_device` function takes for a parameter of element type `T` and
/// dimensionality `D`: a [`DeviceArray`] (by reference or by value), or for
/// a scalar parameter a plain host value, which goes to the call's device.
pub trait DeviceArg<T: Element, D: Dimension> {
    #[doc(hidden)]
    fn device_arg(&self) -> DeviceArgRef<'_>;
}

/// One argument of a device call.
#[doc(hidden)]
pub enum DeviceArgRef<'a> {
    /// A host array on a CPU device.
    Host(Arg<'a>, Device),
    /// A host scalar (one element), for whichever device the call runs on.
    Scalar(Buffer),
    /// An array on a GPU (its buffer carries its dimensions).
    Gpu(&'a Arc<GpuBuffer>, Device),
}

impl DeviceArgRef<'_> {
    fn device(&self) -> Option<Device> {
        match self {
            DeviceArgRef::Host(_, d) | DeviceArgRef::Gpu(_, d) => Some(*d),
            DeviceArgRef::Scalar(_) => None,
        }
    }
}

impl<T: Element, D: Dimension> DeviceArg<T, D> for DeviceArray<T, D> {
    fn device_arg(&self) -> DeviceArgRef<'_> {
        match &self.storage {
            Storage::Host(a) => DeviceArgRef::Host(Arg::view(a.view()), self.device),
            Storage::Gpu(b, _) => DeviceArgRef::Gpu(b, self.device),
        }
    }
}

impl<T: Element, D: Dimension> DeviceArg<T, D> for &DeviceArray<T, D> {
    fn device_arg(&self) -> DeviceArgRef<'_> {
        (*self).device_arg()
    }
}

macro_rules! host_scalar {
    ($($t:ty),*) => {$(
        impl DeviceArg<$t, Ix0> for $t {
            fn device_arg(&self) -> DeviceArgRef<'_> {
                DeviceArgRef::Scalar(<$t as Element>::into_buffer(vec![*self]))
            }
        }
    )*};
}
host_scalar!(f32, f64, half::f16, half::bf16, i32, i64, bool);

/// The results of a device call, taken one by one by index.
pub struct DeviceOutputs<'a, 'b> {
    kind: OutputsKind<'a, 'b>,
}

enum OutputsKind<'a, 'b> {
    Host(&'a mut Outputs<'b>, Device),
    Gpu(GpuOutputs),
}

impl DeviceOutputs<'_, '_> {
    /// Result `i` as a device array of `T` with dimensionality `D`.
    pub fn take<T: Element, D: Dimension>(&mut self, i: usize) -> DeviceArray<T, D> {
        match &mut self.kind {
            OutputsKind::Host(outs, device) => {
                let a = outs.array::<T, D>(i);
                DeviceArray {
                    device: *device,
                    dim: a.raw_dim(),
                    storage: Storage::Host(a.into_shared()),
                }
            }
            OutputsKind::Gpu(outs) => {
                let (buf, dims, device) = outs.take(i, T::DTYPE);
                let dim = D::from_dimension(&ndarray::IxDyn(&dims)).unwrap_or_else(|| {
                    panic!(
                        "internal error: device result {i} has shape {dims:?}, not of rank {:?}",
                        D::NDIM
                    )
                });
                DeviceArray {
                    device,
                    dim,
                    storage: Storage::Gpu(Arc::new(buf), PhantomData),
                }
            }
        }
    }
}

/// The first of `devices()`, found once.
fn default_device() -> Device {
    static DEFAULT: std::sync::OnceLock<Device> = std::sync::OnceLock::new();
    *DEFAULT.get_or_init(|| devices()[0])
}

impl CompiledFn {
    /// Run on device arrays (one per IR parameter, in order) and pass the
    /// results to `take`. Panics, naming the arguments, when they are on
    /// different devices, and as `call` does on a shape mismatch.
    #[track_caller]
    pub fn call_device<R, const N: usize>(
        &self,
        args: [DeviceArgRef<'_>; N],
        take: impl FnOnce(&mut DeviceOutputs<'_, '_>) -> R,
    ) -> R {
        let device = self.call_device_of(&args);
        match device.platform() {
            Platform::Cpu => {
                let args: [Arg<'_>; N] = args.map(|a| match a {
                    DeviceArgRef::Host(arg, _) => arg,
                    DeviceArgRef::Scalar(b) => Arg::owned(b, &[]),
                    DeviceArgRef::Gpu(..) => unreachable!("checked: every array is on {device}"),
                });
                self.call(&args, |outs| {
                    take(&mut DeviceOutputs {
                        kind: OutputsKind::Host(outs, device),
                    })
                })
            }
            Platform::Gpu => {
                let outs = device_gpu::call(self, device, &args).unwrap_or_else(|e| panic!("{e}"));
                take(&mut DeviceOutputs {
                    kind: OutputsKind::Gpu(outs),
                })
            }
        }
    }

    /// The device every array argument is on (the default device, the
    /// first of `devices()`, when there is none); panics naming two
    /// arguments on different devices.
    #[track_caller]
    fn call_device_of(&self, args: &[DeviceArgRef<'_>]) -> Device {
        let mut first: Option<(usize, Device)> = None;
        for (i, a) in args.iter().enumerate() {
            let Some(d) = a.device() else { continue };
            match first {
                None => first = Some((i, d)),
                Some((j, e)) if e != d => panic!(
                    "oxla: argument `{}` of `{}` is on {d} but argument `{}` is on {e}: \
                     put them on one device (`DeviceArray::to_device`)",
                    self.param_name(i),
                    self.function_name(),
                    self.param_name(j),
                ),
                Some(_) => {}
            }
        }
        first.map_or_else(default_device, |(_, d)| d)
    }

    /// Parameter `i`'s name, read from the IR text (for messages).
    pub(crate) fn param_name(&self, i: usize) -> String {
        oxla_core::text::parse(self.ir)
            .ok()
            .and_then(|f| f.param_names.get(i).cloned())
            .unwrap_or_else(|| format!("#{i}"))
    }

    /// The function's name, read from the IR text (for messages).
    pub(crate) fn function_name(&self) -> String {
        oxla_core::text::parse(self.ir)
            .map(|f| f.name)
            .unwrap_or_else(|_| "?".into())
    }
}
