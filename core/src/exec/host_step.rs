//! Host steps of a program's schedule: the loops (`exec::loops`) and conds
//! (`exec::cond`) the host runs between launches, in the manner of XLA's
//! while and conditional thunks. Each runs programs of its own
//! ([`Nested`]), whose kernels live in the top-level program's one kernel
//! list. What the two kinds share is here: the step's place in the
//! schedule, operands and results, the numbering of nested kernels, the
//! checks of a step's operands and results, and the copy of its results
//! into the enclosing program's buffers. Checking, running and printing a
//! step dispatch on its kind by `match`.

use super::cond::CondStep;
use super::conv::ConvStep;
use super::linalg::LinalgStep;
use super::loops::LoopStep;
use super::pmap::{CollectiveStep, PmapStep};
use super::sort::SortStep;
use super::{ArgDims, DimRef, Launcher, Program, RawArg, RawDest, Scratch, MAX_RANK};
use crate::buffer::Buffer;
use crate::ir::Type;
use std::fmt::Write as _;

/// A program a host step runs, its kernels numbered in the enclosing
/// program's list.
#[derive(Clone, Debug)]
pub struct Nested {
    pub program: Program,
    /// For each of `program.kernels`: its index in the enclosing program's
    /// `kernels` (which holds an equal kernel there).
    pub kernels: Vec<usize>,
}

/// A host step of the schedule, run between launches.
// A program has a few host steps, built once: boxing the larger variant
// would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum HostStep {
    /// A loop (`ops::control::Loop`), or the reverse sweep `LoopReverse`
    /// (see `exec::loops`).
    Loop(LoopStep),
    /// A cond (`ops::control::Cond`, see `exec::cond`).
    Cond(CondStep),
    /// A pmap (`ops::control::Pmap`, see `exec::pmap`).
    Pmap(PmapStep),
    /// A collective (`ops::collective`, see `exec::pmap`).
    Collective(CollectiveStep),
    /// An argsort (`ops::sort`, see `exec::sort`).
    Sort(SortStep),
    /// A factorization or solve (`ops::linalg`, see `exec::linalg`).
    Linalg(LinalgStep),
    /// A convolution (`ops::conv`, see `exec::conv`).
    Conv(ConvStep),
}

impl HostStep {
    /// How many of the program's launches run before it.
    pub fn at(&self) -> usize {
        match self {
            HostStep::Loop(s) => s.at,
            HostStep::Cond(s) => s.at,
            HostStep::Pmap(s) => s.at,
            HostStep::Collective(s) => s.at,
            HostStep::Sort(s) => s.at,
            HostStep::Linalg(s) => s.at,
            HostStep::Conv(s) => s.at,
        }
    }

    /// The buffers of its operands.
    pub fn args(&self) -> &[usize] {
        match self {
            HostStep::Loop(s) => &s.args,
            HostStep::Cond(s) => &s.args,
            HostStep::Pmap(s) => &s.args,
            HostStep::Collective(s) => &s.args,
            HostStep::Sort(s) => &s.args,
            HostStep::Linalg(s) => &s.args,
            HostStep::Conv(s) => &s.args,
        }
    }

    /// Which of its values its results are, one per entry of `outs`.
    pub fn results(&self) -> &[usize] {
        match self {
            HostStep::Loop(s) => &s.results,
            HostStep::Cond(s) => &s.results,
            HostStep::Pmap(s) => &s.results,
            HostStep::Collective(s) => &s.results,
            HostStep::Sort(s) => &s.results,
            HostStep::Linalg(s) => &s.results,
            HostStep::Conv(s) => &s.results,
        }
    }

    /// The buffers it writes, one per entry of `results`.
    pub fn outs(&self) -> &[usize] {
        match self {
            HostStep::Loop(s) => &s.outs,
            HostStep::Cond(s) => &s.outs,
            HostStep::Pmap(s) => &s.outs,
            HostStep::Collective(s) => &s.outs,
            HostStep::Sort(s) => &s.outs,
            HostStep::Linalg(s) => &s.outs,
            HostStep::Conv(s) => &s.outs,
        }
    }

    /// Its nested programs: a loop's body, condition and backward body; a
    /// cond's then and else branches.
    pub fn programs(&self) -> impl Iterator<Item = &Nested> {
        let parts: [Option<&Nested>; 3] = match self {
            HostStep::Loop(s) => [
                Some(&s.body),
                s.cond.as_ref(),
                s.back.as_ref().map(|b| &b.0),
            ],
            HostStep::Cond(s) => [Some(&s.then), Some(&s.otherwise), None],
            HostStep::Pmap(s) => [Some(&s.body), None, None],
            HostStep::Collective(_)
            | HostStep::Sort(_)
            | HostStep::Linalg(_)
            | HostStep::Conv(_) => [None, None, None],
        };
        parts.into_iter().flatten()
    }

    /// "loop" or "cond", for messages.
    pub fn keyword(&self) -> &'static str {
        match self {
            HostStep::Loop(_) => "loop",
            HostStep::Cond(_) => "cond",
            HostStep::Pmap(_) => "pmap",
            HostStep::Collective(_) => "collective",
            HostStep::Sort(_) => "argsort",
            HostStep::Linalg(_) => "linalg",
            HostStep::Conv(_) => "conv",
        }
    }

    /// The function of its first program (a loop's body, a cond's then
    /// branch), which names the step in messages.
    pub fn name(&self) -> &str {
        match self {
            HostStep::Loop(s) => &s.body.program.function.name,
            HostStep::Cond(s) => &s.then.program.function.name,
            HostStep::Pmap(s) => &s.body.program.function.name,
            HostStep::Collective(s) => s.op.op_name(),
            HostStep::Sort(_) => "argsort",
            HostStep::Linalg(s) => s.op.name(),
            HostStep::Conv(_) => "conv",
        }
    }

    pub fn as_loop(&self) -> Option<&LoopStep> {
        match self {
            HostStep::Loop(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_cond(&self) -> Option<&CondStep> {
        match self {
            HostStep::Cond(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_loop_mut(&mut self) -> Option<&mut LoopStep> {
        match self {
            HostStep::Loop(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_cond_mut(&mut self) -> Option<&mut CondStep> {
        match self {
            HostStep::Cond(s) => Some(s),
            _ => None,
        }
    }
}

impl From<LoopStep> for HostStep {
    fn from(s: LoopStep) -> HostStep {
        HostStep::Loop(s)
    }
}

impl From<CondStep> for HostStep {
    fn from(s: CondStep) -> HostStep {
        HostStep::Cond(s)
    }
}

/// Runs a nested program's kernels, numbered in the enclosing program's list.
pub(super) struct Renumbered<'a> {
    pub(super) inner: &'a dyn Launcher,
    pub(super) kernels: &'a [usize],
}

impl Launcher for Renumbered<'_> {
    unsafe fn launch(&self, kernel: usize, args: &[*mut u8], sizes: &[i64]) {
        // SAFETY: `check_host_step` checked that the enclosing program's
        // kernel `kernels[kernel]` equals the nested program's kernel
        // `kernel`, so the caller's guarantee for the one is the guarantee
        // for the other.
        unsafe { self.inner.launch(self.kernels[kernel], args, sizes) }
    }
}

/// The dimensions `refs` under the bound sizes (rank checked by
/// `check_step_operands`).
pub(super) fn dims_under(refs: &[DimRef], bound: &[u64]) -> ArgDims {
    let mut d = [0usize; MAX_RANK];
    for (k, r) in refs.iter().enumerate().take(MAX_RANK) {
        d[k] = match *r {
            DimRef::Const(c) => c as usize,
            DimRef::Sym(s) => bound[s] as usize,
        };
    }
    ArgDims::new(&d[..refs.len().min(MAX_RANK)]).expect("rank")
}

impl Program {
    /// The types of the buffers `args` (a step's operands).
    pub(super) fn buffer_types(&self, what: &str, args: &[usize]) -> Result<Vec<Type>, String> {
        args.iter()
            .map(|b| {
                let info = self
                    .buffers
                    .get(*b)
                    .ok_or_else(|| format!("{what}: operand buffer {b} is missing"))?;
                Ok(Type::new(info.dtype, info.shape.clone()))
            })
            .collect()
    }

    /// Run the program in `scratch` (a nested program's own space, so a
    /// call from inside a host step never touches the enclosing call's).
    ///
    /// # Safety
    /// As for `execute_into_then`.
    pub(super) unsafe fn call_in<R>(
        &self,
        launcher: &dyn Launcher,
        args: &[RawArg],
        dests: &[Option<RawDest>],
        scratch: &mut Scratch,
        take: impl FnOnce(&mut [Buffer]) -> R,
    ) -> Result<R, String> {
        self.check_arg_types(args.iter().map(|a| a.dtype))?;
        // SAFETY: the caller's guarantee.
        let r = unsafe { self.execute_with(launcher, args, dests, scratch) }
            .map(|()| take(&mut scratch.results));
        scratch.recycle();
        r
    }

    /// Check each nested program of step `s` and the numbering of its kernels.
    fn check_nested(&self, what: &str, s: &HostStep) -> Result<(), String> {
        for n in s.programs() {
            n.program
                .check_schedule()
                .map_err(|e| format!("{what}: {e}"))?;
            if n.kernels.len() != n.program.kernels.len() {
                return Err(format!(
                    "{what}: a nested program's kernels are not all numbered"
                ));
            }
            for (k, outer) in n.program.kernels.iter().zip(&n.kernels) {
                if self.kernels.get(*outer) != Some(k) {
                    return Err(format!(
                        "{what}: nested kernel `{}` is not kernel {outer} of the program",
                        k.name
                    ));
                }
            }
        }
        Ok(())
    }

    /// Check host step `j` against the buffers written and read so far
    /// (see `check_schedule`), and its nested programs.
    pub(super) fn check_host_step(
        &self,
        j: usize,
        written: &mut [bool],
        read: &mut [bool],
    ) -> Result<(), String> {
        let s = &self.host_steps[j];
        let what = format!("{} step {j} (`{}`)", s.keyword(), s.name());
        self.check_nested(&what, s)?;
        match s {
            HostStep::Loop(l) => self.check_loop(&what, l, written, read),
            HostStep::Cond(c) => self.check_cond(&what, c, written, read),
            HostStep::Pmap(p) => self.check_pmap(&what, p, written, read),
            HostStep::Collective(c) => self.check_collective(&what, c, written, read),
            HostStep::Sort(s) => self.check_sort(&what, s, written, read),
            HostStep::Linalg(s) => self.check_linalg(&what, s, written, read),
            HostStep::Conv(s) => self.check_conv(&what, s, written, read),
        }
    }

    /// Check that a host step passes one operand of each type in `want`
    /// (the `step` — "loop" or "cond" — takes them) in the buffers `args`,
    /// each a buffer a parameter holds or an earlier launch or step wrote;
    /// mark them read.
    pub(super) fn check_step_operands(
        &self,
        what: &str,
        step: &str,
        args: &[usize],
        want: &[crate::ir::Type],
        written: &[bool],
        read: &mut [bool],
    ) -> Result<(), String> {
        if args.len() != want.len() {
            return Err(format!(
                "{what}: passes {} operands, the {step} takes {}",
                args.len(),
                want.len()
            ));
        }
        for (a, (b, t)) in args.iter().zip(want).enumerate() {
            let info = self
                .buffers
                .get(*b)
                .ok_or_else(|| format!("{what}: operand {a} is buffer {b}, which is missing"))?;
            if info.dtype != t.dtype || info.shape != t.shape {
                return Err(format!("{what}: operand {a} (buffer {b}) is not {t}"));
            }
            if info.shape.rank() > MAX_RANK {
                return Err(format!("{what}: operand {a} has more than {MAX_RANK} axes"));
            }
            if info.param.is_none() && !written[*b] {
                return Err(format!(
                    "{what}: reads buffer {b} before any launch writes it"
                ));
            }
            read[*b] = true;
        }
        Ok(())
    }

    /// Check that a host step with operands `args` writes each of its
    /// `results` (values of `types`) into the buffer of `outs` at the same
    /// index, of that result's type, that no parameter, launch or other
    /// step writes and that it does not also read; mark them written.
    pub(super) fn check_step_results(
        &self,
        what: &str,
        args: &[usize],
        results: &[usize],
        outs: &[usize],
        types: &[crate::ir::Type],
        written: &mut [bool],
    ) -> Result<(), String> {
        if outs.len() != results.len() {
            return Err(format!(
                "{what}: {} buffers for {} results",
                outs.len(),
                results.len()
            ));
        }
        for (r, b) in results.iter().zip(outs) {
            let t = types
                .get(*r)
                .ok_or_else(|| format!("{what}: result {r} names no value"))?;
            let info = self
                .buffers
                .get(*b)
                .ok_or_else(|| format!("{what}: writes buffer {b}, which is missing"))?;
            if info.dtype != t.dtype || info.shape != t.shape {
                return Err(format!(
                    "{what}: result {r} is {t}, buffer {b} is {}{}",
                    info.dtype, info.shape
                ));
            }
            if info.param.is_some() || written[*b] || args.contains(b) {
                return Err(format!(
                    "{what}: writes buffer {b}, which is a parameter, written elsewhere or also read by it"
                ));
            }
            written[*b] = true;
        }
        Ok(())
    }

    /// Run host step `j` of this program: `ops` are its operands (with
    /// their dimensions), `outs` the pointers and element counts of the
    /// buffers it writes; `nested` the scratch space of its programs
    /// (three per step).
    ///
    /// # Safety
    /// The program passed `check_schedule`; each operand pointer is valid
    /// for `len` reads, each output pointer for `len` writes, and no output
    /// overlaps an operand or another output; `launcher` runs this
    /// program's kernels by index.
    pub(super) unsafe fn run_host_step(
        &self,
        j: usize,
        launcher: &dyn Launcher,
        ops: &[RawArg],
        outs: &[(*mut u8, usize)],
        out_dims: &[ArgDims],
        nested: &mut [Scratch],
    ) -> Result<(), String> {
        // SAFETY: the caller's guarantee.
        match &self.host_steps[j] {
            HostStep::Loop(s) => unsafe { self.run_loop(j, s, launcher, ops, outs, nested) },
            HostStep::Cond(s) => unsafe { self.run_cond(s, launcher, ops, outs, nested) },
            HostStep::Pmap(s) => unsafe { self.run_pmap(s, launcher, ops, outs, nested) },
            HostStep::Collective(s) => unsafe { self.run_collective(s, ops, outs) },
            HostStep::Sort(s) => unsafe { self.run_sort(s, ops, outs) },
            HostStep::Linalg(s) => unsafe { self.run_linalg(s, ops, outs) },
            HostStep::Conv(s) => unsafe { self.run_conv(s, ops, outs, out_dims) },
        }
    }

    /// Host step `j`, for `text`: its line (kind, operands, results,
    /// buffers written) and its nested programs (body, cond and back of a
    /// loop; then and else of a cond), indented.
    pub(super) fn host_step_text(&self, j: usize, s: &mut String) {
        let step = &self.host_steps[j];
        let b = |v: &[usize]| {
            v.iter()
                .map(|b| format!("b{b}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (kind, parts): (String, [(&str, Option<&Nested>); 3]) = match step {
            HostStep::Loop(l) => (
                l.text_kind(),
                [
                    ("body", Some(&l.body)),
                    ("cond", l.cond.as_ref()),
                    ("back", l.back.as_ref().map(|b| &b.0)),
                ],
            ),
            HostStep::Cond(c) => (
                "cond".to_string(),
                [
                    ("then", Some(&c.then)),
                    ("else", Some(&c.otherwise)),
                    ("", None),
                ],
            ),
            HostStep::Pmap(p) => (
                format!("pmap[{}]", p.op.axis),
                [("body", Some(&p.body)), ("", None), ("", None)],
            ),
            HostStep::Collective(c) => (c.op.to_string(), [("", None), ("", None), ("", None)]),
            HostStep::Sort(s) => (s.text_kind(), [("", None), ("", None), ("", None)]),
            HostStep::Linalg(s) => (s.op.to_string(), [("", None), ("", None), ("", None)]),
            HostStep::Conv(s) => (s.text_kind(), [("", None), ("", None), ("", None)]),
        };
        let _ = writeln!(
            s,
            "{kind}({}) results {:?} -> {}",
            b(step.args()),
            step.results(),
            b(step.outs())
        );
        for (name, n) in parts {
            let Some(n) = n else { continue };
            let _ = writeln!(
                s,
                "  {name} `{}` (kernels {:?}):",
                n.program.function.name, n.kernels
            );
            let mut inner = String::new();
            n.program.schedule_text(&mut inner);
            for line in inner.lines() {
                let _ = writeln!(s, "    {line}");
            }
        }
    }
}

/// Copy each of `from` into the output of the same index.
///
/// # Safety
/// Each output pointer is valid for `len` writes of its buffer's type and
/// overlaps none of `from`.
pub(super) unsafe fn write_outs(from: &[&Buffer], outs: &[(*mut u8, usize)]) -> Result<(), String> {
    for (b, (ptr, len)) in from.iter().zip(outs) {
        if b.len() != *len {
            return Err(format!(
                "internal error: a loop result has {} elements, its buffer {len}",
                b.len()
            ));
        }
        // SAFETY: `b` holds `len` elements of the output's type
        // (`check_host_step` checked the dtypes), and the output overlaps
        // nothing of the step's.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), *ptr, len * b.dtype().size_bytes()) };
    }
    Ok(())
}

/// A copy of the operand's elements.
///
/// # Safety
/// `op.ptr` is valid for `op.len` reads of `op.dtype`.
pub(super) unsafe fn buffer_from(op: &RawArg) -> Buffer {
    let mut b = Buffer::zeros(op.dtype, op.len);
    // SAFETY: the caller's guarantee, and `b` holds `len` such elements.
    unsafe {
        std::ptr::copy_nonoverlapping(op.ptr, b.as_mut_ptr(), op.len * op.dtype.size_bytes())
    };
    b
}
