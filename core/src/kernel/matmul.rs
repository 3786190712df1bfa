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
        MatmulShape::new(extents, lhs, rhs, self.domain.len() - self.reduce_dims)
    }

    fn size_of(&self, name: &str, sizes: &[i64]) -> u64 {
        self.size_names
            .iter()
            .position(|s| s == name)
            .map_or(0, |i| sizes[i] as u64)
    }
}

impl MatmulShape {
    /// The product over axes of `extents` (the first `outer` not reduced)
    /// with the operands' strides `lhs`, `rhs`: the output's strides and
    /// each axis's role.
    pub fn new(extents: Vec<usize>, lhs: Vec<isize>, rhs: Vec<isize>, outer: usize) -> MatmulShape {
        let rank = extents.len();
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

    /// The same product over fewer, longer axes: axes of extent 1 dropped,
    /// and each axis merged into the one before it (both outer or both
    /// reduced) where both operands and the output step through the pair as
    /// through one axis: `m` split over two free axes stored together,
    /// adjacent batch axes, contracted axes stored together. A product with
    /// no elements or no terms is returned as it is.
    pub fn collapsed(&self) -> MatmulShape {
        if self.extents.contains(&0) {
            return self.clone();
        }
        let (mut extents, mut lhs, mut rhs) = (Vec::new(), Vec::new(), Vec::new());
        let mut outer = 0;
        let mut prev_outer = None;
        for a in (0..self.extents.len()).filter(|a| self.extents[*a] > 1) {
            let is_outer = a < self.outer;
            let (e, sl, sr) = (self.extents[a], self.lhs[a], self.rhs[a]);
            if prev_outer == Some(is_outer) {
                let last = extents.len() - 1;
                // The output is row-major over the outer axes (and 0 on the
                // reduced ones), so it always steps through such a pair as
                // through one axis; the operands must too.
                if lhs[last] == e as isize * sl && rhs[last] == e as isize * sr {
                    extents[last] *= e;
                    lhs[last] = sl;
                    rhs[last] = sr;
                    continue;
                }
            }
            extents.push(e);
            lhs.push(sl);
            rhs.push(sr);
            outer += usize::from(is_outer);
            prev_outer = Some(is_outer);
        }
        MatmulShape::new(extents, lhs, rhs, outer)
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    /// `x[b, s, d] · w[d, e]`: domain (b, s, e, d).
    fn rows_times_weight(b: usize, s: usize, d: usize, e: usize) -> MatmulShape {
        let lhs = vec![(s * d) as isize, d as isize, 0, 1];
        let rhs = vec![0, 0, 1, e as isize];
        MatmulShape::new(vec![b, s, e, d], lhs, rhs, 3)
    }

    #[test]
    fn roles_of_the_axes() {
        let p = rows_times_weight(2, 3, 4, 5);
        assert_eq!((p.m_axis, p.n_axis, p.k_axis), (Some(1), Some(2), Some(3)));
        assert_eq!(p.loops, [0]);
        assert_eq!(p.out, [15, 5, 1, 0]);
        assert_eq!(
            (p.m(), p.n(), p.k(), p.count(), p.total()),
            (3, 5, 4, 2, 30)
        );
    }

    #[test]
    fn collapsing_merges_axes_that_step_as_one() {
        let p = rows_times_weight(2, 3, 4, 5).collapsed();
        assert_eq!(p.extents, [6, 5, 4]);
        assert_eq!((p.m(), p.n(), p.k(), p.count()), (6, 5, 4, 1));
        assert!(p.loops.is_empty());
        // Rows stored with a gap between the batches do not merge.
        let mut gap = rows_times_weight(2, 3, 4, 5);
        gap.lhs[0] += 1;
        let q = gap.collapsed();
        assert_eq!((q.m(), q.count()), (3, 2));
        // Axes of extent 1 are dropped; a product of no terms stays as is.
        let p = MatmulShape::new(vec![1, 4, 1, 3], vec![0, 3, 0, 1], vec![0, 0, 0, 1], 2);
        assert_eq!(p.collapsed().extents, [4, 3]);
        let z = rows_times_weight(2, 3, 0, 5);
        assert_eq!(z.collapsed(), z);
    }
}
