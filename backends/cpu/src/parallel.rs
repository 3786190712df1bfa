//! Kernels split across threads.
//!
//! A kernel over enough elements runs as several calls of the same compiled
//! function, each over a range of rows of its outermost axis, on a thread
//! pool. Nothing in the generated code changes: a call over rows `lo..hi`
//! gets every buffer pointer moved by `lo` rows (each buffer's stride along
//! axis 0) and the size symbol of axis 0 set to `hi - lo`. That is exact
//! when the symbol means that extent and nothing else (`Split::of` checks).
//!
//! Results do not depend on the number of threads:
//! - in a map, and in a reduction that keeps axis 0, every output element is
//!   computed by one call, whatever the split;
//! - a reduction over every axis is cut into blocks of `BLOCK_ELEMS`
//!   elements (rows of axis 0; the cut depends only on the extents), each
//!   block's result goes to its own partial, and the partials are combined
//!   pairwise in block order. One thread runs the same blocks.
//!
//! Kernels under `MIN_PARALLEL_ELEMS` elements stay whole on the calling
//! thread. The pool has `num_threads()` threads: the last
//! `set_num_threads(n)`, else `OXLA_NUM_THREADS` (read on first use), else
//! the cores available to the process; either setting is capped at
//! `max_threads()` (`THREADS_PER_CORE` per available core), with a one-time
//! warning on stderr.

use oxla_core::kernel::{InstKind, Kernel, Reduce};
use oxla_core::{DType, KernelFn, Size};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Below this many elements a kernel runs whole on the calling thread.
pub const MIN_PARALLEL_ELEMS: u64 = 1 << 17;

/// Elements per block of a reduction over every axis.
pub const BLOCK_ELEMS: u64 = 1 << 16;

/// The environment variable that sets the number of threads.
pub const THREADS_ENV: &str = "OXLA_NUM_THREADS";

/// The most threads per available core: `num_threads()` is capped at
/// `THREADS_PER_CORE × available_parallelism()`. Kernels are split into at
/// most one part per thread and the work is compute- or memory-bound, so
/// threads beyond the cores only add pool threads (a stack each) and
/// smaller parts; a few per core still allow for oversubscribed or
/// hyperthreaded machines, and a typo such as `OXLA_NUM_THREADS=10000` no
/// longer starts ten thousand threads per kernel (a 0.66 s workload ran for
/// minutes).
pub const THREADS_PER_CORE: usize = 4;

static THREADS: AtomicUsize = AtomicUsize::new(0);
static POOL: Mutex<Option<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(None);
static WARNED: std::sync::Once = std::sync::Once::new();

/// The cap on the number of threads: `THREADS_PER_CORE` times the cores
/// available to the process (`std::thread::available_parallelism`, 1 when
/// unknown).
pub fn max_threads() -> usize {
    THREADS_PER_CORE * std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `n` capped at `max_threads()`, warning once per process on stderr when
/// it is (`from` says where `n` came from).
fn capped(n: usize, from: &str) -> usize {
    let cap = max_threads();
    if n <= cap {
        return n;
    }
    WARNED.call_once(|| {
        eprintln!(
            "oxla: {from} asks for {n} threads; using {cap} ({THREADS_PER_CORE} per available core, the most oxla uses)"
        )
    });
    cap
}

/// The number of threads kernels are split across: at least 1, at most
/// `max_threads()`.
pub fn num_threads() -> usize {
    let set = THREADS.load(Ordering::Relaxed);
    if set > 0 {
        return set;
    }
    let n = match std::env::var(THREADS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
    {
        Some(n) => capped(n, &format!("{THREADS_ENV}={n}")),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    THREADS.store(n, Ordering::Relaxed);
    n
}

/// Split kernels across `n` threads from now on: `n = 0` means 1, and `n`
/// above `max_threads()` means `max_threads()` (with a one-time warning on
/// stderr).
pub fn set_num_threads(n: usize) {
    let n = capped(n.max(1), &format!("set_num_threads({n})"));
    THREADS.store(n, Ordering::Relaxed);
}

/// The pool of `n` threads (built on first use, rebuilt when `n` changes).
pub(crate) fn pool(n: usize) -> Option<Arc<rayon::ThreadPool>> {
    let mut slot = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((m, p)) = slot.as_ref() {
        if *m == n {
            return Some(p.clone());
        }
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("oxla-{i}"))
            .build()
            .ok()?,
    );
    *slot = Some((n, p.clone()));
    Some(p)
}

/// How a kernel can be split along axis 0.
#[derive(Clone, Debug)]
pub struct Split {
    /// Index of axis 0's size symbol in the kernel's sizes.
    sym: usize,
    /// Per argument: its stride along axis 0, in elements.
    strides: Vec<Size>,
    /// Element size of each argument.
    elem: Vec<usize>,
    /// A reduction over every axis: blocks with partial results.
    partials: Option<Reduce>,
    /// The output dtype of a reduction over every axis.
    dtype: DType,
    /// The domain's element count: a factor times size arguments.
    total: (u64, Vec<usize>),
}

/// The split plan of each kernel (`None` where it runs whole).
pub fn split_plans(kernels: &[Kernel]) -> Vec<Option<Split>> {
    kernels.iter().map(Split::of).collect()
}

impl Split {
    /// The plan for `k`, if its axis 0 can be split (see the module docs).
    pub fn of(k: &Kernel) -> Option<Split> {
        if k.scan.is_some() || k.region().is_some() || k.domain.is_empty() {
            return None;
        }
        let d0 = &k.domain[0];
        if d0.factor != 1 || d0.syms.len() != 1 {
            return None;
        }
        let name = &d0.syms[0];
        let sym = k.sizes.iter().position(|s| s == name)?;
        let mentions = |s: &Size| s.syms.iter().any(|x| x == name);
        if k.domain[1..].iter().any(mentions) {
            return None;
        }
        let mut strides: Vec<Option<Size>> = vec![None; k.args.len()];
        for inst in &k.insts {
            match &inst.kind {
                InstKind::Load {
                    arg,
                    strides: st,
                    offset,
                } => {
                    if st.iter().chain(offset).any(mentions) {
                        return None;
                    }
                    match &strides[*arg] {
                        Some(s) if *s != st[0] => return None,
                        _ => strides[*arg] = Some(st[0].clone()),
                    }
                }
                InstKind::LoadIndexed { .. } | InstKind::Carry => return None,
                InstKind::Size(s) if mentions(s) => return None,
                InstKind::Index(0) => return None,
                _ => {}
            }
        }
        let outer = k.outer_dims();
        let partials = if outer == 0 {
            let dtype = k.args[k.stores.first()?.arg].dtype;
            if !matches!(dtype, DType::F32 | DType::F64)
                || k.stores.iter().any(|s| k.args[s.arg].dtype != dtype)
            {
                return None;
            }
            Some(k.reduce)
        } else {
            None
        };
        // The output advances by the row-major stride of axis 0 over the
        // outer axes (nothing for a reduction over every axis).
        let out_stride = if outer == 0 {
            Size::zero()
        } else {
            k.domain[1..outer].iter().fold(Size::one(), |a, b| a.mul(b))
        };
        let mut result = Vec::with_capacity(k.args.len());
        for (i, a) in k.args.iter().enumerate() {
            result.push(if a.output {
                out_stride.clone()
            } else {
                strides[i].clone().unwrap_or_else(Size::zero)
            });
        }
        let dtype = k.stores.first().map_or(DType::F32, |s| k.args[s.arg].dtype);
        let mut total = (1u64, Vec::new());
        for d in &k.domain {
            total.0 = total.0.saturating_mul(d.factor);
            for s in &d.syms {
                total.1.push(k.sizes.iter().position(|n| n == s)?);
            }
        }
        Some(Split {
            total,
            sym,
            strides: result,
            elem: k.args.iter().map(|a| a.dtype.size_bytes()).collect(),
            partials,
            dtype,
        })
    }

    /// Run `f` (the compiled `kernel`) split across the pool, if the kernel
    /// is large enough; `false` leaves it to one call.
    ///
    /// # Safety
    /// `args` and `sizes` satisfy the kernel's calling convention (as for
    /// `Launcher::launch`), and `f` is `kernel` compiled.
    #[inline]
    pub unsafe fn run(
        &self,
        kernel: &Kernel,
        f: KernelFn,
        args: &[*mut u8],
        sizes: &[i64],
    ) -> bool {
        let total = self
            .total
            .1
            .iter()
            .fold(self.total.0, |n, s| n.saturating_mul(sizes[*s] as u64));
        if total < MIN_PARALLEL_ELEMS {
            return false;
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { self.run_parts_of(kernel, f, args, sizes, total) }
    }

    /// `run` for a kernel of `total` elements, large enough to split.
    ///
    /// # Safety
    /// As for `run`.
    #[inline(never)]
    unsafe fn run_parts_of(
        &self,
        kernel: &Kernel,
        f: KernelFn,
        args: &[*mut u8],
        sizes: &[i64],
        total: u64,
    ) -> bool {
        let rows = sizes[self.sym] as u64;
        let row_elems = (total / rows.max(1)).max(1);
        let threads = num_threads();
        let strides: Vec<i64> = self
            .strides
            .iter()
            .map(|s| kernel.eval_size(s, sizes) as i64)
            .collect();
        match self.partials {
            None => {
                if threads == 1 {
                    return false;
                }
                // Any cut gives the same results: one part per thread.
                let per = BLOCK_ELEMS.div_ceil(row_elems).max(1);
                let parts: Vec<(u64, u64)> = (0..rows)
                    .step_by(per as usize)
                    .map(|lo| (lo, (lo + per).min(rows)))
                    .collect();
                self.run_parts(f, args, sizes, &strides, &parts, None, threads);
            }
            Some(reduce) => {
                let per = BLOCK_ELEMS.div_ceil(row_elems).max(1);
                let parts: Vec<(u64, u64)> = (0..rows)
                    .step_by(per as usize)
                    .map(|lo| (lo, (lo + per).min(rows)))
                    .collect();
                let outputs: Vec<usize> = (0..kernel.args.len())
                    .filter(|i| kernel.args[*i].output)
                    .collect();
                // One partial per block and output, in f64 slots holding
                // values of the output type.
                let mut partials = vec![0f64; parts.len() * outputs.len()];
                self.run_parts(
                    f,
                    args,
                    sizes,
                    &strides,
                    &parts,
                    Some((&outputs, partials.as_mut_ptr())),
                    threads,
                );
                for (o, &arg) in outputs.iter().enumerate() {
                    let slots =
                        (0..parts.len()).map(|b| partials.as_ptr().add(b * outputs.len() + o));
                    // Each slot holds what the kernel stored there: a value
                    // of the output type at the slot's address.
                    match self.dtype {
                        DType::F32 => {
                            let xs: Vec<f32> = slots.map(|p| *(p as *const f32)).collect();
                            *(args[arg] as *mut f32) = pairwise(&xs, reduce);
                        }
                        _ => {
                            let xs: Vec<f64> = slots.map(|p| *p).collect();
                            *(args[arg] as *mut f64) = pairwise(&xs, reduce);
                        }
                    }
                }
            }
        }
        true
    }

    /// Call `f` on each `(lo, hi)` row range, on the pool (or in order on
    /// this thread when there is one thread). With `partials`, the outputs
    /// of part `b` go to slots `b · outputs.len() + o` instead.
    #[allow(clippy::too_many_arguments)]
    unsafe fn run_parts(
        &self,
        f: KernelFn,
        args: &[*mut u8],
        sizes: &[i64],
        strides: &[i64],
        parts: &[(u64, u64)],
        partials: Option<(&[usize], *mut f64)>,
        threads: usize,
    ) {
        let shared = Shared {
            args,
            partials: partials.map(|(o, p)| (o, p as usize)),
        };
        let one = |b: usize| {
            let (lo, hi) = parts[b];
            let mut ptrs: Vec<*mut u8> = shared
                .args()
                .iter()
                .enumerate()
                .map(|(i, p)| p.offset((lo as i64 * strides[i]) as isize * self.elem[i] as isize))
                .collect();
            if let Some((outputs, base)) = shared.partials() {
                for (o, &arg) in outputs.iter().enumerate() {
                    ptrs[arg] = (base as *mut f64).add(b * outputs.len() + o) as *mut u8;
                }
            }
            let mut sz = sizes.to_vec();
            sz[self.sym] = (hi - lo) as i64;
            // SAFETY: rows `lo..hi` of a kernel whose axis-0 symbol means
            // only that extent (`Split::of`): every pointer moved by `lo`
            // rows addresses the same elements the whole call would for
            // those rows, so each access stays in the caller's bounds; parts
            // write disjoint rows of the outputs, or their own partial slot
            // (8 bytes, aligned, holding an f32 or f64).
            f(ptrs.as_ptr(), sz.as_ptr());
        };
        match (threads > 1 && parts.len() > 1)
            .then(|| pool(threads))
            .flatten()
        {
            Some(p) => p.install(|| {
                use rayon::prelude::*;
                (0..parts.len()).into_par_iter().for_each(one);
            }),
            None => (0..parts.len()).for_each(one),
        }
    }
}

/// What the parts share across threads: the caller's pointers.
struct Shared<'a> {
    args: &'a [*mut u8],
    /// Output arguments and the address of the partial slots.
    partials: Option<(&'a [usize], usize)>,
}

impl<'a> Shared<'a> {
    // Methods, so that closures capture the whole `Shared` (which is `Sync`)
    // rather than its fields.
    fn args(&self) -> &'a [*mut u8] {
        self.args
    }

    fn partials(&self) -> Option<(&'a [usize], usize)> {
        self.partials
    }
}

// SAFETY: the pointers are only used to form each part's disjoint accesses
// (see `run_parts`); the caller keeps the buffers alive until every part has
// returned (`install` and the sequential loop both wait for them).
unsafe impl Sync for Shared<'_> {}

/// The partials combined pairwise in order.
fn pairwise<T: Copy + Into<f64> + FromF64>(xs: &[T], reduce: Reduce) -> T {
    match xs.len() {
        0 => T::from_f64(reduce.identity()),
        1 => xs[0],
        n => {
            let (a, b) = xs.split_at(n / 2);
            let (a, b) = (pairwise(a, reduce), pairwise(b, reduce));
            T::from_f64(reduce.combine(a.into(), b.into()))
        }
    }
}

/// Rounding from f64 (a combination of two values of the type is exact in
/// f64 and then rounded once, as the type's own operation would).
trait FromF64 {
    fn from_f64(v: f64) -> Self;
}

impl FromF64 for f32 {
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
}

impl FromF64 for f64 {
    fn from_f64(v: f64) -> f64 {
        v
    }
}
