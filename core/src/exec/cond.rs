//! Cond steps of a program's schedule, run on the host like loop steps
//! (`exec::loops`): the two branches of an `ops::control::Cond` are each a
//! `Program` of their own (`LoopStep::body` for a true predicate,
//! `LoopStep::otherwise` for a false one), whose kernels live in the
//! top-level program's one kernel list. The step reads the predicate (a
//! bool scalar buffer), runs the taken branch's program on the constants
//! and copies its results into the outer program's buffers; the other
//! branch does not run.

use super::loops::{write_outs, Renumbered};
use super::{Launcher, Program, RawArg, Scratch};
use crate::buffer::Buffer;
use crate::dtype::DType;
use crate::ir::Type;

impl Program {
    /// Check cond step `j` (see `check_loop`): the operands are the bool
    /// predicate and the branches' constants, the results the branches'.
    pub(super) fn check_cond(
        &self,
        j: usize,
        written: &mut [bool],
        read: &mut [bool],
    ) -> Result<(), String> {
        let s = &self.loops[j];
        let what = format!("cond step {j} (`{}`)", s.body.program.function.name);
        let otherwise = s.otherwise.as_ref().expect("a cond step");
        let (t, e) = (&s.body.program.function, &otherwise.program.function);
        let params = |f: &crate::ir::Function| -> Vec<Type> {
            f.params.iter().map(|p| f.ty(*p).clone()).collect()
        };
        let results = |f: &crate::ir::Function| -> Vec<Type> {
            f.outs.iter().map(|o| f.ty(*o).clone()).collect()
        };
        if params(t) != params(e) || results(t) != results(e) {
            return Err(format!("{what}: the branches take or give different types"));
        }
        if s.cond.is_some() || s.back.is_some() || s.n_consts != t.params.len() {
            return Err(format!("{what}: not a cond"));
        }
        let mut want = vec![Type::scalar(DType::Bool)];
        want.extend(params(t));
        self.check_step_operands(&what, "cond", s, &want, written, read)?;
        let types = results(t);
        self.check_step_results(&what, s, &types, written)
    }

    /// Run cond step `j`: the taken branch only (see `run_loop`).
    ///
    /// # Safety
    /// As for `run_loop`.
    pub(super) unsafe fn run_cond(
        &self,
        j: usize,
        launcher: &dyn Launcher,
        ops: &[RawArg],
        outs: &[(*mut u8, usize)],
        nested: &mut [Scratch],
    ) -> Result<(), String> {
        let s = &self.loops[j];
        let [then_space, else_space, _] = nested else {
            unreachable!("three scratch spaces per host step")
        };
        // SAFETY: the predicate is a bool scalar (`check_cond`; its element
        // count was checked against the shape by the caller).
        let holds = unsafe { std::ptr::read(ops[0].ptr) } != 0;
        let (branch, space) = match (holds, &s.otherwise) {
            (true, _) => (&s.body, then_space),
            (false, Some(o)) => (o, else_space),
            (false, None) => unreachable!("a cond step"),
        };
        let renumbered = Renumbered {
            inner: launcher,
            kernels: &branch.kernels,
        };
        // SAFETY: the constants point into live buffers of their stated
        // lengths (the caller's guarantee); the results are copied out of
        // the branch's own buffers into outputs that overlap nothing of
        // the step's (`check_schedule`).
        unsafe {
            branch
                .program
                .call_in(&renumbered, &ops[1..], &[], space, |res| {
                    let picked: Vec<&Buffer> = s.results.iter().map(|k| &res[*k]).collect();
                    write_outs(&picked, outs)
                })?
        }
    }
}
