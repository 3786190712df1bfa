//! Cond steps of a program's schedule, run on the host like loop steps
//! (`exec::loops`): the two branches of an `ops::control::Cond` are each a
//! `Program` of their own (`CondStep::then` for a true predicate,
//! `CondStep::otherwise` for a false one), whose kernels live in the
//! top-level program's one kernel list. The step reads the predicate (a
//! bool scalar buffer), runs the taken branch's program on the constants
//! and copies its results into the outer program's buffers; the other
//! branch does not run.

use super::host_step::{write_outs, Nested, Renumbered};
use super::{Launcher, Program, RawArg, Scratch};
use crate::buffer::Buffer;
use crate::dtype::DType;
use crate::ir::Type;

/// A cond step of the schedule (`HostStep::Cond`): `if pred { then(consts) }
/// else { otherwise(consts) }`.
#[derive(Clone, Debug)]
pub struct CondStep {
    /// How many of the program's launches run before it.
    pub at: usize,
    /// The program run when the predicate is true (params: the constants;
    /// results: the branch's values).
    pub then: Nested,
    /// The program run when the predicate is false (the same params and
    /// results as `then`).
    pub otherwise: Nested,
    /// Which of the branch's values the step's results are.
    pub results: Vec<usize>,
    /// The buffers of the operands: the bool predicate, then the constants.
    pub args: Vec<usize>,
    /// The buffers the step writes, one per entry of `results`.
    pub outs: Vec<usize>,
}

impl Program {
    /// Check cond step `s` (`what` in errors; see `check_host_step`): the
    /// operands are the bool predicate and the branches' constants, the
    /// results the branches'.
    pub(super) fn check_cond(
        &self,
        what: &str,
        s: &CondStep,
        written: &mut [bool],
        read: &mut [bool],
    ) -> Result<(), String> {
        let (t, e) = (&s.then.program.function, &s.otherwise.program.function);
        let params = |f: &crate::ir::Function| -> Vec<Type> {
            f.params.iter().map(|p| f.ty(*p).clone()).collect()
        };
        let results = |f: &crate::ir::Function| -> Vec<Type> {
            f.outs.iter().map(|o| f.ty(*o).clone()).collect()
        };
        if params(t) != params(e) || results(t) != results(e) {
            return Err(format!("{what}: the branches take or give different types"));
        }
        let mut want = vec![Type::scalar(DType::Bool)];
        want.extend(params(t));
        self.check_step_operands(what, "cond", &s.args, &want, written, read)?;
        let types = results(t);
        self.check_step_results(what, &s.args, &s.results, &s.outs, &types, written)
    }

    /// Run cond step `s`: the taken branch only (see `run_host_step`).
    ///
    /// # Safety
    /// As for `run_host_step`.
    pub(super) unsafe fn run_cond(
        &self,
        s: &CondStep,
        launcher: &dyn Launcher,
        ops: &[RawArg],
        outs: &[(*mut u8, usize)],
        nested: &mut [Scratch],
    ) -> Result<(), String> {
        let [then_space, else_space, _] = nested else {
            unreachable!("three scratch spaces per host step")
        };
        // SAFETY: the predicate is a bool scalar (`check_cond`; its element
        // count was checked against the shape by the caller).
        let holds = unsafe { std::ptr::read(ops[0].ptr) } != 0;
        let (branch, space) = match holds {
            true => (&s.then, then_space),
            false => (&s.otherwise, else_space),
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
