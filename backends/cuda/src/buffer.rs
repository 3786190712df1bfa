//! Device-resident arrays and their host byte images.

use cudarc::driver::CudaSlice;
use half::{bf16, f16};
use oxla_core::exec::ArgDims;
use oxla_core::{Buffer, DType};

/// An array in device memory: `len` elements of `dtype`, with its
/// dimensions (row-major). A *flat* array (from [`Gpu::upload`]) is known by
/// its length only: its `dims()` are `[len]`, and a program binds the
/// dimensions of the parameter it is passed for from the element count;
/// a *shaped* one (from an upload with a shape, or a program's result)
/// binds them axis by axis, which also solves parameters with several
/// dimension symbols (`[b, n]`).
///
/// [`Gpu::upload`]: crate::Gpu::upload
pub struct DeviceBuffer {
    pub(crate) dtype: DType,
    pub(crate) len: usize,
    /// Row-major; their product is `len`. `[len]` for a flat array.
    pub(crate) dims: Vec<usize>,
    /// Whether `dims` are the array's shape (else it is flat).
    pub(crate) shaped: bool,
    /// At least one byte long, so even an empty buffer has a valid address.
    pub(crate) bytes: CudaSlice<u8>,
}

impl DeviceBuffer {
    /// `dims` must multiply to the elements `bytes` was allocated for.
    pub(crate) fn new(
        dtype: DType,
        dims: Vec<usize>,
        shaped: bool,
        bytes: CudaSlice<u8>,
    ) -> DeviceBuffer {
        let len = dims.iter().product();
        debug_assert!(bytes.len() >= len * dtype.size_bytes());
        DeviceBuffer {
            dtype,
            len,
            dims,
            shaped,
            bytes,
        }
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The dimensions, row-major (`[len]` for a flat array).
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// Whether the array carries a shape (else it is flat: see the type's
    /// docs).
    pub fn is_shaped(&self) -> bool {
        self.shaped
    }

    /// The same array with the shape `dims` (no copy); errs unless they
    /// hold exactly its element count.
    pub fn with_dims(mut self, dims: &[usize]) -> Result<DeviceBuffer, String> {
        self.reshape(dims)?;
        Ok(self)
    }

    /// Give the array the shape `dims` in place (no copy); errs, leaving
    /// it unchanged, unless they hold exactly its element count.
    pub fn reshape(&mut self, dims: &[usize]) -> Result<(), String> {
        let n = crate::context::numel(dims)?;
        if n != self.len {
            return Err(format!(
                "reshape: shape {dims:?} holds {n} elements, the array {}",
                self.len
            ));
        }
        self.dims = dims.to_vec();
        self.shaped = true;
        Ok(())
    }

    /// The same array known by its length only (see the type's docs).
    pub fn into_flat(mut self) -> DeviceBuffer {
        self.dims = vec![self.len];
        self.shaped = false;
        self
    }

    /// The dimensions a program binds from: `ArgDims::FLAT` for a flat
    /// array (or one of more axes than a parameter may have).
    pub(crate) fn arg_dims(&self) -> ArgDims {
        if self.shaped {
            ArgDims::new(&self.dims).unwrap_or(ArgDims::FLAT)
        } else {
            ArgDims::FLAT
        }
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
