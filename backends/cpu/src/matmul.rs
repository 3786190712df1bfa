//! Matrix products on the `gemm` crate.
//!
//! `dot_general` fuses into a reduction kernel whose body is the product of
//! two loads, summed over the contracted axes. Such a kernel is recognized
//! by `oxla_core::kernel::matmul` (shared with the GPU's cuBLAS path, so
//! both backends agree on what a product is) and run as calls to `gemm` (runtime-dispatched
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

use crate::parallel::{num_threads, pool, Split};
use oxla_core::exec::Launcher;
use oxla_core::kernel::matmul::{MatmulKernel, MatmulShape};
use oxla_core::{DType, Kernel, KernelFn};

/// Below this many multiply-adds one thread is faster than waking the pool.
const PARALLEL_FLOPS: u64 = 1 << 22;
/// The same for a matrix-vector product, which reads its matrix once
/// (memory-bound: two cores read it faster from 2^18 elements, 1 MB of f32).
const PARALLEL_VECTOR_FLOPS: u64 = 1 << 18;

/// A kernel that is a (batched, strided) matrix product in f32 or f64
/// (recognized by `oxla_core::kernel::matmul`, shared with the GPU).
#[derive(Clone, Debug)]
pub struct MatmulPlan {
    product: MatmulKernel,
}

impl MatmulPlan {
    /// The plan for `k` if it is `sum(load(a) * load(b))` over its reduced
    /// axes, in f32 or f64.
    pub fn of(k: &Kernel) -> Option<MatmulPlan> {
        let product = MatmulKernel::of(k)?;
        matches!(product.dtype, DType::F32 | DType::F64).then_some(MatmulPlan { product })
    }

    /// Run the product if it suits `gemm` (see the module docs); `false`
    /// leaves it to the compiled kernel.
    ///
    /// # Safety
    /// `args` and `sizes` satisfy the kernel's calling convention (as for
    /// `Launcher::launch`).
    unsafe fn run(&self, args: &[*mut u8], sizes: &[i64]) -> bool {
        let s = self.product.shape(sizes);
        if !s.suits_library() {
            return false;
        }
        let (m, n, k) = (s.m(), s.n(), s.k());
        let count = s.count();
        let total = s.total();
        let out = args[self.product.out];
        if total == 0 {
            return true;
        }
        if count == 0 || k == 0 {
            // A sum of no terms.
            match self.product.dtype {
                DType::F32 => std::slice::from_raw_parts_mut(out as *mut f32, total).fill(0.0),
                _ => std::slice::from_raw_parts_mut(out as *mut f64, total).fill(0.0),
            }
            return true;
        }
        // Large products run on oxla's pool, with as many threads as it
        // has (`OXLA_NUM_THREADS`): never on rayon's global pool.
        let threads = num_threads();
        let flops = (m * n * k) as u64 * count as u64;
        // A matrix times a vector; a vector times a matrix (m = 1) stays
        // whole: cut into column blocks, each call packs the matrix again
        // and the split measured 2.4× slower.
        let vector = n == 1 && m > 1;
        // Whether the product is cut into row blocks depends on its shape
        // alone, so the sums are the same at any thread count.
        let split = vector && flops >= PARALLEL_VECTOR_FLOPS;
        let pool = (threads > 1 && (split || flops >= PARALLEL_FLOPS))
            .then(|| pool(threads))
            .flatten();
        let par = match &pool {
            Some(_) => gemm::Parallelism::Rayon(threads),
            None => gemm::Parallelism::None,
        };
        // The stride of each operand along the m, n and k axes (0 where the
        // product has no such axis, which then has size 1).
        let along = MatmulShape::along;
        let shape = GemmShape {
            mnk: (m, n, k),
            lhs: (along(&s.lhs, s.m_axis), along(&s.lhs, s.k_axis)),
            rhs: (along(&s.rhs, s.k_axis), along(&s.rhs, s.n_axis)),
            dst: (along(&s.out, s.m_axis), along(&s.out, s.n_axis)),
            par,
        };
        let loops = &s.loops;
        let mut coord = vec![0usize; loops.len()];
        for _ in 0..count {
            let off = |st: &[isize]| -> isize {
                loops
                    .iter()
                    .zip(&coord)
                    .map(|(a, c)| st[*a] * *c as isize)
                    .sum()
            };
            // Every reduced axis but `k_axis` is looped over: the first
            // product writes the output, the others add to it.
            let first = loops
                .iter()
                .zip(&coord)
                .all(|(a, c)| *a < s.outer || *c == 0);
            let offsets = [off(&s.lhs), off(&s.rhs), off(&s.out)];
            let call = |offsets: [isize; 3], g: &GemmShape| match self.product.dtype {
                DType::F32 => self.call::<f32>(args, offsets, g, !first),
                _ => self.call::<f64>(args, offsets, g, !first),
            };
            // A matrix times a vector: gemm runs it on one thread, so its
            // rows are cut into blocks, one call each, run across the pool.
            let add = |(o, g): ([isize; 3], GemmShape)| {
                call(
                    [offsets[0] + o[0], offsets[1] + o[1], offsets[2] + o[2]],
                    &g,
                )
            };
            match &pool {
                _ if split && pool.is_none() => {
                    vector_product_parts(&shape).into_iter().for_each(add)
                }
                Some(p) if split => {
                    let parts = vector_product_parts(&shape);
                    let add = Shared(&add);
                    p.install(|| {
                        use rayon::prelude::*;
                        parts.into_par_iter().for_each(|part| add.get()(part));
                    });
                }
                None => call(offsets, &shape),
                Some(p) => {
                    let call = Shared(&call);
                    p.install(|| call.get()(offsets, &shape));
                }
            }
            for (c, a) in coord.iter_mut().zip(loops).rev() {
                *c += 1;
                if *c < s.extents[*a] {
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
        let a = (args[self.product.lhs] as *const T).offset(oa);
        let b = (args[self.product.rhs] as *const T).offset(ob);
        let d = (args[self.product.out] as *mut T).offset(od);
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
}

/// A matrix-vector product split across threads is cut into this many
/// blocks (fewer where they would be under `VECTOR_PRODUCT_MIN_ROWS`): a
/// function of the shape alone, not of the thread count, so every element
/// is summed by the same call whatever the number of threads.
const VECTOR_PRODUCT_BLOCKS: usize = 16;
const VECTOR_PRODUCT_MIN_ROWS: usize = 64;

/// A matrix-vector product `g` (n = 1, or m = 1) cut along its long side
/// into blocks (`VECTOR_PRODUCT_BLOCKS`): each block's element offsets
/// (added to the product's) and shape, single-threaded.
fn vector_product_parts(g: &GemmShape) -> Vec<([isize; 3], GemmShape)> {
    let (m, n, k) = g.mnk;
    let along_m = n == 1;
    let long = if along_m { m } else { n };
    let rows = long
        .div_ceil(VECTOR_PRODUCT_BLOCKS)
        .max(VECTOR_PRODUCT_MIN_ROWS);
    (0..long)
        .step_by(rows)
        .map(|lo| {
            let len = rows.min(long - lo);
            let lo = lo as isize;
            let (offsets, mnk) = if along_m {
                ([lo * g.lhs.0, 0, lo * g.dst.0], (len, n, k))
            } else {
                ([0, lo * g.rhs.1, lo * g.dst.1], (m, len, k))
            };
            let part = GemmShape {
                mnk,
                par: gemm::Parallelism::None,
                ..*g
            };
            (offsets, part)
        })
        .collect()
}

/// A value the pool's threads may use while the caller waits in `install`.
struct Shared<T>(T);

impl<T> Shared<T> {
    // A method, so that closures capture the whole `Shared` (which is
    // `Sync`) rather than its field.
    fn get(&self) -> &T {
        &self.0
    }
}
// SAFETY: what crosses is a closure over the kernel's argument pointers,
// used only inside `install`, which returns after every part has; the parts
// write disjoint rows (columns) of the output.
unsafe impl<T> Sync for Shared<T> {}
// SAFETY: as for `Sync`.
unsafe impl<T> Send for Shared<T> {}

/// The sizes of one product and each matrix's (row, column) strides.
#[derive(Clone, Copy)]
struct GemmShape {
    mnk: (usize, usize, usize),
    lhs: (isize, isize),
    rhs: (isize, isize),
    dst: (isize, isize),
    par: gemm::Parallelism,
}

/// Runs compiled CPU kernels, the matrix products among them on `gemm`, and
/// large kernels split across threads (`parallel`).
pub struct CpuLauncher<'a> {
    pub kernels: &'a [Kernel],
    pub fns: &'a [KernelFn],
    pub plans: &'a [Option<MatmulPlan>],
    /// Per kernel, how it splits across threads (empty: never).
    pub splits: &'a [Option<Split>],
}

/// The plan of each kernel (`None` where it is not a matrix product).
pub fn matmul_plans(kernels: &[Kernel]) -> Vec<Option<MatmulPlan>> {
    kernels.iter().map(MatmulPlan::of).collect()
}

impl Launcher for CpuLauncher<'_> {
    // Inlined into the direct call: at small sizes the launch is a few
    // compares before the kernel.
    #[inline(always)]
    unsafe fn launch(&self, kernel: usize, args: &[*mut u8], sizes: &[i64]) {
        // SAFETY: the caller's contract (`Launcher::launch`) covers both
        // routes: the plan reads and writes only what the kernel does.
        if let Some(Some(plan)) = self.plans.get(kernel) {
            if plan.run(args, sizes) {
                return;
            }
        }
        let f = self.fns[kernel];
        if let (Some(Some(split)), Some(k)) = (self.splits.get(kernel), self.kernels.get(kernel)) {
            if split.run(k, f, args, sizes) {
                return;
            }
        }
        f(args.as_ptr(), sizes.as_ptr())
    }
}
