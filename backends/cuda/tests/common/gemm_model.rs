//! cuBLAS's `gemmStridedBatched`, as its documentation defines it, in plain
//! Rust: column-major matrices, element `(i, j)` at `i + j·ld`; for each
//! batch `b`, `C_b[i + j·ldc] = Σ_p op(A_b)[i, p] · op(B_b)[p, j]
//! (+ C_b[i + j·ldc] when beta = 1)`, where `op(X)[r, c]` is `X[r + c·ld]`
//! for `N` and `X[c + r·ld]` for `T`. It also checks the argument rules
//! cuBLAS states (leading dimensions at least the stored matrix's rows) and
//! what the library assumes (every element in its buffer, no output
//! element written twice by one call), returning an error where the real
//! call would fail or race.

use oxla_core::Buffer;
use oxla_cuda::gemm_plan::{Factor, GemmCall, GemmPlan, Transpose};
use std::collections::HashSet;

fn read(buf: &Buffer, i: usize, what: &str) -> Result<f64, String> {
    if i < buf.len() {
        Ok(buf.get(i))
    } else {
        Err(format!(
            "{what}: element {i} is outside its {} elements",
            buf.len()
        ))
    }
}

/// Run one call on host buffers (`out` rounds to its dtype at each store,
/// as cuBLAS writes C in its type).
pub fn run_call(c: &GemmCall, lhs: &Buffer, rhs: &Buffer, out: &mut Buffer) -> Result<(), String> {
    if c.m < 0 || c.n < 0 || c.k < 0 || c.batch < 0 {
        return Err(format!("negative size in {c:?}"));
    }
    let (m, n, k) = (c.m as usize, c.n as usize, c.k as usize);
    let stored_rows = |t: Transpose, rows: usize, cols: usize| match t {
        Transpose::N => rows,
        Transpose::T => cols,
    };
    if (c.a.ld as usize) < stored_rows(c.a.op, m, k).max(1)
        || (c.b.ld as usize) < stored_rows(c.b.op, k, n).max(1)
        || (c.ldc as usize) < m.max(1)
    {
        return Err(format!(
            "a leading dimension below cuBLAS's minimum in {c:?}"
        ));
    }
    let buf = |f: Factor| match f {
        Factor::Lhs => lhs,
        Factor::Rhs => rhs,
    };
    let element = |x: &oxla_cuda::gemm_plan::GemmOperand, b: usize, r: usize, col: usize| {
        let base = x.offset as i64 + b as i64 * x.batch_stride;
        let at = match x.op {
            Transpose::N => r + col * x.ld as usize,
            Transpose::T => col + r * x.ld as usize,
        };
        read(buf(x.factor), (base + at as i64) as usize, "operand")
    };
    let mut written = HashSet::new();
    for b in 0..c.batch as usize {
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0.0;
                for p in 0..k {
                    acc += element(&c.a, b, i, p)? * element(&c.b, b, p, j)?;
                }
                let at = (c.c_offset as i64 + b as i64 * c.c_batch_stride) as usize
                    + i
                    + j * c.ldc as usize;
                if !written.insert(at) {
                    return Err(format!("output element {at} written twice by {c:?}"));
                }
                // With beta = 0 cuBLAS does not read C (it may hold NaN).
                let prior = if c.accumulate {
                    read(out, at, "output")?
                } else {
                    0.0
                };
                read(out, at, "output")?;
                out.set(at, prior + acc);
            }
        }
    }
    Ok(())
}

/// Run a plan's calls in order; no calls: the output is zeroed (what the
/// executor does for a product with no terms).
pub fn run_plan(
    plan: &GemmPlan,
    lhs: &Buffer,
    rhs: &Buffer,
    out: &mut Buffer,
) -> Result<(), String> {
    if plan.calls.is_empty() {
        for i in 0..out.len() {
            out.set(i, 0.0);
        }
    }
    for c in &plan.calls {
        run_call(c, lhs, rhs, out)?;
    }
    Ok(())
}
