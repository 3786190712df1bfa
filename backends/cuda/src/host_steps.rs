//! Loops and conds (the host steps of a program's schedule,
//! `oxla_core::exec::HostStep`) with the arrays kept where the program's
//! launches put them: on the device.
//!
//! The semantics are the CPU executor's (`core/src/exec/loops.rs` and
//! `cond.rs`); what differs is where the carried values live. Each nested
//! program (a loop's body and condition, a reverse sweep's backward body,
//! a cond's two branches) is loaded once, as a child program sharing the
//! enclosing program's module and stream ([`Children`]), and run on device
//! arrays; its results are the next carries, so no array crosses to the
//! host. What the host reads is what decides the control flow: a `for`
//! loop's two i64 bounds (once), a `while` loop's bool after each run of
//! its condition, a cond's predicate. A `for` loop's index `i` is written
//! into a one-element device array before each step (a copy queued on the
//! stream, ordered after the previous step's launches).
//!
//! A reverse sweep (the gradient of a loop) keeps carries as its
//! `Checkpoint` says, in the order of the CPU executor and
//! `LoopReverse::eval`: all of them (`All`, its tape is the step inputs
//! themselves, no copy), or every `k`-th, recomputing each segment from
//! its checkpoint before running the backward body over it from the last
//! step. The accumulated values are summed on the device by a small
//! program of its own (`a + b` per value, rounded to the element type as
//! the CPU executor adds).
//!
//! The runner is written once over [`Runner`], which the CUDA program
//! implements with device arrays and `crate::emulate` with host buffers
//! and the kernel interpreter, so the host-side tests run this very code.

use oxla_core::exec::{ArgDims, CondStep, HostStep, LoopStep, Nested, Program};
use oxla_core::kernel::fusion::fuse;
use oxla_core::ops::control::{note_tape_bytes, LoopKind};
use oxla_core::ops::elementwise::BinaryOp;
use oxla_core::{DType, Function, Op, Var};

/// Where a host step's arrays live, and how it runs programs on them.
pub(crate) trait Runner {
    /// An array, with its dimensions.
    type Buf;
    /// A loaded program.
    type Prog;
    /// Run `p` on `args` (each with the dimensions it binds from); its
    /// results, with their dimensions.
    fn run(&self, p: &Self::Prog, args: &[(&Self::Buf, ArgDims)])
        -> Result<Vec<Self::Buf>, String>;
    /// The dimensions `b` binds from.
    fn dims(&self, b: &Self::Buf) -> ArgDims;
    /// The bytes of `b` (a program's argument or result).
    fn bytes(&self, b: &Self::Buf) -> usize;
    /// The value of an i64 scalar (waits for the queued work).
    fn read_i64(&self, b: &Self::Buf) -> Result<i64, String>;
    /// The value of a bool scalar (waits for the queued work).
    fn read_bool(&self, b: &Self::Buf) -> Result<bool, String>;
    /// Make `slot` an i64 scalar holding `i` (reusing it when present).
    fn set_index(&self, slot: &mut Option<Self::Buf>, i: i64) -> Result<(), String>;
    /// A copy of `b`, with the dimensions `dims`.
    fn copy(&self, b: &Self::Buf, dims: ArgDims) -> Result<Self::Buf, String>;
    /// Zeros of `dtype` with dimensions `dims`.
    fn zeros(&self, dtype: DType, dims: &[usize]) -> Result<Self::Buf, String>;
}

/// A host step's programs, loaded.
pub(crate) enum Children<P> {
    Loop(LoopChildren<P>),
    Cond(CondChildren<P>),
}

/// A loop step's programs, loaded.
pub(crate) struct LoopChildren<P> {
    pub body: P,
    pub cond: Option<P>,
    pub back: Option<P>,
    /// A reverse sweep with accumulated values: the program summing two
    /// sets of them (`adder`).
    pub adder: Option<P>,
}

/// A cond step's branches, loaded.
pub(crate) struct CondChildren<P> {
    pub then: P,
    pub otherwise: P,
}

impl<P> Children<P> {
    /// Load step `s`'s programs: `nested` loads a nested program (its
    /// kernels numbered in the enclosing program's list), `program` a
    /// program of its own (the reverse sweep's adder).
    pub fn load(
        s: &HostStep,
        mut nested: impl FnMut(&Nested) -> Result<P, String>,
        mut program: impl FnMut(Program) -> Result<P, String>,
    ) -> Result<Children<P>, String> {
        Ok(match s {
            HostStep::Loop(s) => {
                let adder = match &s.back {
                    Some((back, n_acc)) if *n_acc > 0 => {
                        Some(program(fuse(&adder(&back.program.function, *n_acc)?)?)?)
                    }
                    _ => None,
                };
                Children::Loop(LoopChildren {
                    body: nested(&s.body)?,
                    cond: s.cond.as_ref().map(&mut nested).transpose()?,
                    back: s.back.as_ref().map(|b| nested(&b.0)).transpose()?,
                    adder,
                })
            }
            HostStep::Cond(s) => Children::Cond(CondChildren {
                then: nested(&s.then)?,
                otherwise: nested(&s.otherwise)?,
            }),
            // Collectives between GPUs go through NCCL, not built yet.
            HostStep::Pmap(_) | HostStep::Collective(_) => {
                return Err(format!(
                    "`{}`: pmap and collectives run on CPU devices only (GPUs: not yet)",
                    s.name()
                ))
            }
            // cuSOLVER's factorizations are not wired in yet.
            HostStep::Linalg(l) => {
                return Err(format!(
                    "`{}` (and the other linear algebra ops) run on the CPU backend only (GPUs: not yet)",
                    l.op
                ))
            }
            // A GPU sort (a segmented radix sort) is not built yet.
            // A GPU convolution (cuDNN or an implicit GEMM) is not built yet.
            HostStep::Conv(_) => return Err(
                "`conv` (and the pooling built on it) runs on the CPU backend only (GPUs: not yet)"
                    .to_string(),
            ),
            HostStep::Sort(_) => {
                return Err(
                    "`argsort` (and `sort`, `top_k`) run on the CPU backend only (GPUs: not yet)"
                        .to_string(),
                )
            }
        })
    }

    /// The programs nested in the step (not the adder): a loop's body,
    /// condition and backward body; a cond's branches.
    pub fn nested(&self) -> impl Iterator<Item = &P> {
        let parts: [Option<&P>; 3] = match self {
            Children::Loop(c) => [Some(&c.body), c.cond.as_ref(), c.back.as_ref()],
            Children::Cond(c) => [Some(&c.then), Some(&c.otherwise), None],
        };
        parts.into_iter().flatten()
    }
}

/// `(a_0 + b_0, …)` for the first `n_acc` results of the backward body
/// `back` (params `a_0…`, then `b_0…`).
pub(crate) fn adder(back: &Function, n_acc: usize) -> Result<Function, String> {
    let mut f = Function::new("reverse_sweep_sum");
    let types: Vec<_> = back.outs[..n_acc]
        .iter()
        .map(|o| back.ty(*o).clone())
        .collect();
    let a: Vec<Var> = (0..n_acc)
        .map(|k| f.add_param(&format!("a{k}"), types[k].clone()))
        .collect();
    let b: Vec<Var> = (0..n_acc)
        .map(|k| f.add_param(&format!("b{k}"), types[k].clone()))
        .collect();
    f.outs = a
        .iter()
        .zip(&b)
        .map(|(a, b)| f.push(Op::Binary(BinaryOp::Add), &[*a, *b]))
        .collect::<Result<_, _>>()?;
    Ok(f)
}

/// Run host step `s` with its programs `c` on the operands `ops` (each with
/// its dimensions under the enclosing call's binding); `outs` gives each
/// result's element type and dimensions. Returns the results, one per
/// entry of `s.outs()`.
pub(crate) fn run<R: Runner>(
    r: &R,
    s: &HostStep,
    c: &Children<R::Prog>,
    ops: &[(&R::Buf, ArgDims)],
    outs: &[(DType, Vec<usize>)],
) -> Result<Vec<R::Buf>, String> {
    if s.outs().len() != outs.len() || s.results().len() != outs.len() {
        return Err(internal(
            "a host step's results and buffers differ in number",
        ));
    }
    match (s, c) {
        (HostStep::Loop(s), Children::Loop(c)) => run_loop(r, s, c, ops, outs),
        (HostStep::Cond(s), Children::Cond(c)) => run_cond(r, s, c, ops, outs),
        _ => Err(internal("a host step's programs are another step's")),
    }
}

/// Run cond step `s`: the branch its predicate (the first operand) picks.
fn run_cond<R: Runner>(
    r: &R,
    s: &CondStep,
    c: &CondChildren<R::Prog>,
    ops: &[(&R::Buf, ArgDims)],
    outs: &[(DType, Vec<usize>)],
) -> Result<Vec<R::Buf>, String> {
    let [pred, consts @ ..] = ops else {
        return Err(internal("a cond without its predicate"));
    };
    let branch = if r.read_bool(pred.0)? {
        &c.then
    } else {
        &c.otherwise
    };
    let res = r.run(branch, consts)?;
    let vals = res.into_iter().map(|b| Some(Val::Own(b))).collect();
    pick(r, &s.results, vals, outs)
}

/// Run loop step `s`: a loop, or a reverse sweep.
fn run_loop<R: Runner>(
    r: &R,
    s: &LoopStep,
    c: &LoopChildren<R::Prog>,
    ops: &[(&R::Buf, ArgDims)],
    outs: &[(DType, Vec<usize>)],
) -> Result<Vec<R::Buf>, String> {
    let (nb, nk, nc) = (s.n_bounds(), s.n_consts, s.n_carries());
    if ops.len() < nb + nk + nc {
        return Err(internal("a loop step with too few operands"));
    }
    let (lo, n) = match s.kind {
        LoopKind::For => {
            let (lo, hi) = (r.read_i64(ops[0].0)?, r.read_i64(ops[1].0)?);
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
    let mut sweep = Sweep {
        r,
        s,
        c,
        consts: &ops[nb..nb + nk],
        init: &ops[nb + nk..nb + nk + nc],
        lo,
        index: None,
    };
    let Some((_, n_acc)) = &s.back else {
        let (_, last) = sweep.forward(n, |_, _| {})?;
        let vals = sweep.values(last);
        return pick(r, &s.results, vals, outs);
    };
    let n_acc = *n_acc;
    let back = c
        .back
        .as_ref()
        .ok_or_else(|| internal("a reverse sweep without its backward body"))?;
    // Forward, keeping carries as the checkpoint says.
    let seg = s.checkpoint.segment(n);
    // Without checkpoints each step keeps only the carries the backward
    // body reads (`LoopStep::back_reads`); a checkpoint keeps them all.
    let kept = match seg {
        None => s.back_reads.clone(),
        Some(_) => vec![true; nc],
    };
    // A sweep whose backward body reads no carry keeps no steps at all (a
    // `while` that never ends then spins as it does forward).
    let record = kept.contains(&true);
    let mut tape: Vec<TapeStep<R::Buf>> = Vec::new();
    let (n, _) = sweep.forward(n, |k, carries| {
        if record && seg.is_none_or(|s| k % s == 0) {
            tape.push(TapeStep::keeping(carries, &kept));
        }
    })?;
    let r0 = &ops[nb + nk + nc..];
    let mut cot: Carries<R::Buf> = Carries::Init;
    let mut acc: Option<Vec<R::Buf>> = None;
    let mut peak = tape.len();
    let seg_len = seg.unwrap_or(1);
    let mut k_end = n;
    while k_end > 0 {
        let start = (k_end - 1) / seg_len * seg_len;
        // The carries of steps start+1..k_end, recomputed from the
        // segment's checkpoint (`tape[start / seg_len]`, step `start`'s).
        let mut steps: Vec<Carries<R::Buf>> = Vec::new();
        let first = match seg {
            Some(_) => (start / seg_len) as usize,
            None => 0,
        };
        if seg.is_some() {
            let checkpoint = tape
                .get(first)
                .and_then(TapeStep::whole)
                .ok_or_else(|| internal("a reverse sweep's checkpoint is missing"))?;
            for k in start..k_end - 1 {
                let from = steps.last().unwrap_or(checkpoint);
                let next = sweep.step(k, from)?;
                steps.push(Carries::Own(next));
            }
            peak = peak.max(tape.len() + (k_end - start) as usize);
        }
        for k in (start..k_end).rev() {
            let carries = match seg {
                // Step `k`'s carries: the checkpoint for `start`, else the
                // last recomputed (those after it were popped).
                Some(_) if k == start => tape[first]
                    .whole()
                    .ok_or_else(|| internal("a reverse sweep's checkpoint is missing"))?
                    .args(r, sweep.init),
                Some(_) => steps
                    .last()
                    .ok_or_else(|| internal("a recomputed step is missing"))?
                    .args(r, sweep.init),
                None if !record => sweep.init.to_vec(),
                None => tape
                    .get(k as usize)
                    .ok_or_else(|| internal("a reverse sweep's tape is short"))?
                    .args(r, sweep.init),
            };
            let mut args: Vec<(&R::Buf, ArgDims)> = sweep.consts.to_vec();
            if s.kind == LoopKind::For {
                r.set_index(&mut sweep.index, lo.wrapping_add(k as i64))?;
            }
            if let (LoopKind::For, Some(i)) = (s.kind, &sweep.index) {
                args.push((i, ArgDims::new(&[]).expect("rank 0")));
            }
            args.extend(carries);
            args.extend(cot.args(r, r0));
            let mut res = r.run(back, &args)?;
            drop(args);
            if res.len() != n_acc + r0.len() {
                return Err(internal("the backward body's results do not fit the sweep"));
            }
            cot = Carries::Own(res.split_off(n_acc));
            acc = Some(match acc.take() {
                None => res,
                // Nothing accumulates (a sweep whose constants get no
                // cotangent): there is no adder, and nothing to add.
                Some(a) if n_acc == 0 => a,
                Some(a) => {
                    let adder = c
                        .adder
                        .as_ref()
                        .ok_or_else(|| internal("a reverse sweep without its adder"))?;
                    let sum_args: Vec<(&R::Buf, ArgDims)> =
                        a.iter().chain(&res).map(|b| (b, r.dims(b))).collect();
                    r.run(adder, &sum_args)?
                }
            });
            if seg.is_some() && k > start {
                steps.pop();
            }
        }
        k_end = start;
    }
    let per_step: usize = sweep
        .init
        .iter()
        .zip(&kept)
        .filter(|(_, keep)| **keep)
        .map(|((b, _), _)| r.bytes(b))
        .sum();
    note_tape_bytes(peak * per_step);
    drop(tape);
    // The values the results pick from: the accumulated ones (zeros when
    // no step ran, as large as the results that name them), then the
    // cotangents.
    let mut vals: Vec<Option<Val<'_, R::Buf>>> = match acc {
        Some(a) => a.into_iter().map(|b| Some(Val::Own(b))).collect(),
        None => {
            let mut z: Vec<Option<Val<'_, R::Buf>>> = (0..n_acc).map(|_| None).collect();
            for (i, k) in s.results.iter().enumerate() {
                if *k < n_acc && z[*k].is_none() {
                    let (dtype, dims) = &outs[i];
                    z[*k] = Some(Val::Own(r.zeros(*dtype, dims)?));
                }
            }
            z
        }
    };
    match cot {
        Carries::Init => vals.extend(r0.iter().map(|(b, _)| Some(Val::Ref(*b)))),
        Carries::Own(v) => vals.extend(v.into_iter().map(|b| Some(Val::Own(b)))),
    }
    pick(r, &s.results, vals, outs)
}

fn internal(msg: &str) -> String {
    format!("internal error: {msg}")
}

/// The carries a step starts from: the loop's operands (before the first
/// step: no copy is made of them) or arrays a step made.
enum Carries<B> {
    Init,
    Own(Vec<B>),
}

impl<B> Carries<B> {
    /// The carries as a program's arguments; `init` are the operands.
    fn args<'a, R: Runner<Buf = B>>(
        &'a self,
        r: &R,
        init: &[(&'a B, ArgDims)],
    ) -> Vec<(&'a B, ArgDims)> {
        match self {
            Carries::Init => init.to_vec(),
            Carries::Own(v) => v.iter().map(|b| (b, r.dims(b))).collect(),
        }
    }
}

/// A step on a reverse sweep's tape: all its carries (a checkpoint, or
/// every step when the backward body reads them all), or those the
/// backward body reads (`None` for the others, passed as their initial
/// values, which it does not read).
enum TapeStep<B> {
    Whole(Carries<B>),
    Kept(Vec<Option<B>>),
}

impl<B> TapeStep<B> {
    fn keeping(carries: Carries<B>, kept: &[bool]) -> TapeStep<B> {
        match carries {
            Carries::Own(v) if kept.contains(&false) => TapeStep::Kept(
                v.into_iter()
                    .zip(kept)
                    .map(|(b, keep)| keep.then_some(b))
                    .collect(),
            ),
            c => TapeStep::Whole(c),
        }
    }

    fn whole(&self) -> Option<&Carries<B>> {
        match self {
            TapeStep::Whole(c) => Some(c),
            TapeStep::Kept(_) => None,
        }
    }

    fn args<'a, R: Runner<Buf = B>>(
        &'a self,
        r: &R,
        init: &[(&'a B, ArgDims)],
    ) -> Vec<(&'a B, ArgDims)> {
        match self {
            TapeStep::Whole(c) => c.args(r, init),
            TapeStep::Kept(v) => v
                .iter()
                .zip(init)
                .map(|(b, a)| b.as_ref().map_or(*a, |b| (b, r.dims(b))))
                .collect(),
        }
    }
}

/// A value a step's results pick from: an array of the step's own, or an
/// operand (copied when picked).
enum Val<'a, B> {
    Own(B),
    Ref(&'a B),
}

/// The values at `idx`, in order: moved out when picked once, copied when
/// picked again later (or when an operand). Each must hold its result's
/// element count (`outs`).
fn pick<R: Runner>(
    r: &R,
    idx: &[usize],
    mut vals: Vec<Option<Val<'_, R::Buf>>>,
    outs: &[(DType, Vec<usize>)],
) -> Result<Vec<R::Buf>, String> {
    let mut picked = Vec::with_capacity(idx.len());
    for (i, k) in idx.iter().enumerate() {
        let again = idx[i + 1..].contains(k);
        let dims = ArgDims::new(&outs[i].1).unwrap_or(ArgDims::FLAT);
        let slot = vals
            .get_mut(*k)
            .ok_or_else(|| internal("a host step's result names no value"))?;
        picked.push(match slot {
            Some(Val::Ref(b)) => r.copy(b, dims)?,
            Some(Val::Own(b)) if again => r.copy(b, dims)?,
            Some(Val::Own(_)) => match slot.take() {
                Some(Val::Own(b)) => b,
                _ => unreachable!("matched just above"),
            },
            None => return Err(internal("a host step's value was taken twice")),
        });
    }
    Ok(picked)
}

/// What the steps of one loop share.
struct Sweep<'a, 'b, R: Runner> {
    r: &'a R,
    s: &'a LoopStep,
    c: &'a LoopChildren<R::Prog>,
    consts: &'a [(&'b R::Buf, ArgDims)],
    /// The carries' operands: the initial values.
    init: &'a [(&'b R::Buf, ArgDims)],
    lo: i64,
    /// The one-element array holding the step index (a `for` loop's).
    index: Option<R::Buf>,
}

impl<'a, 'b, R: Runner> Sweep<'a, 'b, R> {
    /// Run the body for step `k` (index `lo + k`) from `from`: the next
    /// carries.
    fn step(&mut self, k: u64, from: &Carries<R::Buf>) -> Result<Vec<R::Buf>, String> {
        let r = self.r;
        if self.s.kind == LoopKind::For {
            r.set_index(&mut self.index, self.lo.wrapping_add(k as i64))?;
        }
        let mut args: Vec<(&R::Buf, ArgDims)> = self.consts.to_vec();
        if let (LoopKind::For, Some(i)) = (self.s.kind, &self.index) {
            args.push((i, ArgDims::new(&[]).expect("rank 0")));
        }
        args.extend(from.args(r, self.init));
        let next = r.run(&self.c.body, &args)?;
        if next.len() != self.init.len() {
            return Err(internal("the body's results are not its carries"));
        }
        Ok(next)
    }

    /// Whether a `while` loop's condition holds at `cur`.
    fn holds(&self, cur: &Carries<R::Buf>) -> Result<bool, String> {
        let r = self.r;
        let cond = self
            .c
            .cond
            .as_ref()
            .ok_or_else(|| internal("a while loop without its condition"))?;
        let mut args: Vec<(&R::Buf, ArgDims)> = self.consts.to_vec();
        args.extend(cur.args(r, self.init));
        let res = r.run(cond, &args)?;
        let p = res
            .first()
            .ok_or_else(|| internal("a condition without a result"))?;
        r.read_bool(p)
    }

    /// Run the loop (`n` steps, or while the condition holds); `after(k,
    /// carries)` is handed the carries step `k` started from once it ran.
    /// Returns the trip count and the final carries.
    fn forward(
        &mut self,
        n: Option<u64>,
        mut after: impl FnMut(u64, Carries<R::Buf>),
    ) -> Result<(u64, Carries<R::Buf>), String> {
        let mut cur = Carries::Init;
        let mut k = 0u64;
        loop {
            let go = match n {
                Some(n) => k < n,
                None => self.holds(&cur)?,
            };
            if !go {
                return Ok((k, cur));
            }
            let next = self.step(k, &cur)?;
            after(k, std::mem::replace(&mut cur, Carries::Own(next)));
            k += 1;
        }
    }

    /// The final carries as values to pick results from.
    fn values(&self, last: Carries<R::Buf>) -> Vec<Option<Val<'b, R::Buf>>> {
        match last {
            Carries::Init => self.init.iter().map(|(b, _)| Some(Val::Ref(*b))).collect(),
            Carries::Own(v) => v.into_iter().map(|b| Some(Val::Own(b))).collect(),
        }
    }
}
