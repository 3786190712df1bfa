//! What a call passes and how kernels run: `Launcher` (and the kernel
//! interpreter's and the compiled CPU kernels' launchers), the raw
//! arguments and destinations of a call, and their dimensions.

use crate::buffer::Buffer;
use crate::dtype::DType;
use crate::kernel::{interp, Kernel, KernelFn};

/// Runs the kernels of a program.
pub trait Launcher: Sync {
    /// Run kernel `kernel` of the program.
    ///
    /// # Safety
    /// `args` and `sizes` must satisfy the kernel's calling convention: each
    /// pointer is valid for the elements the kernel reads or writes and
    /// outputs alias nothing else.
    unsafe fn launch(&self, kernel: usize, args: &[*mut u8], sizes: &[i64]);

    /// `launch`, told that the kernel's domain has `elems` elements, so a
    /// backend may take a shorter route for a small one (the CPU's: no
    /// check for a split across threads).
    ///
    /// # Safety
    /// As for `launch`; `elems` is the product of the kernel's domain
    /// extents under `sizes`.
    #[inline]
    unsafe fn launch_elems(&self, kernel: usize, args: &[*mut u8], sizes: &[i64], elems: u64) {
        let _ = elems;
        // SAFETY: the caller's contract, passed on.
        unsafe { self.launch(kernel, args, sizes) }
    }
}

/// One argument of a call: element type, pointer to the first element,
/// element count, and the dimensions the caller holds it with (row-major,
/// contiguous), if it has them. The pointer must be valid for `len` reads of
/// `dtype`.
#[derive(Clone, Copy, Debug)]
pub struct RawArg {
    pub dtype: DType,
    pub ptr: *const u8,
    pub len: usize,
    pub dims: ArgDims,
}

/// The most axes an argument or result can have.
pub const MAX_RANK: usize = 8;

/// The dimensions of an argument or result, held inline (a call allocates
/// nothing for them), or `flat`: a buffer known only by its length, whose
/// dimensions are solved from the element count (a slice passed for a
/// parameter of any rank, the form the executor's tests and the GPU runner
/// use).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgDims {
    /// `u8::MAX` for flat.
    rank: u8,
    dims: [usize; MAX_RANK],
}

impl ArgDims {
    pub const FLAT: ArgDims = ArgDims {
        rank: u8::MAX,
        dims: [0; MAX_RANK],
    };

    /// `None` above `MAX_RANK` axes.
    #[inline]
    pub fn new(dims: &[usize]) -> Option<ArgDims> {
        if dims.len() > MAX_RANK {
            return None;
        }
        let mut d = [0; MAX_RANK];
        d[..dims.len()].copy_from_slice(dims);
        Some(ArgDims {
            rank: dims.len() as u8,
            dims: d,
        })
    }

    /// The dimensions, or `None` for a flat buffer.
    #[inline]
    pub fn get(&self) -> Option<&[usize]> {
        (self.rank != u8::MAX).then(|| &self.dims[..self.rank as usize])
    }
}

/// Where the caller wants one result written: a buffer it owns, of
/// `dtype`, `len` elements in row-major order with dimensions `dims`.
/// `name` names it in errors (the generated function's parameter).
#[derive(Clone, Copy, Debug)]
pub struct RawDest {
    pub dtype: DType,
    pub ptr: *mut u8,
    pub len: usize,
    pub dims: ArgDims,
    pub name: &'static str,
}

impl RawArg {
    /// An argument known by its length only (see `ArgDims::FLAT`).
    pub fn flat(dtype: DType, ptr: *const u8, len: usize) -> RawArg {
        RawArg {
            dtype,
            ptr,
            len,
            dims: ArgDims::FLAT,
        }
    }
}

/// Runs kernels with the kernel interpreter.
pub struct InterpLauncher<'a>(pub &'a [Kernel]);

impl Launcher for InterpLauncher<'_> {
    unsafe fn launch(&self, kernel: usize, args: &[*mut u8], sizes: &[i64]) {
        interp::run_raw(&self.0[kernel], args, sizes)
    }
}

/// Runs compiled CPU kernels from a table of function pointers.
pub struct FnLauncher<'a>(pub &'a [KernelFn]);

impl Launcher for FnLauncher<'_> {
    unsafe fn launch(&self, kernel: usize, args: &[*mut u8], sizes: &[i64]) {
        (self.0[kernel])(args.as_ptr(), sizes.as_ptr())
    }
}

/// Arguments for `Program::execute` borrowed from host buffers.
pub fn raw_args(bufs: &[Buffer]) -> Vec<RawArg> {
    bufs.iter()
        .map(|b| RawArg::flat(b.dtype(), b.as_ptr(), b.len()))
        .collect()
}
