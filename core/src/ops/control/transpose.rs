//! The transpose rule of a tangent loop: its reverse sweep.

use super::looping::Loop;
use super::reverse::reverse_sweep;
use crate::ir::{Function, Var};
use crate::ops::Op;

/// For the tangent loop `l`: the positions of the operands of its primal
/// loop (which its transpose `transpose_reverse` takes, before the
/// cotangents), and of its tangent operands, in the order of that
/// transpose's results.
fn reverse_positions(l: &Loop) -> (Vec<usize>, Vec<usize>) {
    let t = l.tangent_of.as_ref().expect("a tangent loop");
    let (nb, pk, pc) = (l.n_bounds(), t.primal.n_consts, t.primal.n_carries());
    let nk = l.n_consts;
    let primal = (0..nb + pk).chain(nb + nk..nb + nk + pc).collect();
    let tangents = (nb + pk..nb + nk)
        .chain(nb + nk + pc..l.n_operands())
        .collect();
    (primal, tangents)
}

/// Transpose rule of a tangent loop (`known`, `cts`: as `Op::transpose`
/// takes them): its reverse sweep, for the tangent carries and constants a
/// cotangent reaches only. The others' cotangents are symbolic zeros
/// (`Loop::cotangent_reach`).
pub(crate) fn loop_transpose(
    g: &mut Function,
    l: &Loop,
    known: &[Option<Var>],
    cts: &[Option<Var>],
) -> Vec<Option<Var>> {
    let t = l
        .tangent_of
        .as_ref()
        .expect("internal error: a linear loop is a tangent loop");
    let live: Vec<bool> = cts.iter().map(Option::is_some).collect();
    let (const_on, carry_on) = l.cotangent_reach(&live);
    let consts: Vec<usize> = (0..t.consts.len())
        .filter(|q| const_on[*q])
        .map(|q| t.consts[q])
        .collect();
    let carries: Vec<usize> = (0..t.carries.len())
        .filter(|q| carry_on[*q])
        .map(|q| t.carries[q])
        .collect();
    // The cotangent of each kept tangent carry after the loop (zero for one
    // reached only through the body).
    let pc = t.primal.n_carries();
    let seeds: Vec<Var> = (0..t.carries.len())
        .filter(|q| carry_on[*q])
        .map(|q| {
            let r = l.results.iter().position(|r| *r == pc + q);
            match r.and_then(|r| cts[r]) {
                Some(c) => c,
                None => {
                    let ty = l.carry_type(pc + q);
                    g.full(0.0, ty.dtype, &ty.shape)
                }
            }
        })
        .collect();
    let (primal_at, tangent_at) = reverse_positions(l);
    let mut ins: Vec<Var> = primal_at
        .iter()
        .map(|k| known[*k].expect("internal error: a loop's primal operand"))
        .collect();
    ins.extend(seeds);
    let sweep = reverse_sweep(&t.primal, &consts, &carries);
    let back = g
        .push_all(Op::LoopReverse(Box::new(sweep)), &ins)
        .expect("internal error: transposing a loop");
    let mut out = vec![None; known.len()];
    let reached = tangent_at
        .iter()
        .zip(const_on.iter().chain(&carry_on))
        .filter(|(_, on)| **on);
    for ((k, _), c) in reached.zip(back) {
        out[*k] = Some(c);
    }
    out
}
