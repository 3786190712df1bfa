//! Running a program: `execute_with` (bind, allocate, launch, run the
//! host steps) and the public entry points over it, with the per-thread
//! scratch space whose pool of buffers calls reuse.

use super::{host_step, raw_args};
use super::{ArgDims, DimRef, Launcher, Program, RawArg, RawDest, Slot, MAX_RANK};
use crate::buffer::Buffer;
use crate::dtype::DType;

/// Scratch space reused across calls on one thread, so a call allocates
/// only the buffers it returns or passes between kernels.
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) sizes: Vec<Option<u64>>,
    /// The argument (and axis, if it came with dimensions) that bound each symbol.
    pub(super) source: Vec<(usize, Option<usize>)>,
    pub(super) bound: Vec<u64>,
    /// Each buffer's element count under `bound`.
    lens: Vec<usize>,
    ptrs: Vec<*mut u8>,
    kernel_sizes: Vec<i64>,
    pub(super) owned: Vec<Buffer>,
    pub(super) results: Vec<Buffer>,
    /// The dimensions of each result, under `bound`.
    result_dims: Vec<ArgDims>,
    /// Small buffers kept from earlier calls for reuse: kernels write every
    /// element of their outputs, so a reused buffer needs no clearing.
    pool: Vec<Buffer>,
    /// For each owned buffer: the result whose caller-owned destination
    /// holds it (the kernels write there directly), if any.
    backing: Vec<Option<usize>>,
    /// The space of each host step's nested programs (a loop's body,
    /// condition and backward body; a cond's then and else branches: three
    /// per step), kept across calls like the rest.
    nested: Vec<Scratch>,
    /// A host step's operands and outputs.
    step_args: Vec<RawArg>,
    step_outs: Vec<(*mut u8, usize)>,
    /// Their dimensions (after the operands' in `host_step_dims`).
    step_out_dims: Vec<ArgDims>,
}

/// Buffers a call leaves behind (its intermediates, a scalar result after it
/// was read) are kept for reuse, at most `POOL_SIZE` of them and
/// `POOL_MAX_BYTES` in all per thread, so that a training step that writes
/// its results into the caller's buffers allocates nothing; a buffer that
/// would pass the byte budget is freed.
const POOL_MAX_BYTES: usize = 16 << 20;
const POOL_SIZE: usize = 32;

impl Scratch {
    pub(super) fn buffer(&mut self, dtype: DType, len: usize) -> Buffer {
        match self
            .pool
            .iter()
            .position(|b| b.dtype() == dtype && b.len() == len)
        {
            // `remove` keeps the pool oldest first (see `recycle`).
            Some(i) => self.pool.remove(i),
            None => Buffer::zeros(dtype, len),
        }
    }

    /// Return what the call did not hand out to the pool.
    pub(super) fn recycle(&mut self) {
        let bytes = |b: &Buffer| b.len() * b.dtype().size_bytes();
        let mut pooled: usize = self.pool.iter().map(bytes).sum();
        for b in self.owned.drain(..).chain(self.results.drain(..)) {
            let n = bytes(&b);
            if n == 0 || n > POOL_MAX_BYTES {
                continue;
            }
            // The oldest buffers (left by earlier calls, of sizes this call
            // did not use) make room.
            while !self.pool.is_empty()
                && (pooled + n > POOL_MAX_BYTES || self.pool.len() >= POOL_SIZE)
            {
                pooled -= bytes(&self.pool.remove(0));
            }
            pooled += n;
            self.pool.push(b);
        }
    }
}

impl Scratch {
    /// The space of `n` devices' runs of a pmap's body, kept in this
    /// (the pmap step's) scratch across calls like a loop body's.
    pub(super) fn devices(&mut self, n: usize) -> &mut [Scratch] {
        if self.nested.len() < n {
            self.nested.resize_with(n, Scratch::default);
        }
        &mut self.nested[..n]
    }
}

/// Move a buffer out, leaving an empty one.
pub fn take_buffer(b: &mut Buffer) -> Buffer {
    std::mem::replace(b, Buffer::F32(Vec::new()))
}

thread_local! {
    /// Scratch space reused by every call on this thread (see `execute_then`
    /// for when a call cannot use it).
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

impl Program {
    /// Run the program on host buffers (one per parameter).
    pub fn run(&self, launcher: &dyn Launcher, args: &[Buffer]) -> Result<Vec<Buffer>, String> {
        self.check_schedule()?;
        // SAFETY: the pointers come from live buffers of the stated lengths,
        // and the schedule was checked just above.
        unsafe { self.execute(launcher, &raw_args(args)) }
    }

    /// Run the program. Each argument's dtype and length is checked against
    /// its parameter before any kernel runs.
    ///
    /// # Safety
    /// Every `RawArg` pointer must be valid for `len` reads of its `dtype`
    /// for the duration of the call, `launcher` must run the kernels of
    /// this program by index, and the program must pass `check_schedule`
    /// (every program `fuse` returns does).
    pub unsafe fn execute(
        &self,
        launcher: &dyn Launcher,
        args: &[RawArg],
    ) -> Result<Vec<Buffer>, String> {
        self.execute_then(launcher, args, |outs, _| {
            outs.iter_mut().map(take_buffer).collect()
        })
    }

    /// Like `execute`, but hands the outputs and their dimensions to `take`
    /// instead of returning them: what `take` leaves in place (e.g. after
    /// reading a scalar) is kept for reuse by later calls, so a call need not
    /// allocate at all.
    ///
    /// # Safety
    /// As for `execute`.
    pub unsafe fn execute_then<R>(
        &self,
        launcher: &dyn Launcher,
        args: &[RawArg],
        take: impl FnOnce(&mut [Buffer], &[ArgDims]) -> R,
    ) -> Result<R, String> {
        self.execute_into_then(launcher, args, &[], take)
    }

    /// Like `execute_then`, but result `i` is written into `dests[i]` when
    /// that is `Some` (the kernels write there directly; the buffer handed
    /// to `take` for it is empty); `dests` is empty or has one entry per
    /// result. Each destination's dtype and dimensions are checked against
    /// its result before any kernel runs; an error names the destination.
    /// With every array result in a destination, a call allocates nothing
    /// once its intermediate buffers are pooled.
    ///
    /// # Safety
    /// As for `execute`; and each destination's `ptr` must be valid for
    /// `len` writes of its dtype for the call and overlap no argument and
    /// no other destination.
    pub unsafe fn execute_into_then<R>(
        &self,
        launcher: &dyn Launcher,
        args: &[RawArg],
        dests: &[Option<RawDest>],
        take: impl FnOnce(&mut [Buffer], &[ArgDims]) -> R,
    ) -> Result<R, String> {
        self.check_arg_types(args.iter().map(|a| a.dtype))?;
        if !dests.is_empty() && dests.len() != self.outputs.len() {
            return Err(format!(
                "`{}` has {} results, got {} destinations",
                self.function.name,
                self.outputs.len(),
                dests.len()
            ));
        }
        let mut take = Some(take);
        let mut run = |scratch: &mut Scratch| {
            let r = self.execute_with(launcher, args, dests, scratch).map(|()| {
                let take = take.take().expect("a call runs once");
                take(&mut scratch.results, &scratch.result_dims)
            });
            scratch.recycle();
            r
        };
        // The per-thread scratch space, unless it is unavailable: already
        // borrowed (re-entered from inside a launch), or being or already
        // destroyed (called from a thread-local destructor or an `atexit`
        // handler during teardown, where `with` would panic and, in an
        // `extern "C"` callback, abort). Then the call uses fresh space.
        let pooled = SCRATCH.try_with(|cell| cell.try_borrow_mut().ok().map(|mut s| run(&mut s)));
        match pooled {
            Ok(Some(r)) => r,
            Ok(None) | Err(_) => run(&mut Scratch::default()),
        }
    }

    /// Bind, allocate, launch; leave the outputs in `scratch.results`.
    ///
    /// # Safety
    /// As for `execute`.
    pub(super) unsafe fn execute_with(
        &self,
        launcher: &dyn Launcher,
        args: &[RawArg],
        dests: &[Option<RawDest>],
        scratch: &mut Scratch,
    ) -> Result<(), String> {
        self.bind_and_check(args, scratch)?;
        self.size_buffers_and_results(scratch);
        let mut call = Call {
            program: self,
            launcher,
            args,
            dests,
            scratch,
        };
        call.check_dests()?;
        call.place_owned_buffers();
        // SAFETY: the caller's guarantee (as for `execute`) is what both
        // steps require; the destinations were checked and the owned
        // buffers placed just above.
        unsafe {
            call.run_schedule()?;
            call.collect_results();
        }
        Ok(())
    }

    /// Bind every size symbol from the arguments into `scratch.bound`, then
    /// check the binding against the program's bounds and nonempty axes.
    fn bind_and_check(&self, args: &[RawArg], scratch: &mut Scratch) -> Result<(), String> {
        if !self.bind_fast(args, scratch) {
            self.bind_into(&|i| (args[i].len, args[i].dims), scratch)?;
            let bound: Vec<u64> = scratch.sizes.iter().map(|s| s.expect("bound")).collect();
            scratch.bound = bound;
        }
        if self.windowed {
            self.check_bounds(&scratch.bound)?;
        }
        if !self.nonempty.is_empty() {
            self.check_nonempty(&scratch.bound)?;
        }
        Ok(())
    }

    /// Each buffer's element count and each result's dimensions under the
    /// binding, into `scratch.lens` and `scratch.result_dims`.
    fn size_buffers_and_results(&self, scratch: &mut Scratch) {
        scratch.lens.clear();
        for (factor, syms) in &self.numel {
            let n = syms.iter().fold(*factor, |acc, s| acc * scratch.bound[*s]);
            scratch.lens.push(n as usize);
        }
        scratch.result_dims.clear();
        for want in &self.out_dims {
            let mut d = [0usize; MAX_RANK];
            for (k, dim) in want.iter().enumerate().take(MAX_RANK) {
                d[k] = match *dim {
                    DimRef::Const(c) => c as usize,
                    DimRef::Sym(s) => scratch.bound[s] as usize,
                };
            }
            let dims = ArgDims::new(&d[..want.len().min(MAX_RANK)]).expect("rank");
            scratch.result_dims.push(dims);
        }
    }

    /// Check destination `d` of result `i`, whose dimensions under this
    /// call's binding are `dims` and element count `len`.
    fn check_dest(&self, i: usize, d: &RawDest, dims: &ArgDims, len: usize) -> Result<(), String> {
        let f = &self.function;
        let want = self.buffers[self.outputs[i]].dtype;
        if d.dtype != want {
            return Err(format!(
                "destination `{}` of `{}`: result {i} holds {want} elements, the destination holds {}",
                d.name, f.name, d.dtype
            ));
        }
        let got = d.dims.get();
        if got != dims.get() || d.len != len {
            let got = match got {
                Some(g) => format!("{g:?}"),
                None => format!("{} elements", d.len),
            };
            return Err(format!(
                "destination `{}` of `{}`: result {i} has shape {:?} ({}), the destination has shape {got}",
                d.name,
                f.name,
                dims.get().unwrap_or(&[]),
                f.shape(f.outs[i])
            ));
        }
        Ok(())
    }
}

/// The destination the caller gave for result `i`, if any.
fn dest(dests: &[Option<RawDest>], i: usize) -> Option<RawDest> {
    dests.get(i).copied().flatten()
}

/// One call of `execute_with` once its symbols are bound and its buffers
/// sized: the program, the call's arguments and destinations, and the
/// scratch space that holds its binding, buffers and results.
struct Call<'a> {
    program: &'a Program,
    launcher: &'a dyn Launcher,
    args: &'a [RawArg],
    dests: &'a [Option<RawDest>],
    scratch: &'a mut Scratch,
}

impl Call<'_> {
    /// Check every destination against its result before any kernel writes.
    fn check_dests(&self) -> Result<(), String> {
        let (p, s) = (self.program, &*self.scratch);
        // Every destination is checked before any kernel writes.
        for (i, b) in p.outputs.iter().enumerate() {
            if let Some(d) = dest(self.dests, i) {
                p.check_dest(i, &d, &s.result_dims[i], s.lens[*b])?;
            }
        }
        Ok(())
    }

    /// Give each owned buffer its place (a destination, or a buffer from the
    /// pool), and make room for the host steps' nested programs.
    fn place_owned_buffers(&mut self) {
        let (p, scratch) = (self.program, &mut *self.scratch);
        // An owned output buffer lives in the first destination of a result
        // it is: the kernels write there.
        let n_owned = p.buffers.iter().filter(|b| b.param.is_none()).count();
        scratch.backing.clear();
        scratch.backing.resize(n_owned, None);
        for (i, b) in p.outputs.iter().enumerate() {
            if let (Some(_), Slot::Owned(o)) = (dest(self.dests, i), p.slots[*b]) {
                scratch.backing[o].get_or_insert(i);
            }
        }
        scratch.owned.clear();
        for (b, info) in p.buffers.iter().enumerate() {
            if let Slot::Owned(o) = p.slots[b] {
                let buf = match scratch.backing[o] {
                    Some(_) => Buffer::F32(Vec::new()),
                    None => scratch.buffer(info.dtype, scratch.lens[b]),
                };
                scratch.owned.push(buf);
            }
        }
        if scratch.nested.len() < 3 * p.host_steps.len() {
            scratch
                .nested
                .resize_with(3 * p.host_steps.len(), Scratch::default);
        }
    }

    /// Where buffer `b` is during this call, and its element count,
    /// checked: the precondition every kernel and host step relies on is
    /// that each buffer holds exactly its shape's element count under
    /// this binding.
    fn place(&mut self, b: usize) -> Result<(*mut u8, usize), String> {
        let s = &mut *self.scratch;
        let (ptr, len) = match self.program.slots[b] {
            Slot::Param(p) => (self.args[p].ptr as *mut u8, self.args[p].len),
            Slot::Owned(o) => match s.backing[o].and_then(|k| dest(self.dests, k)) {
                Some(d) => (d.ptr, d.len),
                None => (s.owned[o].as_mut_ptr(), s.owned[o].len()),
            },
        };
        if len != s.lens[b] {
            return Err(format!("internal error: buffer {b} has {len} elements"));
        }
        Ok((ptr, len))
    }

    /// Run the schedule: before each launch, and after the last, the host
    /// steps placed there.
    ///
    /// # Safety
    /// As for `Program::execute`, for this call's arguments and
    /// destinations, with `check_dests` and `place_owned_buffers` done.
    unsafe fn run_schedule(&mut self) -> Result<(), String> {
        let p = self.program;
        let mut next_step = 0;
        for l in 0..=p.launches.len() {
            while next_step < p.host_steps.len() && p.host_steps[next_step].at() == l {
                let j = next_step;
                next_step += 1;
                // SAFETY: the caller's guarantee, passed on.
                unsafe { self.run_host_step(j)? };
            }
            if l == p.launches.len() {
                break;
            }
            // SAFETY: the caller's guarantee, passed on.
            unsafe { self.launch(l)? };
        }
        Ok(())
    }

    /// Run host step `j` on its operands and outputs, placed.
    ///
    /// # Safety
    /// As for `run_schedule`.
    unsafe fn run_host_step(&mut self, j: usize) -> Result<(), String> {
        let p = self.program;
        let step = &p.host_steps[j];
        self.scratch.step_args.clear();
        for (b, dims) in step.args().iter().zip(&p.host_step_dims[j]) {
            let (ptr, len) = self.place(*b)?;
            let dims = host_step::dims_under(dims, &self.scratch.bound);
            self.scratch.step_args.push(RawArg {
                dtype: p.buffers[*b].dtype,
                ptr,
                len,
                dims,
            });
        }
        self.scratch.step_outs.clear();
        for b in step.outs() {
            let out = self.place(*b)?;
            self.scratch.step_outs.push(out);
        }
        self.scratch.step_out_dims.clear();
        for dims in &p.host_step_dims[j][step.args().len()..] {
            let dims = host_step::dims_under(dims, &self.scratch.bound);
            self.scratch.step_out_dims.push(dims);
        }
        let s = &mut *self.scratch;
        // SAFETY: the operands point into this call's arguments
        // and buffers, valid for their element counts (checked by
        // `place`); the outputs are buffers this call owns, or the
        // caller's destinations, distinct from each other and from
        // the operands (`check_schedule`, run once per program by
        // the callers, and the caller's guarantee for destinations).
        unsafe {
            p.run_host_step(
                j,
                self.launcher,
                &s.step_args,
                &s.step_outs,
                &s.step_out_dims,
                &mut s.nested[3 * j..3 * j + 3],
            )
        }
    }

    /// Launch the schedule's launch `l` on its buffers, placed, with the
    /// kernel's sizes under the binding.
    ///
    /// # Safety
    /// As for `run_schedule`.
    unsafe fn launch(&mut self, l: usize) -> Result<(), String> {
        let p = self.program;
        let launch = &p.launches[l];
        let s = &mut *self.scratch;
        s.ptrs.clear();
        s.kernel_sizes.clear();
        s.kernel_sizes
            .extend(p.launch_sizes[l].iter().map(|i| s.bound[*i] as i64));
        for b in &launch.args {
            let ptr = self.place(*b)?.0;
            self.scratch.ptrs.push(ptr);
        }
        let s = &*self.scratch;
        // SAFETY: each pointer is valid for its buffer's element count
        // (checked just above); fusion only emits loads within a buffer's
        // shape and stores within the output's shape (`check_bounds`,
        // run in tests, and before any launch of every call of a
        // program with offset loads or region stores, whose extents
        // depend on the IR's stated slice shapes); a launch writes only
        // buffers this call owns, or destinations the caller owns, which
        // are distinct from each other and from the arguments and never
        // also passed as its inputs (`check_schedule`, run once per
        // program by the callers); the caller guarantees `RawArg`
        // pointers are valid for `len` elements and destinations for
        // `len` writes, overlapping nothing.
        unsafe {
            self.launcher
                .launch(launch.kernel, &s.ptrs, &s.kernel_sizes)
        };
        Ok(())
    }

    /// Leave the results in `scratch.results`, once the kernels are done.
    ///
    /// # Safety
    /// As for `run_schedule`, after it ran.
    unsafe fn collect_results(&mut self) {
        self.scratch.results.clear();
        for i in 0..self.program.outputs.len() {
            // SAFETY: the caller's guarantee, passed on.
            let out = unsafe { self.take_result(i) };
            self.scratch.results.push(out);
        }
    }

    /// Result `i`: copied into its destination if it has one (an empty
    /// buffer stands for it), or else moved or copied out of where it is.
    ///
    /// # Safety
    /// As for `collect_results`.
    unsafe fn take_result(&mut self, i: usize) -> Buffer {
        let (p, s) = (self.program, &mut *self.scratch);
        let b = &p.outputs[i];
        // Where the result's elements are when the kernels are done:
        // in a destination, when a result shares a buffer with an
        // earlier one.
        let in_dest = match p.slots[*b] {
            Slot::Owned(o) => s.backing[o]
                .filter(|k| *k != i)
                .and_then(|k| dest(self.dests, k)),
            Slot::Param(_) => None,
        };
        if let Some(d) = dest(self.dests, i) {
            let written_here = matches!(p.slots[*b], Slot::Owned(o) if s.backing[o] == Some(i));
            if !written_here {
                let src = match (p.slots[*b], in_dest) {
                    (_, Some(k)) => k.ptr as *const u8,
                    (Slot::Param(a), None) => self.args[a].ptr,
                    (Slot::Owned(o), None) => s.owned[o].as_ptr(),
                };
                // SAFETY: `src` holds `d.len` elements of `d.dtype`
                // (checked against the result's shape and type above),
                // and the destination overlaps no argument, other
                // destination or buffer of this call (the caller's
                // guarantee; owned buffers are this call's own).
                unsafe { std::ptr::copy_nonoverlapping(src, d.ptr, d.len * d.dtype.size_bytes()) };
            }
            return Buffer::F32(Vec::new());
        }
        if let Some(k) = in_dest {
            let mut out = Buffer::zeros(k.dtype, k.len);
            // SAFETY: as above; `out` is a fresh buffer of `k.len` elements.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    k.ptr as *const u8,
                    out.as_mut_ptr(),
                    k.len * k.dtype.size_bytes(),
                )
            };
            return out;
        }
        match p.slots[*b] {
            Slot::Param(a) => {
                let a = self.args[a];
                // SAFETY: the caller guarantees `a.ptr` is valid for `a.len` elements of `a.dtype`.
                let vals: Vec<f64> = (0..a.len)
                    .map(|i| unsafe { crate::buffer::read_raw(a.ptr, a.dtype, i) })
                    .collect();
                Buffer::from_f64(a.dtype, &vals)
            }
            // An output returned twice is copied; otherwise it is moved out.
            Slot::Owned(o) if p.outputs[i + 1..].contains(b) => s.owned[o].clone(),
            Slot::Owned(o) => take_buffer(&mut s.owned[o]),
        }
    }
}
