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

use super::{ArgDims, DimRef, Launcher, Program, RawArg, Slot, MAX_RANK};
use crate::buffer::Buffer;
use crate::dtype::DType;

/// Most symbols, kernel arguments and results a direct call handles.
const MAX_SYMS: usize = 16;
const MAX_ARGS: usize = 16;
pub const MAX_RESULTS: usize = 4;

#[derive(Clone, Copy, Debug)]
enum Target {
    /// Parameter `p` of the function.
    Param(usize),
    /// Result `r`.
    Result(usize),
}

/// A program's one launch, planned once (see the module docs).
#[derive(Clone, Debug)]
pub struct DirectCall {
    kernel: usize,
    targets: Vec<Target>,
    /// Per parameter: its dtype.
    param_dtypes: Vec<DType>,
    /// Per result: dtype, element count (factor times symbols) and whether
    /// it is a scalar (returned in a stack slot).
    results: Vec<(DType, u64, Vec<usize>, bool)>,
}

/// Where a direct call leaves scalar results: one 8-byte slot each, holding
/// a value of the result's type at the slot's address.
pub type ScalarSlots = [u64; MAX_RESULTS];

impl DirectCall {
    /// The plan, if `p` is one kernel launch reading only parameters and
    /// writing only results (each its own buffer).
    pub fn of(p: &Program) -> Option<DirectCall> {
        if p.launches.len() != 1
            || !p.loops.is_empty()
            || p.windowed
            || !p.derived.is_empty()
            || p.symbols.len() > MAX_SYMS
            || p.outputs.len() > MAX_RESULTS
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
        let results = p
            .outputs
            .iter()
            .enumerate()
            .map(|(r, b)| {
                let (factor, syms) = p.numel[*b].clone();
                (p.buffers[*b].dtype, factor, syms, p.out_dims[r].is_empty())
            })
            .collect();
        Some(DirectCall {
            kernel: launch.kernel,
            targets,
            param_dtypes: f.params.iter().map(|v| f.dtype(*v)).collect(),
            results,
        })
    }

    /// Run the launch on the `n_args` arguments `arg(i)` and hand `take` the results (array results
    /// in fresh buffers, scalar ones as empty buffers with their values in
    /// the slots) and their dimensions; `None` when the arguments need the
    /// general path (which then gives the same results, or the error).
    ///
    /// # Safety
    /// As for `Program::execute`: every `RawArg` is valid for `len` reads of
    /// its dtype for the call, and `launcher` runs `p`'s kernels.
    #[inline]
    pub unsafe fn call<'a, R>(
        &self,
        p: &Program,
        launcher: &dyn Launcher,
        n_args: usize,
        arg: impl Fn(usize) -> &'a RawArg,
        take: impl FnOnce(&mut [Buffer], &[ArgDims], &ScalarSlots) -> R,
    ) -> Option<R> {
        if n_args != self.param_dtypes.len() {
            return None;
        }
        // Bind every symbol from the dimensions; each argument's type and
        // element count must match.
        const UNSET: u64 = u64::MAX;
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
        if bound[..p.symbols.len()].contains(&UNSET) {
            return None;
        }
        let mut results: [Buffer; MAX_RESULTS] = [const { Buffer::F32(Vec::new()) }; MAX_RESULTS];
        let mut slots: ScalarSlots = [0; MAX_RESULTS];
        let mut dims = [ArgDims::FLAT; MAX_RESULTS];
        for (r, (dtype, factor, syms, scalar)) in self.results.iter().enumerate() {
            let mut d = [0usize; MAX_RANK];
            let want = &p.out_dims[r];
            for (k, dim) in want.iter().enumerate().take(MAX_RANK) {
                d[k] = match *dim {
                    DimRef::Const(c) => c as usize,
                    DimRef::Sym(s) => bound[s] as usize,
                };
            }
            dims[r] = ArgDims::new(&d[..want.len().min(MAX_RANK)])?;
            if !scalar {
                let len = syms.iter().fold(*factor, |n, s| n * bound[*s]) as usize;
                results[r] = Buffer::zeros(*dtype, len);
            }
        }
        let mut ptrs = [std::ptr::null_mut::<u8>(); MAX_ARGS];
        for (ptr, t) in ptrs.iter_mut().zip(&self.targets) {
            *ptr = match *t {
                Target::Param(q) => arg(q).ptr as *mut u8,
                Target::Result(r) if self.results[r].3 => slots.as_mut_ptr().add(r) as *mut u8,
                Target::Result(r) => results[r].as_mut_ptr(),
            };
        }
        let mut sizes = [0i64; MAX_SYMS];
        let launch_sizes = &p.launch_sizes[0];
        for (s, k) in sizes.iter_mut().zip(launch_sizes) {
            *s = bound[*k] as i64;
        }
        // SAFETY: each parameter pointer is valid for its argument's element
        // count, which equals its shape's under this binding (checked
        // above); each result pointer is a fresh buffer of the result's
        // element count, or an 8-byte slot for a scalar (one element of at
        // most 8 bytes, aligned for it); fusion only emits loads within a
        // buffer's shape and stores within the output's (`check_bounds` in
        // tests; no windowed loads here); results are distinct buffers and
        // never inputs (`of`).
        launcher.launch(
            self.kernel,
            &ptrs[..self.targets.len()],
            &sizes[..launch_sizes.len()],
        );
        let n = self.results.len();
        Some(take(&mut results[..n], &dims[..n], &slots))
    }
}
