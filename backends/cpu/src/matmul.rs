//! Matrix products on the `gemm` crate.
//!
//! `dot_general` fuses into a reduction kernel whose body is the product of
//! two loads, summed over the contracted axes. Such a kernel is recognized
//! here (`MatmulPlan::of`) and run as calls to `gemm` (runtime-dispatched
//! AVX2/AVX-512/NEON micro-kernels, packing, and both cores for large
//! products) instead of the Cranelift loop nest, which has no register
//! blocking. The plan is read off the kernel's load strides at launch, so
//! every layout the fusion produces (a transposed operand, a batch axis
//! anywhere, several contracted axes) is one strided `gemm` call per batch
//! element, with no copies.
//!
//! Accuracy: `gemm` sums each element in blocks with FMA, as BLAS (and XLA
//! on the CPU) do; the error bound is the usual k·eps·Σ|a·b| rather than the
//! kernel IR's O(log k)·eps for sums. Products of vectors (m = n = 1), where
//! a blocked sum could be long, and very long contractions stay on the
//! pairwise-summing kernel.

use oxla_core::exec::Launcher;
use oxla_core::kernel::{InstKind, Kernel, Reduce};
use oxla_core::ops::elementwise::BinaryOp;
use oxla_core::{DType, KernelFn, Size};

/// The longest contraction run on `gemm` (see the module docs).
const MAX_K: u64 = 1 << 16;
/// Below this many multiply-adds one thread is faster than waking the pool.
const PARALLEL_FLOPS: u64 = 1 << 22;

/// A kernel that is a (batched, strided) matrix product.
#[derive(Clone, Debug)]
pub struct MatmulPlan {
    dtype: DType,
    /// Input args of the two factors, and the output arg.
    lhs: usize,
    rhs: usize,
    out: usize,
    domain: Vec<Size>,
    reduce_dims: usize,
    lhs_strides: Vec<Size>,
    rhs_strides: Vec<Size>,
    /// The kernel's size symbols, in the order their values are passed.
    size_names: Vec<String>,
}

impl MatmulPlan {
    /// The plan for `k` if it is `sum(load(a) * load(b))` over its reduced
    /// axes, in f32 or f64.
    pub fn of(k: &Kernel) -> Option<MatmulPlan> {
        if !k.is_reduction() || k.reduce != Reduce::Sum || k.stores.len() != 1 || k.insts.len() != 3
        {
            return None;
        }
        let dtype = k.args[k.stores[0].arg].dtype;
        if !matches!(dtype, DType::F32 | DType::F64) || k.args.iter().any(|a| a.dtype != dtype) {
            return None;
        }
        let InstKind::Binary(BinaryOp::Mul, x, y) = k.insts[k.stores[0].value].kind else {
            return None;
        };
        let load = |i: usize| match &k.insts[i].kind {
            // A load at an offset (a slice) is left to the kernel.
            InstKind::Load {
                arg,
                strides,
                offset,
            } if k.insts[i].ty == dtype && offset.is_empty() => Some((*arg, strides.clone())),
            _ => None,
        };
        let ((lhs, lhs_strides), (rhs, rhs_strides)) = (load(x)?, load(y)?);
        Some(MatmulPlan {
            dtype,
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

    /// Run the product if it suits `gemm` (see the module docs); `false`
    /// leaves it to the compiled kernel.
    ///
    /// # Safety
    /// `args` and `sizes` satisfy the kernel's calling convention (as for
    /// `Launcher::launch`).
    unsafe fn run(&self, args: &[*mut u8], sizes: &[i64]) -> bool {
        let eval = |s: &Size| s.eval(|name| self.size_of(name, sizes)) as i64;
        let extents: Vec<i64> = self.domain.iter().map(eval).collect();
        let sa: Vec<isize> = self.lhs_strides.iter().map(|s| eval(s) as isize).collect();
        let sb: Vec<isize> = self.rhs_strides.iter().map(|s| eval(s) as isize).collect();
        let outer = self.domain.len() - self.reduce_dims;
        // Row-major strides of the output over the outer axes.
        let mut so = vec![0isize; self.domain.len()];
        let mut step = 1isize;
        for i in (0..outer).rev() {
            so[i] = step;
            step *= extents[i] as isize;
        }
        let last = |pick: &dyn Fn(usize) -> bool, axes: std::ops::Range<usize>| {
            axes.rev().find(|i| pick(*i) && extents[*i] > 1)
        };
        let m_axis = last(&|i| sa[i] != 0 && sb[i] == 0, 0..outer);
        let n_axis = last(&|i| sb[i] != 0 && sa[i] == 0, 0..outer);
        let k_axis = (outer..self.domain.len()).max_by_key(|i| extents[*i]);
        let ext = |a: Option<usize>| a.map_or(1, |a| extents[a] as usize);
        let (m, n, k) = (ext(m_axis), ext(n_axis), ext(k_axis));
        if m * n < 2 || k as u64 > MAX_K {
            return false;
        }
        let loops: Vec<usize> = (0..self.domain.len())
            .filter(|i| Some(*i) != m_axis && Some(*i) != n_axis && Some(*i) != k_axis)
            .collect();
        let count: i64 = loops.iter().map(|i| extents[*i]).product();
        let total: i64 = extents[..outer].iter().product();
        let out = args[self.out];
        if total == 0 {
            return true;
        }
        if count == 0 || k == 0 {
            // A sum of no terms.
            match self.dtype {
                DType::F32 => {
                    std::slice::from_raw_parts_mut(out as *mut f32, total as usize).fill(0.0)
                }
                _ => std::slice::from_raw_parts_mut(out as *mut f64, total as usize).fill(0.0),
            }
            return true;
        }
        let par = if (m * n * k) as u64 * count as u64 >= PARALLEL_FLOPS {
            gemm::Parallelism::Rayon(0)
        } else {
            gemm::Parallelism::None
        };
        // The stride of each operand along the m, n and k axes (0 where the
        // product has no such axis, which then has size 1).
        let along = |s: &[isize], a: Option<usize>| a.map_or(0, |a| s[a]);
        let shape = GemmShape {
            mnk: (m, n, k),
            lhs: (along(&sa, m_axis), along(&sa, k_axis)),
            rhs: (along(&sb, k_axis), along(&sb, n_axis)),
            dst: (along(&so, m_axis), along(&so, n_axis)),
            par,
        };
        let mut coord = vec![0i64; loops.len()];
        for _ in 0..count {
            let off = |s: &[isize]| -> isize {
                loops
                    .iter()
                    .zip(&coord)
                    .map(|(a, c)| s[*a] * *c as isize)
                    .sum()
            };
            // Every reduced axis but `k_axis` is looped over: the first
            // product writes the output, the others add to it.
            let first = loops.iter().zip(&coord).all(|(a, c)| *a < outer || *c == 0);
            let offsets = [off(&sa), off(&sb), off(&so)];
            match self.dtype {
                DType::F32 => self.call::<f32>(args, offsets, &shape, !first),
                _ => self.call::<f64>(args, offsets, &shape, !first),
            }
            for (c, a) in coord.iter_mut().zip(&loops).rev() {
                *c += 1;
                if *c < extents[*a] {
                    break;
                }
                *c = 0;
            }
        }
        true
    }

    /// One `gemm` call at element offsets `[lhs, rhs, dst]`.
    unsafe fn call<T: 'static + Copy + From<u8>>(
        &self,
        args: &[*mut u8],
        [oa, ob, od]: [isize; 3],
        g: &GemmShape,
        accumulate: bool,
    ) {
        let a = (args[self.lhs] as *const T).offset(oa);
        let b = (args[self.rhs] as *const T).offset(ob);
        let d = (args[self.out] as *mut T).offset(od);
        let (m, n, k) = g.mnk;
        // dst (m×n) = lhs (m×k) · rhs (k×n); gemm takes (column, row) strides.
        gemm::gemm(
            m,
            n,
            k,
            d,
            g.dst.1,
            g.dst.0,
            accumulate,
            a,
            g.lhs.1,
            g.lhs.0,
            b,
            g.rhs.1,
            g.rhs.0,
            T::from(1),
            T::from(1),
            false,
            false,
            false,
            g.par,
        );
    }

    fn size_of(&self, name: &str, sizes: &[i64]) -> u64 {
        self.size_names
            .iter()
            .position(|s| s == name)
            .map_or(0, |i| sizes[i] as u64)
    }
}

/// The sizes of one product and each matrix's (row, column) strides.
struct GemmShape {
    mnk: (usize, usize, usize),
    lhs: (isize, isize),
    rhs: (isize, isize),
    dst: (isize, isize),
    par: gemm::Parallelism,
}

/// Runs compiled CPU kernels, and the matrix products among them on `gemm`.
pub struct CpuLauncher<'a> {
    pub fns: &'a [KernelFn],
    pub plans: &'a [Option<MatmulPlan>],
}

/// The plan of each kernel (`None` where it is not a matrix product).
pub fn matmul_plans(kernels: &[Kernel]) -> Vec<Option<MatmulPlan>> {
    kernels.iter().map(MatmulPlan::of).collect()
}

impl Launcher for CpuLauncher<'_> {
    unsafe fn launch(&self, kernel: usize, args: &[*mut u8], sizes: &[i64]) {
        // SAFETY: the caller's contract (`Launcher::launch`) covers both
        // routes: the plan reads and writes only what the kernel does.
        if let Some(Some(plan)) = self.plans.get(kernel) {
            if plan.run(args, sizes) {
                return;
            }
        }
        (self.fns[kernel])(args.as_ptr(), sizes.as_ptr())
    }
}
