//! Loop steps of a program's schedule, run on the host (the manner of
//! XLA's while thunk): a loop's body, its condition and a reverse sweep's
//! backward body are each a `Program` of their own, whose kernels live in
//! the top-level program's one kernel list. The step reads the i64 bounds
//! (or runs the condition program and reads its bool), calls the body
//! program once per step on the current carries, writing the next carries
//! into a second set of buffers (the two sets swap each step, so steps
//! allocate nothing), and copies the final carries into the outer
//! program's buffers. A reverse sweep keeps carries as its `Checkpoint`
//! says, recomputing segments, in exactly the order of
//! `LoopReverse::eval`, and sums the backward body's accumulator outputs on
//! the host with the element type's rounding, as the reference does.

use super::host_step::{write_outs, HostStep, Nested, Renumbered};
use super::{ArgDims, Launcher, Program, RawArg, RawDest, Scratch};
use crate::buffer::Buffer;
use crate::dtype::DType;
use crate::ops::control::{note_tape_bytes, tape_limit, tape_limit_error, Checkpoint, LoopKind};
use std::cell::Cell;

/// A loop step of the schedule (`HostStep::Loop`): a loop
/// (`ops::control::Loop`), or the reverse sweep `LoopReverse` when `back`
/// is set.
#[derive(Clone, Debug)]
pub struct LoopStep {
    /// How many of the program's launches run before it.
    pub at: usize,
    pub kind: LoopKind,
    pub n_consts: usize,
    /// Used by a reverse sweep.
    pub checkpoint: Checkpoint,
    /// Params: the constants, `i: i64` (`For` only), the carries; results:
    /// the next carries.
    pub body: Nested,
    /// `While` only: params the constants and carries; result a bool scalar.
    pub cond: Option<Nested>,
    /// A reverse sweep's backward body (params: the body's, then the
    /// cotangents `r`; results: the accumulated values, then the next `r`),
    /// and the number of accumulated values.
    pub back: Option<(Nested, usize)>,
    /// A reverse sweep's tape keeps, per step, the carries marked here:
    /// those the backward body reads (`LoopReverse::back_reads_carries`);
    /// checkpoints keep them all.
    pub back_reads: Vec<bool>,
    /// Which carries (a loop) or which of (accumulated values, `r`) (a
    /// reverse sweep) the step's results are.
    pub results: Vec<usize>,
    /// The buffers of the operands: `[lo, hi]` (`For`), the constants, the
    /// carries' initial values, then (reverse sweep) the final `r`.
    pub args: Vec<usize>,
    /// The buffers the step writes, one per entry of `results`.
    pub outs: Vec<usize>,
}

impl LoopStep {
    pub fn n_bounds(&self) -> usize {
        match self.kind {
            LoopKind::For => 2,
            LoopKind::While => 0,
        }
    }
    pub fn n_carries(&self) -> usize {
        self.body.program.outputs.len()
    }
    /// The nested programs: body, condition, backward body.
    pub fn programs(&self) -> impl Iterator<Item = &Nested> {
        std::iter::once(&self.body)
            .chain(&self.cond)
            .chain(self.back.as_ref().map(|b| &b.0))
    }
}

impl Program {
    /// Check loop step `s` (`what` in errors) against the buffers written
    /// and read so far (see `check_host_step`).
    pub(super) fn check_loop(
        &self,
        what: &str,
        s: &LoopStep,
        written: &mut [bool],
        read: &mut [bool],
    ) -> Result<(), String> {
        let (nb, nk, nc) = (s.n_bounds(), s.n_consts, s.n_carries());
        let body = &s.body.program.function;
        let ty = |f: &crate::ir::Function, k: usize| f.ty(f.params[k]).clone();
        // What each operand must be: the bounds, then the body's constants and carries.
        let mut want: Vec<crate::ir::Type> = vec![crate::ir::Type::scalar(DType::I64); nb];
        let c0 = nk + nb / 2;
        if body.params.len() != c0 + nc {
            return Err(format!(
                "{what}: the body takes {} params",
                body.params.len()
            ));
        }
        want.extend((0..nk).map(|k| ty(body, k)));
        want.extend((0..nc).map(|k| ty(body, c0 + k)));
        if s.kind == LoopKind::For && ty(body, nk) != crate::ir::Type::scalar(DType::I64) {
            return Err(format!("{what}: the step index is not an i64 scalar"));
        }
        let mut result_types: Vec<crate::ir::Type> =
            body.outs.iter().map(|o| body.ty(*o).clone()).collect();
        if let Some((back, n_acc)) = &s.back {
            let b = &back.program.function;
            let n_r = b.outs.len().saturating_sub(*n_acc);
            if b.params.len() != c0 + nc + n_r || *n_acc > b.outs.len() {
                return Err(format!("{what}: the backward body does not fit the loop"));
            }
            for k in 0..c0 + nc {
                if ty(b, k) != ty(body, k) {
                    return Err(format!(
                        "{what}: the backward body's param {k} is not the body's"
                    ));
                }
            }
            want.extend((0..n_r).map(|k| ty(b, c0 + nc + k)));
            result_types = b.outs.iter().map(|o| b.ty(*o).clone()).collect();
            for k in 0..n_r {
                if b.ty(b.outs[n_acc + k]) != &ty(b, c0 + nc + k) {
                    return Err(format!("{what}: cotangent {k} changes type"));
                }
            }
        }
        for k in 0..nc {
            if body.ty(body.outs[k]) != &ty(body, c0 + k) {
                return Err(format!("{what}: carry {k} changes type"));
            }
        }
        match (&s.cond, s.kind) {
            (None, LoopKind::For) => {}
            (Some(c), LoopKind::While) => {
                let c = &c.program.function;
                let takes: Vec<crate::ir::Type> = (0..c.params.len()).map(|k| ty(c, k)).collect();
                if takes[..] != want[..nk + nc]
                    || c.outs.len() != 1
                    || c.ty(c.outs[0]) != &crate::ir::Type::scalar(DType::Bool)
                {
                    return Err(format!("{what}: the condition does not fit the loop"));
                }
            }
            _ => {
                return Err(format!(
                    "{what}: a while loop, and only a while loop, has a condition"
                ))
            }
        }
        self.check_step_operands(what, "loop", &s.args, &want, written, read)?;
        self.check_step_results(what, &s.args, &s.results, &s.outs, &result_types, written)?;
        Ok(())
    }

    /// Run loop step `s`, host step `j` of this program (see
    /// `run_host_step`).
    ///
    /// # Safety
    /// As for `run_host_step`.
    pub(super) unsafe fn run_loop(
        &self,
        j: usize,
        s: &LoopStep,
        launcher: &dyn Launcher,
        ops: &[RawArg],
        outs: &[(*mut u8, usize)],
        nested: &mut [Scratch],
    ) -> Result<(), String> {
        let [body_space, cond_space, back_space] = nested else {
            unreachable!("three scratch spaces per loop step")
        };
        let sweep = Sweep {
            s,
            launcher,
            consts: &ops[s.n_bounds()..s.n_bounds() + s.n_consts],
            carries0: &ops[s.n_bounds() + s.n_consts..s.n_bounds() + s.n_consts + s.n_carries()],
            index: Cell::new(0),
        };
        let (lo, n) = match s.kind {
            LoopKind::For => {
                // SAFETY: the bounds are i64 scalars (`check_loop`; their
                // element count was checked against the shape by the caller).
                let read = |a: &RawArg| unsafe { std::ptr::read_unaligned(a.ptr as *const i64) };
                let (lo, hi) = (read(&ops[0]), read(&ops[1]));
                // As `Loop::eval`: no steps unless hi > lo.
                let n = if hi > lo {
                    (hi as i128 - lo as i128) as u64
                } else {
                    0
                };
                (lo, Some(n))
            }
            LoopKind::While => (0, None),
        };
        let Some((back, n_acc)) = &s.back else {
            let mut cur = sweep.initial(body_space);
            // SAFETY: the caller's guarantee.
            let r =
                unsafe { sweep.forward(lo, n, &mut cur, body_space, cond_space, |_, _| Ok(())) };
            let r = r.and_then(|_| {
                let picked: Vec<&Buffer> = s.results.iter().map(|k| &cur[*k]).collect();
                // SAFETY: the caller's guarantee for `outs`.
                unsafe { write_outs(&picked, outs) }
            });
            body_space.owned.extend(cur);
            body_space.recycle();
            return r;
        };
        // The reverse sweep: forward, keeping carries as the checkpoint says.
        let seg = s.checkpoint.segment(n);
        // Without checkpoints each step keeps only what `back` reads; the
        // backward body is given the initial values of the others, which
        // it ignores.
        let kept = match seg {
            None => s.back_reads.clone(),
            Some(_) => vec![true; s.n_carries()],
        };
        let per_step: usize = sweep
            .carries0
            .iter()
            .zip(&kept)
            .filter(|(_, keep)| **keep)
            .map(|(a, _)| a.len * a.dtype.size_bytes())
            .sum();
        // The tape may not pass the limit (a `while` that never ends would
        // otherwise grow it until the allocator aborts the process).
        let limit = tape_limit();
        let what = || self.loop_name(j);
        // A sweep whose backward body reads no carry keeps no steps at all
        // (a `while` that never ends then spins as it does forward).
        let record = kept.contains(&true);
        let mut tape: Vec<Vec<Option<Buffer>>> = Vec::new();
        let mut cur = sweep.initial(body_space);
        // SAFETY: the caller's guarantee.
        let ran = unsafe {
            sweep.forward(lo, n, &mut cur, body_space, cond_space, |k, c| {
                if record && seg.is_none_or(|s| k % s == 0) {
                    let bytes = (tape.len() + 1).saturating_mul(per_step);
                    if bytes > limit {
                        return Err(tape_limit_error(&what(), bytes, k + 1, limit));
                    }
                    let step = c.iter().zip(&kept).map(|(b, keep)| keep.then(|| b.clone()));
                    tape.push(step.collect());
                }
                Ok(())
            })
        };
        body_space.owned.extend(cur);
        body_space.recycle();
        let n = ran?;
        let nf = s.n_bounds() + s.n_consts + s.n_carries();
        let mut r: Vec<Buffer> = ops[nf..].iter().map(|a| copy_in(a, back_space)).collect();
        let mut acc: Option<Vec<Buffer>> = None;
        let mut peak = tape.len();
        let seg_len = seg.unwrap_or(1);
        // The carries of one segment, recomputed from its checkpoint.
        let mut steps: Vec<Vec<Buffer>> = Vec::new();
        let mut k_end = n;
        let mut back_args: Vec<RawArg> = Vec::new();
        while k_end > 0 {
            let start = (k_end - 1) / seg_len * seg_len;
            if seg.is_some() {
                let len = (k_end - start) as usize;
                let bytes = (tape.len() + len).saturating_mul(per_step);
                if bytes > limit {
                    return Err(tape_limit_error(&what(), bytes, n, limit));
                }
                let first = &tape[(start / seg_len) as usize];
                let first = || {
                    first
                        .iter()
                        .map(|b| b.as_ref().expect("a checkpoint keeps all"))
                };
                while steps.len() < len {
                    steps.push(first().cloned().collect());
                }
                for (to, from) in steps[0].iter_mut().zip(first()) {
                    copy_buffer(to, from)?;
                }
                for k in start..k_end - 1 {
                    let at = (k - start) as usize;
                    let (done, rest) = steps.split_at_mut(at + 1);
                    sweep.index.set(lo.wrapping_add(k as i64));
                    // SAFETY: the caller's guarantee; `done[at]` and
                    // `rest[0]` are distinct buffers.
                    unsafe { sweep.step(&done[at], &mut rest[0], body_space)? };
                }
                peak = peak.max(tape.len() + len);
            }
            for k in (start..k_end).rev() {
                sweep.index.set(lo.wrapping_add(k as i64));
                back_args.clear();
                back_args.extend_from_slice(sweep.consts);
                if s.kind == LoopKind::For {
                    back_args.push(sweep.index_arg());
                }
                // A carry the tape did not keep is passed as its initial
                // value (the operand: live, of the carry's length), which
                // the backward body does not read.
                match seg {
                    Some(_) => back_args.extend(
                        steps[(k - start) as usize]
                            .iter()
                            .zip(sweep.carries0)
                            .map(|(b, a)| RawArg {
                                ptr: b.as_ptr(),
                                ..*a
                            }),
                    ),
                    None if !record => back_args.extend_from_slice(sweep.carries0),
                    None => back_args.extend(tape[k as usize].iter().zip(sweep.carries0).map(
                        |(b, a)| RawArg {
                            ptr: b.as_ref().map_or(a.ptr, |b| b.as_ptr()),
                            ..*a
                        },
                    )),
                }
                back_args.extend(r.iter().zip(&ops[nf..]).map(|(b, a)| RawArg {
                    ptr: b.as_ptr(),
                    ..*a
                }));
                let renumbered = Renumbered {
                    inner: launcher,
                    kernels: &back.kernels,
                };
                // SAFETY: the arguments point into live buffers of the
                // lengths the operands had (carries and cotangents keep
                // their types); the results are moved out, nothing aliases.
                let summed = unsafe {
                    back.program
                        .call_in(&renumbered, &back_args, &[], back_space, |res| {
                            for (q, x) in r.iter_mut().enumerate() {
                                std::mem::swap(x, &mut res[n_acc + q]);
                            }
                            match &mut acc {
                                None => {
                                    acc = Some(
                                        res[..*n_acc].iter_mut().map(super::take_buffer).collect(),
                                    );
                                    Ok(())
                                }
                                Some(a) => a
                                    .iter_mut()
                                    .zip(&res[..*n_acc])
                                    .try_for_each(|(a, x)| add_into(a, x)),
                            }
                        })
                };
                summed??;
            }
            k_end = start;
        }
        note_tape_bytes(peak * per_step);
        let zeros: Vec<Buffer>;
        let acc = match acc {
            Some(a) => a,
            None => {
                // No step ran: the accumulated values are zeros, as large
                // as the results that name them (no other is read).
                zeros = (0..*n_acc)
                    .map(|k| match s.results.iter().position(|r| *r == k) {
                        Some(i) => Buffer::zeros(self.buffers[s.outs[i]].dtype, outs[i].1),
                        None => Buffer::F32(Vec::new()),
                    })
                    .collect();
                zeros
            }
        };
        let picked: Vec<&Buffer> = s
            .results
            .iter()
            .map(|k| {
                if *k < *n_acc {
                    &acc[*k]
                } else {
                    &r[*k - n_acc]
                }
            })
            .collect();
        // SAFETY: the caller's guarantee for `outs`.
        unsafe { write_outs(&picked, outs) }
    }

    /// Loop step `j` in errors: the function and which of its loops, in
    /// schedule order (conds are not counted), e.g. "`f_grad`, its `while`
    /// loop (loop 1 of 2)". A loop nested in a loop's body is named by the
    /// body program's function.
    pub(super) fn loop_name(&self, j: usize) -> String {
        let loops: Vec<usize> = (0..self.host_steps.len())
            .filter(|i| matches!(self.host_steps[*i], HostStep::Loop(_)))
            .collect();
        let m = loops.iter().position(|i| *i == j).map_or(0, |m| m + 1);
        let keyword = match &self.host_steps[j] {
            HostStep::Loop(l) => l.kind.keyword(),
            step => step.keyword(),
        };
        format!(
            "`{}`, its `{keyword}` loop (loop {m} of {})",
            self.function.name,
            loops.len()
        )
    }
}

impl LoopStep {
    /// The step's kind in `Program::text`: `loop for`, `loop while`, or
    /// `loop_reverse` with its checkpoint.
    pub(super) fn text_kind(&self) -> String {
        match (self.kind, &self.back) {
            (LoopKind::For, None) => "loop for".to_string(),
            (LoopKind::While, None) => "loop while".to_string(),
            (k, Some(_)) => format!(
                "loop_reverse {} {}",
                if k == LoopKind::For { "for" } else { "while" },
                self.checkpoint.text()
            ),
        }
    }
}

/// What one loop step's sweeps share.
struct Sweep<'a> {
    s: &'a LoopStep,
    launcher: &'a dyn Launcher,
    consts: &'a [RawArg],
    /// The carries' initial values (their types and dimensions hold for
    /// every step's carries).
    carries0: &'a [RawArg],
    /// The step index `i`, passed to the body by pointer.
    index: Cell<i64>,
}

impl Sweep<'_> {
    fn index_arg(&self) -> RawArg {
        RawArg {
            dtype: DType::I64,
            ptr: self.index.as_ptr() as *const u8,
            len: 1,
            dims: ArgDims::new(&[]).expect("rank 0"),
        }
    }

    /// Copies of the initial carries, in buffers of `space`'s pool.
    fn initial(&self, space: &mut Scratch) -> Vec<Buffer> {
        self.carries0.iter().map(|a| copy_in(a, space)).collect()
    }

    /// One step of the body from `from` into `to` (with `self.index`).
    ///
    /// # Safety
    /// As for `run_loop`; `from` and `to` are distinct buffers holding the
    /// carries' element counts.
    unsafe fn step(
        &self,
        from: &[Buffer],
        to: &mut [Buffer],
        space: &mut Scratch,
    ) -> Result<(), String> {
        let s = self.s;
        let mut args: [RawArg; 16] = [self.index_arg(); 16];
        let mut big: Vec<RawArg> = Vec::new();
        let n = self.consts.len() + s.n_bounds() / 2 + from.len();
        let args: &mut [RawArg] = if n <= 16 {
            &mut args[..n]
        } else {
            big.resize(n, self.index_arg());
            &mut big
        };
        args[..self.consts.len()].copy_from_slice(self.consts);
        let c0 = self.consts.len() + s.n_bounds() / 2;
        if s.kind == LoopKind::For {
            args[self.consts.len()] = self.index_arg();
        }
        for (k, (b, a)) in from.iter().zip(self.carries0).enumerate() {
            args[c0 + k] = RawArg {
                ptr: b.as_ptr(),
                ..*a
            };
        }
        let mut dests: [Option<RawDest>; 16] = [None; 16];
        let mut big_dests: Vec<Option<RawDest>> = Vec::new();
        let dests: &mut [Option<RawDest>] = if to.len() <= 16 {
            &mut dests[..to.len()]
        } else {
            big_dests.resize(to.len(), None);
            &mut big_dests
        };
        for (k, (b, a)) in to.iter_mut().zip(self.carries0).enumerate() {
            dests[k] = Some(RawDest {
                dtype: a.dtype,
                ptr: b.as_mut_ptr(),
                len: b.len(),
                dims: a.dims,
                name: "carry",
            });
        }
        let renumbered = Renumbered {
            inner: self.launcher,
            kernels: &s.body.kernels,
        };
        // SAFETY: the arguments point into live buffers of the stated
        // lengths (the carries keep their operands' lengths); each
        // destination is a distinct buffer of `to`, overlapping no argument.
        unsafe {
            s.body
                .program
                .call_in(&renumbered, args, dests, space, |_| ())
        }
    }

    /// Run the loop from `cur` (left holding the final carries); `visit(k,
    /// carries)` sees the carries step `k` starts from (an error from it
    /// stops the loop: the tape limit). Returns the trip count.
    ///
    /// # Safety
    /// As for `run_loop`.
    unsafe fn forward(
        &self,
        lo: i64,
        n: Option<u64>,
        cur: &mut Vec<Buffer>,
        body_space: &mut Scratch,
        cond_space: &mut Scratch,
        mut visit: impl FnMut(u64, &[Buffer]) -> Result<(), String>,
    ) -> Result<u64, String> {
        let mut next: Vec<Buffer> = cur
            .iter()
            .map(|b| body_space.buffer(b.dtype(), b.len()))
            .collect();
        let mut cond_args: Vec<RawArg> = Vec::new();
        let mut k = 0u64;
        let r = loop {
            let go = match n {
                Some(n) => k < n,
                None => {
                    let c = self.s.cond.as_ref().expect("a while loop has a condition");
                    cond_args.clear();
                    cond_args.extend_from_slice(self.consts);
                    cond_args.extend(cur.iter().zip(self.carries0).map(|(b, a)| RawArg {
                        ptr: b.as_ptr(),
                        ..*a
                    }));
                    let renumbered = Renumbered {
                        inner: self.launcher,
                        kernels: &c.kernels,
                    };
                    // SAFETY: as in `step`; the result is read, not kept.
                    let holds = unsafe {
                        c.program
                            .call_in(&renumbered, &cond_args, &[], cond_space, |res| {
                                res[0].get(0) != 0.0
                            })
                    };
                    match holds {
                        Ok(h) => h,
                        Err(e) => break Err(e),
                    }
                }
            };
            if !go {
                break Ok(k);
            }
            if let Err(e) = visit(k, cur) {
                break Err(e);
            }
            self.index.set(lo.wrapping_add(k as i64));
            // SAFETY: `cur` and `next` are distinct buffers.
            if let Err(e) = unsafe { self.step(cur, &mut next, body_space) } {
                break Err(e);
            }
            std::mem::swap(cur, &mut next);
            k += 1;
        };
        body_space.owned.extend(next);
        r
    }
}

/// A copy of the argument `a` in a buffer from `space`'s pool.
fn copy_in(a: &RawArg, space: &mut Scratch) -> Buffer {
    let mut b = space.buffer(a.dtype, a.len);
    // SAFETY: the caller of the executor guarantees `a.ptr` valid for `a.len`
    // elements; `b` is a fresh buffer of as many.
    unsafe { std::ptr::copy_nonoverlapping(a.ptr, b.as_mut_ptr(), a.len * a.dtype.size_bytes()) };
    b
}

fn copy_buffer(to: &mut Buffer, from: &Buffer) -> Result<(), String> {
    if to.dtype() != from.dtype() || to.len() != from.len() {
        return Err("internal error: a loop's carries changed size".into());
    }
    // SAFETY: two distinct buffers of the same type and length.
    unsafe {
        std::ptr::copy_nonoverlapping(
            from.as_ptr(),
            to.as_mut_ptr(),
            from.len() * from.dtype().size_bytes(),
        )
    };
    Ok(())
}

/// `acc += x` elementwise, each sum rounded to the element type (as the
/// reference interpreter adds: in f64, then rounded; for f32 that is the
/// f32 sum, since f64 holds the exact sum of two f32 values well enough
/// that rounding twice cannot differ).
fn add_into(acc: &mut Buffer, x: &Buffer) -> Result<(), String> {
    if acc.dtype() != x.dtype() || acc.len() != x.len() {
        return Err("internal error: a reverse sweep's accumulated values changed size".into());
    }
    match (acc, x) {
        (Buffer::F64(a), Buffer::F64(b)) => a.iter_mut().zip(b).for_each(|(a, b)| *a += b),
        (Buffer::F32(a), Buffer::F32(b)) => a.iter_mut().zip(b).for_each(|(a, b)| *a += b),
        (a, b) => {
            for i in 0..a.len() {
                a.set(i, a.get(i) + b.get(i));
            }
        }
    }
    Ok(())
}
