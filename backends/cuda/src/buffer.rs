//! Device-resident arrays and their host byte images.

use cudarc::driver::CudaSlice;
use half::{bf16, f16};
use oxla_core::{Buffer, DType};

/// An array in device memory: `len` elements of `dtype`.
pub struct DeviceBuffer {
    pub(crate) dtype: DType,
    pub(crate) len: usize,
    /// At least one byte long, so even an empty buffer has a valid address.
    pub(crate) bytes: CudaSlice<u8>,
}

impl DeviceBuffer {
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn num_bytes(&self) -> usize {
        self.len * self.dtype.size_bytes()
    }
}

/// The first `len` elements of `b` as bytes in device (little-endian) order.
pub(crate) fn to_bytes(b: &Buffer, len: usize) -> Vec<u8> {
    match b {
        Buffer::F16(v) => v[..len]
            .iter()
            .flat_map(|x| x.to_bits().to_le_bytes())
            .collect(),
        Buffer::BF16(v) => v[..len]
            .iter()
            .flat_map(|x| x.to_bits().to_le_bytes())
            .collect(),
        Buffer::F32(v) => v[..len].iter().flat_map(|x| x.to_le_bytes()).collect(),
        Buffer::F64(v) => v[..len].iter().flat_map(|x| x.to_le_bytes()).collect(),
        Buffer::Bool(v) => v[..len].to_vec(),
        Buffer::I32(v) => v[..len].iter().flat_map(|x| x.to_le_bytes()).collect(),
        Buffer::I64(v) => v[..len].iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

/// Overwrite the first elements of `b` with the elements in `bytes`.
pub(crate) fn write_bytes(b: &mut Buffer, bytes: &[u8]) {
    fn fill<T, const N: usize>(v: &mut [T], bytes: &[u8], f: impl Fn([u8; N]) -> T) {
        for (x, c) in v.iter_mut().zip(bytes.chunks_exact(N)) {
            *x = f(c.try_into().expect("chunk of N bytes"));
        }
    }
    match b {
        Buffer::F16(v) => fill(v, bytes, |c| f16::from_bits(u16::from_le_bytes(c))),
        Buffer::BF16(v) => fill(v, bytes, |c| bf16::from_bits(u16::from_le_bytes(c))),
        Buffer::F32(v) => fill(v, bytes, f32::from_le_bytes),
        Buffer::F64(v) => fill(v, bytes, f64::from_le_bytes),
        Buffer::Bool(v) => fill(v, bytes, |c: [u8; 1]| c[0]),
        Buffer::I32(v) => fill(v, bytes, i32::from_le_bytes),
        Buffer::I64(v) => fill(v, bytes, i64::from_le_bytes),
    }
}
