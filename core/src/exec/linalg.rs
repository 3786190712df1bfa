//! The linear algebra step of the schedule (`ops::linalg`): the host
//! factors or solves the operands' matrices with the interpreter's own
//! routines (`ops::linalg::dense`) and writes the result.

use super::host_step::buffer_from;
use super::{Program, RawArg};
use crate::buffer::Buffer;
use crate::ops::linalg::LinalgOp;
use crate::shape::Dim;
use crate::tensor::Tensor;

/// A linear algebra step (`HostStep::Linalg`).
#[derive(Clone, Debug)]
pub struct LinalgStep {
    pub at: usize,
    pub op: LinalgOp,
    /// Its operands' buffers.
    pub args: Vec<usize>,
    /// `[0]`: its one result.
    pub results: Vec<usize>,
    /// The buffer it writes.
    pub outs: Vec<usize>,
}

impl Program {
    /// Check linalg step `s` (see `check_host_step`): operands whose
    /// result type is its result buffer's.
    pub(super) fn check_linalg(
        &self,
        what: &str,
        s: &LinalgStep,
        written: &mut [bool],
        read: &mut [bool],
    ) -> Result<(), String> {
        let types = self.buffer_types(what, &s.args)?;
        if types.len() != s.op.arity() {
            return Err(format!(
                "{what}: {} operands, {} takes {}",
                types.len(),
                s.op,
                s.op.arity()
            ));
        }
        let refs: Vec<_> = types.iter().collect();
        let out = s.op.infer(&refs).map_err(|e| format!("{what}: {e}"))?;
        self.check_step_operands(what, s.op.name(), &s.args, &types, written, read)?;
        self.check_step_results(what, &s.args, &s.results, &s.outs, &[out], written)
    }

    /// The dimensions of operand `k` of step `s`: those passed with it, or
    /// its buffer's shape where that is all constants, or (a flat square
    /// matrix) the square root of its length.
    fn linalg_dims(&self, s: &LinalgStep, k: usize, op: &RawArg) -> Result<Vec<usize>, String> {
        if let Some(d) = op.dims.get() {
            return Ok(d.to_vec());
        }
        let shape = &self.buffers[s.args[k]].shape.0;
        let consts: Option<Vec<usize>> = shape
            .iter()
            .map(|d| match d {
                Dim::Const(c) => Some(*c as usize),
                _ => None,
            })
            .collect();
        if let Some(d) = consts {
            return Ok(d);
        }
        let n = (op.len as f64).sqrt().round() as usize;
        if k == 0 && shape.len() == 2 && n * n == op.len {
            return Ok(vec![n, n]);
        }
        Err(format!(
            "{}: operand {k}'s dimensions are unknown (a flat buffer of {} elements)",
            s.op, op.len
        ))
    }

    /// Run linalg step `s`.
    ///
    /// # Safety
    /// As for `run_host_step`.
    pub(super) unsafe fn run_linalg(
        &self,
        s: &LinalgStep,
        ops: &[RawArg],
        outs: &[(*mut u8, usize)],
    ) -> Result<(), String> {
        let mut ins = Vec::with_capacity(ops.len());
        for (k, op) in ops.iter().enumerate() {
            let dims = self.linalg_dims(s, k, op)?;
            if dims.iter().product::<usize>() != op.len {
                return Err(format!(
                    "{}: operand {k} of dimensions {dims:?} holds {} elements",
                    s.op, op.len
                ));
            }
            // SAFETY: the operand points to `len` live elements of its
            // dtype (the caller's guarantee).
            let b = unsafe { buffer_from(op) };
            ins.push(Tensor::from_buffer(dims, &b));
        }
        let types: Vec<_> = ins.iter().map(tensor_type).collect();
        let refs: Vec<_> = types.iter().collect();
        s.op.infer(&refs).map_err(|e| format!("at run time, {e}"))?;
        let refs: Vec<&Tensor> = ins.iter().collect();
        let result: Buffer = s.op.eval(&refs).to_buffer();
        let (out, out_len) = outs[0];
        if out_len != result.len() {
            return Err(format!(
                "{} writes {out_len} elements, its operands give {}",
                s.op,
                result.len()
            ));
        }
        // SAFETY: the output holds `out_len == result.len()` elements of
        // the result's dtype (checked by `check_linalg`: the operand's),
        // and overlaps no operand.
        unsafe {
            std::ptr::copy_nonoverlapping(
                result.as_ptr(),
                out,
                out_len * result.dtype().size_bytes(),
            )
        };
        Ok(())
    }
}

/// A tensor's concrete type (for the run-time shape check).
fn tensor_type(t: &Tensor) -> crate::ir::Type {
    let dims = t.shape.iter().map(|d| Dim::Const(*d as u64)).collect();
    crate::ir::Type::new(t.dtype, crate::shape::Shape(dims))
}
