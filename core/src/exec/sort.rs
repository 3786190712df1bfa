//! The argsort step of the schedule (`ops::sort`): the host sorts the lanes
//! of the operand's buffer and writes the permutation.

use super::host_step::buffer_from;
use super::{Program, RawArg};
use crate::ops::sort::{argsort_buffer, argsort_infer, keep_first, INDEX};

/// An argsort step (`HostStep::Sort`).
#[derive(Clone, Debug)]
pub struct SortStep {
    pub at: usize,
    pub axis: usize,
    pub descending: bool,
    /// Keep the first `k` of each sorted lane (`top_k`).
    pub k: Option<u64>,
    /// Its operand's buffer.
    pub args: Vec<usize>,
    /// `[0]`: its one result.
    pub results: Vec<usize>,
    /// The buffer it writes.
    pub outs: Vec<usize>,
}

impl SortStep {
    pub fn text_kind(&self) -> String {
        let dir = if self.descending { "desc" } else { "asc" };
        match self.k {
            Some(k) => format!("argsort[{},{dir},{k}]", self.axis),
            None => format!("argsort[{},{dir}]", self.axis),
        }
    }
}

impl Program {
    /// Check sort step `s` (see `check_host_step`): one operand, whose
    /// argsort's type is its result buffer's.
    pub(super) fn check_sort(
        &self,
        what: &str,
        s: &SortStep,
        written: &mut [bool],
        read: &mut [bool],
    ) -> Result<(), String> {
        let types = self.buffer_types(what, &s.args)?;
        let [t] = &types[..] else {
            return Err(format!("{what}: {} operands, argsort takes 1", types.len()));
        };
        let out = argsort_infer(t, s.axis, s.k).map_err(|e| format!("{what}: {e}"))?;
        self.check_step_operands(what, "argsort", &s.args, &types, written, read)?;
        self.check_step_results(what, &s.args, &s.results, &s.outs, &[out], written)
    }

    /// Run sort step `s`.
    ///
    /// # Safety
    /// As for `run_host_step`.
    pub(super) unsafe fn run_sort(
        &self,
        s: &SortStep,
        ops: &[RawArg],
        outs: &[(*mut u8, usize)],
    ) -> Result<(), String> {
        let op = &ops[0];
        let dims = op
            .dims
            .get()
            .map_or_else(|| vec![op.len], <[usize]>::to_vec);
        if dims.len() <= s.axis || dims.iter().product::<usize>() != op.len {
            return Err(format!(
                "argsort along axis {} of an operand of dimensions {dims:?} ({} elements)",
                s.axis, op.len
            ));
        }
        // SAFETY: the operand points to `len` live elements of its dtype
        // (the caller's guarantee).
        let x = unsafe { buffer_from(op) };
        let idx = argsort_buffer(&x, &dims, s.axis, s.descending);
        let idx = keep_first(idx, &dims, s.axis, s.k)?;
        let (out, out_len) = outs[0];
        if out_len != idx.len() {
            return Err(format!(
                "argsort writes {out_len} indices, the operand's lanes give {}",
                idx.len()
            ));
        }
        debug_assert_eq!(INDEX.size_bytes(), std::mem::size_of::<i64>());
        // SAFETY: the output holds `out_len == idx.len()` elements of the
        // result's dtype (`i64`, checked by `check_sort`), and overlaps no
        // operand.
        unsafe {
            std::ptr::copy_nonoverlapping(
                idx.as_ptr().cast::<u8>(),
                out,
                idx.len() * std::mem::size_of::<i64>(),
            )
        };
        Ok(())
    }
}
