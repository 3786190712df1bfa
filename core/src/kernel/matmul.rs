//! Which kernels are matrix products, and with which extents and strides.
//!
//! `dot_general` fuses into a reduction kernel whose body is the product of
//! two loads, summed over the contracted axes. Backends with a matrix-product
//! library (`gemm` on the CPU, cuBLAS on the GPU) recognize such a kernel
//! here and read the product's layout off its load strides at launch, so
//! every backend agrees on which kernels are products and what they compute;
//! each backend then decides which of them its library can express.
//!
//! At concrete sizes ([`MatmulKernel::shape`]) every domain axis has a role:
//! the `m` axis (the last outer axis of extent > 1 along which only the
//! left operand moves), the `n` axis (likewise for the right operand), the
//! `k` axis (the longest reduced axis), and the others (batch axes, further
//! free or contracted axes, axes of extent 1), which a backend loops over.

use super::{InstKind, Kernel, Reduce};
use crate::dtype::DType;
use crate::ops::elementwise::BinaryOp;
use crate::shape::Size;

/// The longest contraction a library runs: library products sum in blocks
/// (error k·eps·Σ|a·b|) rather than pairwise (O(log k)·eps), so beyond this
/// the kernel's own reduction keeps its accuracy.
pub const MAX_LIBRARY_K: usize = 1 << 16;

/// A kernel that is `sum(load(lhs) * load(rhs))` over its reduced axes.
#[derive(Clone, Debug, PartialEq)]
pub struct MatmulKernel {
    /// The element type of both operands and of the output in memory.
    pub dtype: DType,
    /// The type the products are summed in: `f32` for the half types.
    pub compute: DType,
    /// Kernel args of the two factors and of the output.
    pub lhs: usize,
    pub rhs: usize,
    pub out: usize,
    domain: Vec<Size>,
    reduce_dims: usize,
    lhs_strides: Vec<Size>,
    rhs_strides: Vec<Size>,
    /// The kernel's size symbols, in the order their values are passed.
    size_names: Vec<String>,
}

/// A product at concrete sizes: every axis's extent and strides, and its role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatmulShape {
    /// Domain extents, outermost first.
    pub extents: Vec<usize>,
    /// Element strides of the operands along each domain axis (0 where an
    /// operand does not move).
    pub lhs: Vec<isize>,
    pub rhs: Vec<isize>,
    /// Element strides of the output: row-major over the outer axes, 0 along
    /// the reduced ones.
    pub out: Vec<isize>,
    /// Number of outer (not reduced) axes.
    pub outer: usize,
    pub m_axis: Option<usize>,
    pub n_axis: Option<usize>,
    pub k_axis: Option<usize>,
    /// Every other axis, outermost first.
    pub loops: Vec<usize>,
}

impl MatmulKernel {
    /// `Some` if `k` is a sum of products of two loads without offsets, all
    /// three buffers of one float type.
    pub fn of(k: &Kernel) -> Option<MatmulKernel> {
        if !k.is_reduction() || k.reduce != Reduce::Sum || k.stores.len() != 1 || k.insts.len() != 3
        {
            return None;
        }
        let dtype = k.args[k.stores[0].arg].dtype;
        let compute = match dtype {
            DType::F16 | DType::BF16 => DType::F32,
            DType::F32 | DType::F64 => dtype,
            _ => return None,
        };
        if k.args.iter().any(|a| a.dtype != dtype) {
            return None;
        }
        let mul = &k.insts[k.stores[0].value];
        let InstKind::Binary(BinaryOp::Mul, x, y) = mul.kind else {
            return None;
        };
        if mul.ty != compute {
            return None;
        }
        let load = |i: usize| match &k.insts[i].kind {
            // A load at an offset (a slice) is left to the kernel.
            InstKind::Load {
                arg,
                strides,
                offset,
            } if k.insts[i].ty == compute && offset.is_empty() => Some((*arg, strides.clone())),
            _ => None,
        };
        let ((lhs, lhs_strides), (rhs, rhs_strides)) = (load(x)?, load(y)?);
        Some(MatmulKernel {
            dtype,
            compute,
            lhs,
            rhs,
            out: k.stores[0].arg,
            domain: k.domain.clone(),
            reduce_dims: k.reduce_dims,
            lhs_strides,
            rhs_strides,
            size_names: k.sizes.clone(),
        })
    }

    /// The product at the kernel's size values `sizes` (in `Kernel::sizes`
    /// order, as passed to a launch).
    pub fn shape(&self, sizes: &[i64]) -> MatmulShape {
        let eval = |s: &Size| s.eval(|name| self.size_of(name, sizes)) as usize;
        let extents: Vec<usize> = self.domain.iter().map(eval).collect();
        let lhs: Vec<isize> = self.lhs_strides.iter().map(|s| eval(s) as isize).collect();
        let rhs: Vec<isize> = self.rhs_strides.iter().map(|s| eval(s) as isize).collect();
        let rank = self.domain.len();
        let outer = rank - self.reduce_dims;
        // Row-major strides of the output over the outer axes.
        let mut out = vec![0isize; rank];
        let mut step = 1isize;
        for i in (0..outer).rev() {
            out[i] = step;
            step *= extents[i] as isize;
        }
        let last =
            |pick: &dyn Fn(usize) -> bool| (0..outer).rev().find(|i| pick(*i) && extents[*i] > 1);
        let m_axis = last(&|i| lhs[i] != 0 && rhs[i] == 0);
        let n_axis = last(&|i| rhs[i] != 0 && lhs[i] == 0);
        let k_axis = (outer..rank).max_by_key(|i| extents[*i]);
        let loops = (0..rank)
            .filter(|i| ![m_axis, n_axis, k_axis].contains(&Some(*i)))
            .collect();
        MatmulShape {
            extents,
            lhs,
            rhs,
            out,
            outer,
            m_axis,
            n_axis,
            k_axis,
            loops,
        }
    }

    fn size_of(&self, name: &str, sizes: &[i64]) -> u64 {
        self.size_names
            .iter()
            .position(|s| s == name)
            .map_or(0, |i| sizes[i] as u64)
    }
}

impl MatmulShape {
    fn extent(&self, axis: Option<usize>) -> usize {
        axis.map_or(1, |a| self.extents[a])
    }

    pub fn m(&self) -> usize {
        self.extent(self.m_axis)
    }

    pub fn n(&self) -> usize {
        self.extent(self.n_axis)
    }

    pub fn k(&self) -> usize {
        self.extent(self.k_axis)
    }

    /// How many `m×k · k×n` products the loop axes make.
    pub fn count(&self) -> usize {
        self.loops.iter().map(|a| self.extents[*a]).product()
    }

    /// Elements of the output.
    pub fn total(&self) -> usize {
        self.extents[..self.outer].iter().product()
    }

    /// `strides` along `axis`, 0 where the product has no such axis (it
    /// then has extent 1).
    pub fn along(strides: &[isize], axis: Option<usize>) -> isize {
        axis.map_or(0, |a| strides[a])
    }

    /// Whether a library should run this product rather than the kernel: a
    /// product of two vectors (m = n = 1) is a single long sum, better done
    /// by the kernel's pairwise reduction, and so is a contraction longer
    /// than [`MAX_LIBRARY_K`].
    pub fn suits_library(&self) -> bool {
        self.m() * self.n() >= 2 && self.k() <= MAX_LIBRARY_K
    }
}
