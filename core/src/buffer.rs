//! Typed host memory: the storage behind interpreter tensors and kernel arguments.

use crate::dtype::DType;
use half::{bf16, f16};

/// A contiguous host buffer of one element type.
#[derive(Clone, Debug, PartialEq)]
pub enum Buffer {
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    /// One byte per element, 0 or 1.
    Bool(Vec<u8>),
    I32(Vec<i32>),
    I64(Vec<i64>),
}

/// `$e` with `$v` bound to the typed vector inside a [`Buffer`].
macro_rules! each_buffer {
    ($buf:expr, $v:ident => $e:expr) => {
        match $buf {
            Buffer::F16($v) => $e,
            Buffer::BF16($v) => $e,
            Buffer::F32($v) => $e,
            Buffer::F64($v) => $e,
            Buffer::Bool($v) => $e,
            Buffer::I32($v) => $e,
            Buffer::I64($v) => $e,
        }
    };
}
pub(crate) use each_buffer;

impl Buffer {
    pub fn zeros(dtype: DType, len: usize) -> Buffer {
        match dtype {
            DType::F16 => Buffer::F16(vec![f16::ZERO; len]),
            DType::BF16 => Buffer::BF16(vec![bf16::ZERO; len]),
            DType::F32 => Buffer::F32(vec![0.0; len]),
            DType::F64 => Buffer::F64(vec![0.0; len]),
            DType::Bool => Buffer::Bool(vec![0; len]),
            DType::I32 => Buffer::I32(vec![0; len]),
            DType::I64 => Buffer::I64(vec![0; len]),
        }
    }

    /// Round each value to `dtype` and store it.
    pub fn from_f64(dtype: DType, values: &[f64]) -> Buffer {
        let mut b = Buffer::zeros(dtype, values.len());
        for (i, v) in values.iter().enumerate() {
            b.set(i, *v);
        }
        b
    }

    pub fn dtype(&self) -> DType {
        match self {
            Buffer::F16(_) => DType::F16,
            Buffer::BF16(_) => DType::BF16,
            Buffer::F32(_) => DType::F32,
            Buffer::F64(_) => DType::F64,
            Buffer::Bool(_) => DType::Bool,
            Buffer::I32(_) => DType::I32,
            Buffer::I64(_) => DType::I64,
        }
    }

    pub fn len(&self) -> usize {
        each_buffer!(self, v => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> f64 {
        match self {
            Buffer::F16(v) => v[i].to_f64(),
            Buffer::BF16(v) => v[i].to_f64(),
            Buffer::F32(v) => v[i] as f64,
            Buffer::F64(v) => v[i],
            Buffer::Bool(v) => v[i] as f64,
            Buffer::I32(v) => v[i] as f64,
            Buffer::I64(v) => v[i] as f64,
        }
    }

    pub fn set(&mut self, i: usize, x: f64) {
        match self {
            Buffer::F16(v) => v[i] = f16::from_f32(x as f32),
            Buffer::BF16(v) => v[i] = bf16::from_f32(x as f32),
            Buffer::F32(v) => v[i] = x as f32,
            Buffer::F64(v) => v[i] = x,
            Buffer::Bool(v) => v[i] = (x != 0.0) as u8,
            Buffer::I32(v) => v[i] = x as i32,
            Buffer::I64(v) => v[i] = x as i64,
        }
    }

    pub fn to_f64(&self) -> Vec<f64> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }

    /// Pointer to the first element, for reading by a kernel.
    pub fn as_ptr(&self) -> *const u8 {
        each_buffer!(self, v => v.as_ptr().cast::<u8>())
    }

    /// Pointer to the first element, for passing to a kernel.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        each_buffer!(self, v => v.as_mut_ptr().cast::<u8>())
    }
}

/// Read element `i` of a buffer of `dtype` at `ptr`, widened to f64.
///
/// # Safety
/// `ptr` must point to at least `i + 1` valid elements of `dtype`.
pub unsafe fn read_raw(ptr: *const u8, dtype: DType, i: usize) -> f64 {
    match dtype {
        DType::F16 => (*(ptr as *const f16).add(i)).to_f64(),
        DType::BF16 => (*(ptr as *const bf16).add(i)).to_f64(),
        DType::F32 => *(ptr as *const f32).add(i) as f64,
        DType::F64 => *(ptr as *const f64).add(i),
        DType::Bool => *ptr.add(i) as f64,
        DType::I32 => *(ptr as *const i32).add(i) as f64,
        DType::I64 => *(ptr as *const i64).add(i) as f64,
    }
}

/// Write element `i` of a buffer of `dtype` at `ptr`, rounding from f64.
///
/// # Safety
/// `ptr` must point to at least `i + 1` writable elements of `dtype`.
pub unsafe fn write_raw(ptr: *mut u8, dtype: DType, i: usize, x: f64) {
    match dtype {
        DType::F16 => *(ptr as *mut f16).add(i) = f16::from_f32(x as f32),
        DType::BF16 => *(ptr as *mut bf16).add(i) = bf16::from_f32(x as f32),
        DType::F32 => *(ptr as *mut f32).add(i) = x as f32,
        DType::F64 => *(ptr as *mut f64).add(i) = x,
        DType::Bool => *ptr.add(i) = (x != 0.0) as u8,
        DType::I32 => *(ptr as *mut i32).add(i) = x as i32,
        DType::I64 => *(ptr as *mut i64).add(i) = x as i64,
    }
}
