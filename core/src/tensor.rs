//! Host tensors for the reference interpreter: values held as `f64`, each
//! already rounded to the tensor's dtype.

use crate::buffer::Buffer;
use crate::dtype::DType;

#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub dtype: DType,
    pub shape: Vec<usize>,
    /// Row-major elements.
    pub data: Vec<f64>,
}

impl Tensor {
    /// A tensor from values, rounding each to `dtype`.
    pub fn new(dtype: DType, shape: Vec<usize>, data: Vec<f64>) -> Tensor {
        assert_eq!(
            shape.iter().product::<usize>(),
            data.len(),
            "tensor data does not match its shape"
        );
        let data = data.into_iter().map(|v| dtype.round(v)).collect();
        Tensor { dtype, shape, data }
    }
    pub fn scalar(dtype: DType, v: f64) -> Tensor {
        Tensor::new(dtype, vec![], vec![v])
    }
    pub fn vector(dtype: DType, v: &[f64]) -> Tensor {
        Tensor::new(dtype, vec![v.len()], v.to_vec())
    }
    pub fn from_buffer(shape: Vec<usize>, b: &Buffer) -> Tensor {
        Tensor::new(b.dtype(), shape, b.to_f64())
    }
    pub fn to_buffer(&self) -> Buffer {
        Buffer::from_f64(self.dtype, &self.data)
    }
    pub fn numel(&self) -> usize {
        self.data.len()
    }
    /// Row-major strides.
    pub fn strides(&self) -> Vec<usize> {
        let mut s = vec![1; self.shape.len()];
        for i in (0..self.shape.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1] * self.shape[i + 1];
        }
        s
    }
}

/// Decode a row-major flat index into a coordinate.
pub fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for k in (0..shape.len()).rev() {
        c[k] = i % shape[k];
        i /= shape[k];
    }
    c
}
