//! The lean call: a program that is one kernel launch on the caller's
//! arguments (the common case: an elementwise chain and its reduction fused
//! into one kernel) runs without the general executor's bookkeeping. What
//! the general path works out at each call (which buffer each kernel
//! argument is, which symbols the launch takes, each result's element
//! count and dimensions) is worked out once, in `DirectCall::of`; a call
//! binds the symbols from the arguments' dimensions on the stack, checks
//! every argument's type and length against them, puts scalar results in
//! stack slots and launches. Anything else (no dimensions, a length that
//! does not match, too many symbols) falls back to the general path, which
//! reports errors with its messages.
//!
//! Arguments of rank 0 and 1 (scalars and slices, the arguments of most
//! generated functions) have a leaner form still, `FlatArg`: the macros
//! know each parameter's rank when they expand, and the plan knows which
//! argument's length binds each symbol, so such a call is a few compares.

use super::{ArgDims, DimRef, Launcher, Program, RawArg, Slot, MAX_RANK};
use crate::buffer::Buffer;
use crate::dtype::DType;
use std::mem::MaybeUninit;

/// Most symbols, kernel arguments and results a direct call handles.
const MAX_SYMS: usize = 16;
const MAX_ARGS: usize = 16;
pub const MAX_RESULTS: usize = 4;

/// The value of a symbol no argument has bound yet.
const UNSET: u64 = u64::MAX;

#[derive(Clone, Copy, Debug)]
enum Target {
    /// Parameter `p` of the function.
    Param(usize),
    /// Result `r`.
    Result(usize),
}

/// The plan of a call on `FlatArg`s (see the module docs): every check and
/// every pointer and size the launch takes is a table lookup, with no
/// branch per argument. Everything is inline and small (the first few
/// entries of each table are all a call reads), so a call touches a
/// couple of cache lines of it rather than one per table.
#[derive(Clone, Debug)]
#[repr(C)]
struct FlatPlan {
    /// Arguments, kernel pointers, launch sizes, domain factors, symbols.
    n_args: u8,
    n_ptrs: u8,
    n_sizes: u8,
    n_domain: u8,
    n_syms: u8,
    /// Whether every result is a scalar (nothing to allocate).
    scalar_results: bool,
    /// Per argument: what it must be (see `FlatParam`).
    params: [FlatParam; MAX_ARGS],
    /// Per kernel argument: its pointer, as `i < N`: argument `i`'s, else
    /// result slot `i - N`'s.
    ptr_from: [u8; MAX_ARGS],
    /// Per size the launch takes: the argument whose length it is.
    size_args: [u8; MAX_SYMS],
    /// The kernel's domain has `domain_factor` times the sizes at
    /// `domain` (indices of the launch's) elements.
    domain_factor: u64,
    domain: [u8; MAX_SYMS],
    /// Per symbol: the argument whose length it is (for array results,
    /// whose lengths and dimensions are worked out from the symbols).
    sym_args: [u8; MAX_SYMS],
}

/// One argument of a flat plan: its dtype and rank (`kind`), and the
/// length it must have, `lens[from] · keep + add` (`keep` 0 or 1): the
/// first argument to bind a symbol is compared with itself, a later one
/// with that first one, and a scalar or a fixed-length vector with its
/// constant.
#[derive(Clone, Copy, Debug, Default)]
struct FlatParam {
    kind: u16,
    from: u8,
    keep: u8,
    add: u32,
}

/// An argument's dtype and rank in one number.
#[inline(always)]
fn kind(dtype: DType, rank: u8) -> u16 {
    dtype as u16 | (rank as u16) << 8
}

/// An argument of rank 0 (`len` 1) or 1, as the macros pass scalars and
/// slices: `ptr` must be valid for `len` reads of `dtype`.
#[derive(Clone, Copy, Debug)]
pub struct FlatArg {
    pub dtype: DType,
    pub rank: u8,
    pub ptr: *const u8,
    pub len: usize,
}

/// One result of the plan.
#[derive(Clone, Debug)]
struct ResultPlan {
    dtype: DType,
    /// Element count: `factor` times the symbols at `syms`.
    factor: u64,
    syms: Vec<usize>,
    /// Rank 0: returned in a stack slot, not a buffer.
    scalar: bool,
}

/// A program's one launch, planned once (see the module docs). The fields a
/// lean call reads come first (`repr(C)`), so that they share cache lines.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct DirectCall {
    kernel: usize,
    /// Bit `r`: result `r` is a scalar (`DirectDims::is_scalar`).
    scalars: u32,
    /// When every parameter has rank 0 or 1 and those of rank 1 bind every
    /// symbol: the plan of a call on `FlatArg`s.
    flat: Option<FlatPlan>,
    targets: Vec<Target>,
    /// Per parameter: its dtype.
    param_dtypes: Vec<DType>,
    results: Vec<ResultPlan>,
}

/// Where a direct call leaves scalar results: one 8-byte slot each, holding
/// a value of the result's type at the slot's address.
pub type ScalarSlots = [u64; MAX_RESULTS];

/// The dimensions of a direct call's results, worked out when asked for
/// from the plan and the sizes the call bound (most callers only read a
/// scalar result and never ask).
pub struct DirectDims<'a> {
    out_dims: &'a [Vec<DimRef>],
    bound: &'a [u64; MAX_SYMS],
    /// Bit `r`: result `r` is a scalar.
    scalars: u32,
}

impl DirectDims<'_> {
    /// Whether result `r` is a scalar (its value is in its slot).
    #[inline]
    pub fn is_scalar(&self, r: usize) -> bool {
        self.scalars >> r & 1 == 1
    }

    /// Result `r`'s dimensions.
    pub fn get(&self, r: usize) -> ArgDims {
        let want = &self.out_dims[r];
        let mut d = [0usize; MAX_RANK];
        for (k, dim) in want.iter().enumerate() {
            d[k] = match *dim {
                DimRef::Const(c) => c as usize,
                DimRef::Sym(s) => self.bound[s] as usize,
            };
        }
        // `of` admits only results of at most `MAX_RANK` axes.
        ArgDims::new(&d[..want.len()]).expect("at most MAX_RANK axes")
    }
}

impl DirectCall {
    /// The kernel the call launches.
    pub fn kernel(&self) -> usize {
        self.kernel
    }

    /// The plan, if `p` is one kernel launch reading only parameters and
    /// writing only results (each its own buffer).
    pub fn of(p: &Program) -> Option<DirectCall> {
        if p.launches.len() != 1
            || !p.host_steps.is_empty()
            || p.windowed
            || !p.derived.is_empty()
            || p.symbols.len() > MAX_SYMS
            || p.outputs.len() > MAX_RESULTS
            || p.out_dims.iter().any(|d| d.len() > MAX_RANK)
            || p.launch_sizes[0].len() > MAX_SYMS
        {
            return None;
        }
        let launch = &p.launches[0];
        if launch.args.len() > MAX_ARGS {
            return None;
        }
        // Results are distinct owned buffers.
        for (i, b) in p.outputs.iter().enumerate() {
            if !matches!(p.slots[*b], Slot::Owned(_)) || p.outputs[..i].contains(b) {
                return None;
            }
        }
        let mut targets = Vec::with_capacity(launch.args.len());
        for b in &launch.args {
            targets.push(match p.slots[*b] {
                Slot::Param(q) => Target::Param(q),
                Slot::Owned(_) => Target::Result(p.outputs.iter().position(|o| o == b)?),
            });
        }
        // Every result is written by the launch.
        let written = |r: usize| {
            targets
                .iter()
                .any(|t| matches!(t, Target::Result(x) if *x == r))
        };
        if !(0..p.outputs.len()).all(written) {
            return None;
        }
        let f = &p.function;
        let results: Vec<ResultPlan> = p
            .outputs
            .iter()
            .enumerate()
            .map(|(r, b)| {
                let (factor, syms) = p.numel[*b].clone();
                ResultPlan {
                    dtype: p.buffers[*b].dtype,
                    factor,
                    syms,
                    scalar: p.out_dims[r].is_empty(),
                }
            })
            .collect();
        let flat = flat_plan(p, &targets, results.iter().all(|r| r.scalar));
        let scalars = results
            .iter()
            .enumerate()
            .fold(0, |m, (r, plan)| m | (plan.scalar as u32) << r);
        Some(DirectCall {
            kernel: launch.kernel,
            scalars,
            targets,
            param_dtypes: f.params.iter().map(|v| f.dtype(*v)).collect(),
            results,
            flat,
        })
    }

    /// Run the launch on the `n_args` arguments `arg(i)` and hand `take`
    /// the results (array results in fresh buffers, scalar ones as empty
    /// buffers with their values in the slots) and their dimensions; `None`
    /// when the arguments need the general path (which then gives the same
    /// results, or the error).
    ///
    /// # Safety
    /// As for `Program::execute`: every `RawArg` is valid for `len` reads of
    /// its dtype for the call, and `launcher` runs `p`'s kernels.
    #[inline]
    pub unsafe fn call<'a, R, L: Launcher + ?Sized>(
        &self,
        p: &Program,
        launcher: &L,
        n_args: usize,
        arg: impl Fn(usize) -> &'a RawArg,
        take: impl FnOnce(&mut [Buffer], DirectDims<'_>, &ScalarSlots) -> R,
    ) -> Option<R> {
        if n_args != self.param_dtypes.len() {
            return None;
        }
        // Bind every symbol from the dimensions; each argument's type and
        // element count must match.
        let mut bound = [UNSET; MAX_SYMS];
        for (q, (want, dtype)) in p.param_dims.iter().zip(&self.param_dtypes).enumerate() {
            let a = arg(q);
            let got = a.dims.get()?;
            if a.dtype != *dtype || got.len() != want.len() {
                return None;
            }
            let mut numel = 1usize;
            for (w, g) in want.iter().zip(got) {
                let g64 = *g as u64;
                match *w {
                    DimRef::Const(c) if c != g64 => return None,
                    DimRef::Const(_) => {}
                    DimRef::Sym(k) if bound[k] == UNSET => bound[k] = g64,
                    DimRef::Sym(k) if bound[k] != g64 => return None,
                    DimRef::Sym(_) => {}
                }
                numel = numel.checked_mul(*g)?;
            }
            if numel != a.len {
                return None;
            }
        }
        if bound[..p.symbols.len()].contains(&UNSET) || p.has_empty_reduction(&bound) {
            return None;
        }
        // SAFETY: every parameter's pointer is valid for its element count
        // (the caller's contract), which equals its shape's under `bound`
        // (checked above); every symbol is bound.
        Some(self.launch_bound(p, launcher, &bound, |q| arg(q).ptr, take))
    }

    /// `call` for `N` arguments of rank 0 and 1 (see `FlatArg`): `None`
    /// when the program takes other arguments, or the arguments need the
    /// general path.
    ///
    /// # Safety
    /// As for `call`: every `FlatArg` is valid for `len` reads of its dtype
    /// for the call, and `launcher` runs `p`'s kernels.
    #[inline]
    pub unsafe fn call_flat<R, L: Launcher + ?Sized, const N: usize>(
        &self,
        p: &Program,
        launcher: &L,
        args: &[FlatArg; N],
        take: impl FnOnce(&mut [Buffer], DirectDims<'_>, &ScalarSlots) -> R,
    ) -> Option<R> {
        let plan = self.flat.as_ref()?;
        if N == 0 || plan.n_args as usize != N {
            return None;
        }
        let lens: [u64; N] = std::array::from_fn(|i| args[i].len as u64);
        // A max over an empty argument is the general path's error.
        let mut ok = p.nonempty.is_empty() || !lens.contains(&0);
        for (a, w) in args.iter().zip(&plan.params) {
            ok &= kind(a.dtype, a.rank) == w.kind;
            ok &= a.len as u64 == lens[w.from as usize] * w.keep as u64 + w.add as u64;
        }
        if !ok {
            return None;
        }
        if !plan.scalar_results {
            // SAFETY: the arguments fit the plan (checked above); the
            // caller's contract, passed on.
            return Some(self.flat_arrays(p, plan, launcher, args, &lens, take));
        }
        let (n_ptrs, n_sizes) = (plan.n_ptrs as usize, plan.n_sizes as usize);
        let mut slots: ScalarSlots = [0; MAX_RESULTS];
        let slot0 = slots.as_mut_ptr() as *mut u8;
        // Only the first `n_ptrs` and `n_sizes` entries are written and
        // read: nothing is cleared per call.
        let mut ptrs = [MaybeUninit::<*mut u8>::uninit(); MAX_ARGS];
        for (ptr, &i) in ptrs.iter_mut().zip(&plan.ptr_from[..n_ptrs]) {
            // An argument's pointer or a slot's, chosen by a select
            // (`flat_plan` made every index past the arguments a slot's).
            let i = i as usize;
            let arg = args[i.min(N - 1)].ptr as *mut u8;
            let slot = slot0.wrapping_add(8 * i.saturating_sub(N));
            ptr.write(if i < N { arg } else { slot });
        }
        let mut sizes = [MaybeUninit::<i64>::uninit(); MAX_SYMS];
        for (size, &i) in sizes.iter_mut().zip(&plan.size_args[..n_sizes]) {
            size.write(lens[i as usize] as i64);
        }
        // SAFETY: the first `n_ptrs` (at most `MAX_ARGS`) and `n_sizes` (at
        // most `MAX_SYMS`) entries were written above.
        let (ptrs, sizes) = unsafe {
            (
                std::slice::from_raw_parts(ptrs.as_ptr() as *const *mut u8, n_ptrs),
                std::slice::from_raw_parts(sizes.as_ptr() as *const i64, n_sizes),
            )
        };
        // SAFETY: each argument's pointer is valid for its length (the
        // caller's contract), which is its shape's under the sizes (checked
        // above: one element for a scalar, the constant for a fixed-length
        // vector, the symbol's size for the others); every result is a
        // scalar, written to an 8-byte slot (one element of at most 8
        // bytes, aligned for it); fusion only emits loads within a
        // buffer's shape and stores within the output's; results are never
        // inputs (`of`).
        let elems = plan.domain[..plan.n_domain as usize]
            .iter()
            .fold(plan.domain_factor, |e, &i| {
                e.saturating_mul(sizes[i as usize] as u64)
            });
        launcher.launch_elems(self.kernel, ptrs, sizes, elems);
        let dims = DirectDims {
            out_dims: &p.out_dims,
            bound: &[0; MAX_SYMS],
            scalars: self.scalars,
        };
        Some(take(&mut [], dims, &slots))
    }

    /// `call_flat` with array results, once the arguments fit the plan:
    /// allocate them under the symbols' sizes, as `call` does (out of line:
    /// the allocation outweighs the binding, and the scalar case stays
    /// small).
    ///
    /// # Safety
    /// As for `call_flat`, and every argument's length fits the plan.
    #[inline(never)]
    unsafe fn flat_arrays<R, L: Launcher + ?Sized, const N: usize>(
        &self,
        p: &Program,
        plan: &FlatPlan,
        launcher: &L,
        args: &[FlatArg; N],
        lens: &[u64; N],
        take: impl FnOnce(&mut [Buffer], DirectDims<'_>, &ScalarSlots) -> R,
    ) -> R {
        let mut bound = [UNSET; MAX_SYMS];
        for (b, &q) in bound.iter_mut().zip(&plan.sym_args[..plan.n_syms as usize]) {
            *b = lens[q as usize];
        }
        // SAFETY: every argument's pointer is valid for its length (the
        // caller's contract), which is its shape's under `bound` (the
        // caller checked it against the plan); `flat_plan` bound every
        // symbol.
        unsafe { self.launch_bound(p, launcher, &bound, |q| args[q].ptr, take) }
    }

    /// Allocate the results under `bound` and launch.
    ///
    /// # Safety
    /// Every symbol of `p` is bound in `bound`, and `param(q)` is valid for
    /// as many elements of parameter `q`'s dtype as its shape has under
    /// `bound`; `launcher` runs `p`'s kernels.
    #[inline]
    unsafe fn launch_bound<R, L: Launcher + ?Sized>(
        &self,
        p: &Program,
        launcher: &L,
        bound: &[u64; MAX_SYMS],
        param: impl Fn(usize) -> *const u8,
        take: impl FnOnce(&mut [Buffer], DirectDims<'_>, &ScalarSlots) -> R,
    ) -> R {
        let mut slots: ScalarSlots = [0; MAX_RESULTS];
        let mut results: [Buffer; MAX_RESULTS] = [const { Buffer::F32(Vec::new()) }; MAX_RESULTS];
        for (buf, r) in results.iter_mut().zip(&self.results) {
            if !r.scalar {
                let len = r.syms.iter().fold(r.factor, |n, s| n * bound[*s]) as usize;
                *buf = Buffer::zeros(r.dtype, len);
            }
        }
        let mut ptrs = [std::ptr::null_mut::<u8>(); MAX_ARGS];
        for (ptr, t) in ptrs.iter_mut().zip(&self.targets) {
            *ptr = match *t {
                Target::Param(q) => param(q) as *mut u8,
                Target::Result(r) if self.results[r].scalar => slots.as_mut_ptr().add(r) as *mut u8,
                Target::Result(r) => results[r].as_mut_ptr(),
            };
        }
        let mut sizes = [0i64; MAX_SYMS];
        let launch_sizes = &p.launch_sizes[0];
        for (s, k) in sizes.iter_mut().zip(launch_sizes) {
            *s = bound[*k] as i64;
        }
        // SAFETY: each parameter pointer is valid for its element count
        // under this binding (the caller's contract); each result pointer
        // is a fresh buffer of the result's element count, or an 8-byte
        // slot for a scalar (one element of at most 8 bytes, aligned for
        // it); fusion only emits loads within a buffer's shape and stores
        // within the output's (`check_bounds` in tests; no windowed loads
        // here); results are distinct buffers and never inputs (`of`).
        launcher.launch(
            self.kernel,
            &ptrs[..self.targets.len()],
            &sizes[..launch_sizes.len()],
        );
        let dims = DirectDims {
            out_dims: &p.out_dims,
            bound,
            scalars: self.scalars,
        };
        let n = self.results.len();
        take(&mut results[..n], dims, &slots)
    }
}

/// The flat plan of `p` (see `FlatPlan`), if every parameter has rank 0 or
/// 1 and the vectors bind every symbol; `targets` are the launch's.
fn flat_plan(p: &Program, targets: &[Target], scalar_results: bool) -> Option<FlatPlan> {
    let n = p.param_dims.len();
    let kernel = &p.kernels[p.launches[0].kernel];
    let domain_syms: usize = kernel.domain.iter().map(|d| d.syms.len()).sum();
    // `of` admitted at most `MAX_ARGS` kernel arguments and `MAX_SYMS`
    // symbols and launch sizes.
    if n > MAX_ARGS || domain_syms > MAX_SYMS {
        return None;
    }
    let f = &p.function;
    // The argument that binds each symbol.
    let mut binder: Vec<Option<u8>> = vec![None; p.symbols.len()];
    let mut params = [FlatParam::default(); MAX_ARGS];
    for (q, (dims, param)) in p.param_dims.iter().zip(&mut params).enumerate() {
        let dtype = f.dtype(f.params[q]);
        *param = match dims.as_slice() {
            [] => FlatParam {
                kind: kind(dtype, 0),
                from: 0,
                keep: 0,
                add: 1,
            },
            [DimRef::Const(c)] => FlatParam {
                kind: kind(dtype, 1),
                from: 0,
                keep: 0,
                add: u32::try_from(*c).ok()?,
            },
            [DimRef::Sym(k)] => FlatParam {
                kind: kind(dtype, 1),
                from: *binder[*k].get_or_insert(q as u8),
                keep: 1,
                add: 0,
            },
            _ => return None,
        };
    }
    let mut size_args = [0u8; MAX_SYMS];
    for (a, k) in size_args.iter_mut().zip(&p.launch_sizes[0]) {
        *a = binder[*k]?;
    }
    let mut sym_args = [0u8; MAX_SYMS];
    for (a, b) in sym_args.iter_mut().zip(&binder) {
        *a = (*b)?;
    }
    let mut ptr_from = [0u8; MAX_ARGS];
    for (from, t) in ptr_from.iter_mut().zip(targets) {
        *from = match *t {
            Target::Param(q) => q as u8,
            Target::Result(r) => (n + r) as u8,
        };
    }
    let mut domain = [0u8; MAX_SYMS];
    let mut domain_factor = 1u64;
    let mut slots = domain.iter_mut();
    for d in &kernel.domain {
        domain_factor = domain_factor.checked_mul(d.factor)?;
        for s in &d.syms {
            *slots.next()? = kernel.sizes.iter().position(|n| n == s)? as u8;
        }
    }
    Some(FlatPlan {
        n_args: n as u8,
        n_ptrs: targets.len() as u8,
        n_sizes: p.launch_sizes[0].len() as u8,
        n_domain: domain_syms as u8,
        n_syms: p.symbols.len() as u8,
        scalar_results,
        params,
        ptr_from,
        size_args,
        domain_factor,
        domain,
        sym_args,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::InterpLauncher;
    use crate::kernel::fusion::fuse;

    fn program(src: &str) -> Program {
        fuse(&crate::text::parse(src).unwrap()).unwrap()
    }

    fn flat<T>(xs: &[T], dtype: DType, rank: u8) -> FlatArg {
        FlatArg {
            dtype,
            rank,
            ptr: xs.as_ptr() as *const u8,
            len: xs.len(),
        }
    }

    /// The flat call of `p` on `args`, its first result as an f32 (`None`
    /// when it declines).
    fn call<const N: usize>(p: &Program, args: &[FlatArg; N]) -> Option<f32> {
        let direct = DirectCall::of(p).expect("one launch");
        // SAFETY: every `FlatArg` above borrows a live slice of its dtype
        // and length; the launcher interprets `p`'s kernels.
        unsafe {
            direct.call_flat(p, &InterpLauncher(&p.kernels), args, |_, dims, slots| {
                assert!(dims.is_scalar(0));
                f32::from_bits(slots[0] as u32)
            })
        }
    }

    const WEIGHTED: &str = "fn f(x %0: f32[n], a %1: f32[], y %2: f32[n]) {
        %3: f32[n] = broadcast[] %1
        %4: f32[n] = mul %0 %3
        %5: f32[n] = mul %4 %2
        %6: f32[] = reduce_sum[0] %5
        return %6
      }";

    const FIXED: &str = "fn f(c %0: f32[4], d %1: f32[4]) {
        %2: f32[4] = mul %0 %1
        %3: f32[] = reduce_sum[0] %2
        return %3
      }";

    /// The interpreter's result of `p` on `bufs`.
    fn general(p: &Program, bufs: &[Buffer]) -> f64 {
        p.run(&InterpLauncher(&p.kernels), bufs).unwrap()[0].to_f64()[0]
    }

    #[test]
    fn flat_calls_match_the_general_executor() {
        let p = program(WEIGHTED);
        let f = DType::F32;
        for n in [0usize, 1, 5, 70] {
            let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 3.0).collect();
            let y: Vec<f32> = (0..n).map(|i| 1.0 / (1.0 + i as f32)).collect();
            let a = [0.25f32];
            let got = call(&p, &[flat(&x, f, 1), flat(&a, f, 0), flat(&y, f, 1)])
                .expect("the flat plan applies");
            let bufs = [Buffer::F32(x), Buffer::F32(a.to_vec()), Buffer::F32(y)];
            assert_eq!(got as f64, general(&p, &bufs), "n = {n}");
        }
        let p = program(FIXED);
        let (c, d) = ([1.0f32, 2.0, 3.0, 4.5], [0.5f32, -1.0, 2.0, 4.0]);
        let got = call(&p, &[flat(&c, f, 1), flat(&d, f, 1)]).expect("the flat plan applies");
        let bufs = [Buffer::F32(c.to_vec()), Buffer::F32(d.to_vec())];
        assert_eq!(got as f64, general(&p, &bufs));
    }

    #[test]
    fn flat_calls_decline_what_does_not_fit() {
        let p = program(WEIGHTED);
        let (x3, x4, a) = ([1.0f32; 3], [1.0f32; 4], [2.0f32]);
        let f = DType::F32;
        let ok = [flat(&x3, f, 1), flat(&a, f, 0), flat(&x3, f, 1)];
        assert!(call(&p, &ok).is_some());
        // `y` disagrees with `x` on n.
        assert!(call(&p, &[ok[0], ok[1], flat(&x4, f, 1)]).is_none());
        // The scalar is two elements, or passed as a vector.
        assert!(call(&p, &[ok[0], flat(&x3[..2], f, 0), ok[2]]).is_none());
        assert!(call(&p, &[ok[0], flat(&a, f, 1), ok[2]]).is_none());
        // The wrong element type, and too few arguments.
        assert!(call(&p, &[flat(&x3, DType::I32, 1), ok[1], ok[2]]).is_none());
        assert!(call(&p, &[ok[0], ok[1]]).is_none());
        // A fixed length that does not match.
        let p = program(FIXED);
        assert!(call(&p, &[flat(&x4, f, 1), flat(&x4, f, 1)]).is_some());
        assert!(call(&p, &[flat(&x4, f, 1), flat(&x3, f, 1)]).is_none());
    }

    #[test]
    fn flat_calls_allocate_array_results() {
        let p = program(
            "fn f(x %0: f32[n], a %1: f32[]) {
               %2: f32[n] = broadcast[] %1
               %3: f32[n] = mul %0 %2
               return %3
             }",
        );
        let direct = DirectCall::of(&p).expect("one launch");
        let (x, a) = ([1.0f32, -2.0, 3.5], [0.5f32]);
        let f = DType::F32;
        // SAFETY: both `FlatArg`s borrow live slices of their dtype and
        // length; the launcher interprets `p`'s kernels.
        let (array, dims) = unsafe {
            direct.call_flat(
                &p,
                &InterpLauncher(&p.kernels),
                &[flat(&x, f, 1), flat(&a, f, 0)],
                |bufs, dims, _| {
                    assert!(!dims.is_scalar(0));
                    (bufs[0].to_f64(), dims.get(0))
                },
            )
        }
        .expect("the flat plan applies");
        let want = p
            .run(
                &InterpLauncher(&p.kernels),
                &[Buffer::F32(x.to_vec()), Buffer::F32(a.to_vec())],
            )
            .unwrap();
        assert_eq!(array, want[0].to_f64());
        assert_eq!(dims.get(), Some(&[3usize][..]));
    }

    #[test]
    fn no_flat_plan_for_matrices() {
        let matrix = program(
            "fn f(x %0: f32[m, n]) {
               %1: f32[] = reduce_sum[0,1] %0
               return %1
             }",
        );
        assert!(DirectCall::of(&matrix).unwrap().flat.is_none());
    }
}
