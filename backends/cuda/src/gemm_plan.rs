//! Matrix products as cuBLAS calls, worked out as data.
//!
//! A product kernel (`oxla_core::kernel::matmul`) at concrete sizes is a
//! row-major, strided `out[m, n] = Σ_k lhs[m, k] · rhs[k, n]` per loop
//! coordinate. cuBLAS multiplies column-major matrices: element `(i, j)` of
//! a matrix with leading dimension `ld` is at `i + j·ld`, and an operand may
//! be read transposed. [`plan`] maps the product onto
//! `cublasGemmStridedBatchedEx` calls:
//!
//! - The output is `C` itself when it has unit stride along `m`, or (the
//!   usual row-major case) `Cᵀ` when it has unit stride along `n`, computed
//!   as `Cᵀ = rhsᵀ · lhsᵀ`: the operands swap places.
//! - Each operand is read as stored (`N`, `ld` = its other stride) when it
//!   has unit stride along its row axis, or transposed (`T`) when it has
//!   unit stride along its column axis. An axis of extent 1 takes any stride.
//! - Axes that step like one are merged first (`MatmulShape::collapsed`:
//!   a batch of `[b, s, d]` rows times a `[d, e]` weight is one `(b·s) × d`
//!   product). The longest outer loop axis then becomes the call's batch (strides per
//!   batch may be 0: a broadcast operand); every other loop axis longer
//!   than 1 is a separate call, at most [`MAX_CALLS`] of them. Calls for a
//!   further contracted axis add into the output (`beta = 1`) after the
//!   first (`beta = 0`, so the output's prior contents are never read).
//!
//! A layout none of this expresses (no unit stride in either dimension of
//! an operand, a leading dimension smaller than cuBLAS allows, sizes beyond
//! `i32`) has no plan and stays on the PTX kernel. The plan is pure, so its
//! tests run without a GPU against a model of cuBLAS's definition.

use oxla_core::kernel::matmul::{MatmulKernel, MatmulShape};
use oxla_core::DType;

/// The most cuBLAS calls one product is split into; beyond, the PTX kernel.
pub const MAX_CALLS: usize = 64;

/// How cuBLAS reads a stored matrix: as it is, or transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transpose {
    N,
    T,
}

/// Which factor of the product a cuBLAS operand is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Factor {
    Lhs,
    Rhs,
}

/// One input matrix of a call: batch `b` of it starts at element
/// `offset + b · batch_stride` of the factor's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmOperand {
    pub factor: Factor,
    pub op: Transpose,
    pub offset: usize,
    pub ld: i32,
    pub batch_stride: i64,
}

/// One `cublasGemmStridedBatchedEx` call: for every `b < batch`,
/// `C_b = op(A_b) · op(B_b) + beta · C_b` with `op(A_b)` of `m × k`,
/// `op(B_b)` of `k × n` and `C_b` of `m × n` (column-major, `ldc`), where
/// `beta` is 1 when `accumulate` and 0 otherwise (then `C_b` is not read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmCall {
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub a: GemmOperand,
    pub b: GemmOperand,
    pub c_offset: usize,
    pub ldc: i32,
    pub c_batch_stride: i64,
    pub batch: i32,
    pub accumulate: bool,
}

/// The calls of one product, in order. No calls: the product has no terms
/// (or no elements), and its output is all zeros.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GemmPlan {
    pub calls: Vec<GemmCall>,
}

impl GemmCall {
    /// One past the last element of `factor` (`None`: the output) the call
    /// reads or writes; 0 when it touches none.
    pub fn reach(&self, factor: Option<Factor>) -> usize {
        let (m, n, k) = (self.m as usize, self.n as usize, self.k as usize);
        let batch = self.batch as usize;
        let matrix = |rows: usize, cols: usize, ld: i32, offset: usize, stride: i64| {
            if rows == 0 || cols == 0 || batch == 0 {
                return 0;
            }
            let last = (rows - 1) + (cols - 1) * ld as usize;
            offset + (batch - 1) * stride as usize + last + 1
        };
        let operand = |o: &GemmOperand, rows: usize, cols: usize| {
            let (r, c) = match o.op {
                Transpose::N => (rows, cols),
                Transpose::T => (cols, rows),
            };
            matrix(r, c, o.ld, o.offset, o.batch_stride)
        };
        match factor {
            None => matrix(m, n, self.ldc, self.c_offset, self.c_batch_stride),
            Some(f) => [(&self.a, m, k), (&self.b, k, n)]
                .into_iter()
                .filter(|(o, _, _)| o.factor == f)
                .map(|(o, r, c)| operand(o, r, c))
                .max()
                .unwrap_or(0),
        }
    }
}

impl GemmPlan {
    /// One past the last element of `factor` (`None`: the output) any call
    /// touches: the buffer lengths the plan needs.
    pub fn reach(&self, factor: Option<Factor>) -> usize {
        self.calls
            .iter()
            .map(|c| c.reach(factor))
            .max()
            .unwrap_or(0)
    }
}

/// How cuBLAS can read a `rows × cols` matrix whose elements are `sr` apart
/// along rows and `sc` apart along columns: `(op, ld)` with `op(stored)`
/// equal to the matrix, `stored` column-major with leading dimension `ld`.
fn column_major(rows: usize, cols: usize, sr: isize, sc: isize) -> Option<(Transpose, i32)> {
    let fits = |ld: isize, min: usize| -> Option<i32> {
        (ld >= min.max(1) as isize)
            .then_some(ld)
            .and_then(|ld| i32::try_from(ld).ok())
    };
    // As stored: (i, j) at i + j·ld.
    if rows <= 1 || sr == 1 {
        let ld = if cols <= 1 { rows.max(1) as isize } else { sc };
        if let Some(ld) = fits(ld, rows) {
            return Some((Transpose::N, ld));
        }
    }
    // Transposed: the stored cols × rows matrix has (j, i) at j + i·ld.
    if cols <= 1 || sc == 1 {
        let ld = if rows <= 1 { cols.max(1) as isize } else { sr };
        if let Some(ld) = fits(ld, cols) {
            return Some((Transpose::T, ld));
        }
    }
    None
}

/// What a launch of `product` at kernel sizes `sizes` runs as: cuBLAS
/// calls when the product, over its fewest axes
/// (`MatmulShape::collapsed`), suits a library
/// (`MatmulShape::suits_library`: not vector·vector, not too long a
/// contraction) and [`plan`] expresses it, else `None` (the PTX kernel).
/// A product of a half type is not split into calls that add into the
/// output, which would round each partial sum to the half type; its kernel
/// sums all terms in f32.
pub fn plan_launch(product: &MatmulKernel, sizes: &[i64]) -> Option<GemmPlan> {
    let shape = product.shape(sizes).collapsed();
    if !shape.suits_library() {
        return None;
    }
    let plan = plan(&shape)?;
    let half = matches!(product.dtype, DType::F16 | DType::BF16);
    if half && plan.calls.iter().any(|c| c.accumulate) {
        return None;
    }
    Some(plan)
}

/// The cuBLAS calls for product `s`, or `None` when cuBLAS cannot express
/// its layout (see the module docs).
pub fn plan(s: &MatmulShape) -> Option<GemmPlan> {
    let (m, n, k) = (s.m(), s.n(), s.k());
    if s.total() == 0 || s.count() == 0 || k == 0 {
        return Some(GemmPlan::default());
    }
    let along = MatmulShape::along;
    let (lm, lk) = (along(&s.lhs, s.m_axis), along(&s.lhs, s.k_axis));
    let (rk, rn) = (along(&s.rhs, s.k_axis), along(&s.rhs, s.n_axis));
    let (om, on) = (along(&s.out, s.m_axis), along(&s.out, s.n_axis));

    // The batch: the longest outer loop axis (the innermost on ties).
    let batch_axis = s
        .loops
        .iter()
        .copied()
        .filter(|a| *a < s.outer && s.extents[*a] > 1)
        .max_by_key(|a| (s.extents[*a], *a));
    let batch = batch_axis.map_or(1, |a| s.extents[a]);
    let batch_stride = |st: &[isize]| batch_axis.map_or(0, |a| st[a]) as i64;
    let (lb, rb, ob) = (
        batch_stride(&s.lhs),
        batch_stride(&s.rhs),
        batch_stride(&s.out),
    );

    // `Cᵀ = rhsᵀ · lhsᵀ` for an output with unit stride along n, else
    // `C = lhs · rhs`. Each side: (rows, cols, row stride, col stride).
    let lhs_m = (m, k, lm, lk);
    let rhs_m = (k, n, rk, rn);
    let transposed = |(r, c, sr, sc): (usize, usize, isize, isize)| (c, r, sc, sr);
    let orientations = [
        (
            n,
            m,
            on,
            om,
            transposed(rhs_m),
            Factor::Rhs,
            transposed(lhs_m),
            Factor::Lhs,
        ),
        (m, n, om, on, lhs_m, Factor::Lhs, rhs_m, Factor::Rhs),
    ];
    let (cm, cn, ldc, a, a_factor, b, b_factor) =
        orientations
            .into_iter()
            .find_map(|(cm, cn, sr, sc, a, fa, b, fb)| {
                let (Transpose::N, ldc) = column_major(cm, cn, sr, sc)? else {
                    return None;
                };
                let a = column_major(a.0, a.1, a.2, a.3)?;
                let b = column_major(b.0, b.1, b.2, b.3)?;
                Some((cm, cn, ldc, a, fa, b, fb))
            })?;
    let int = |v: usize| i32::try_from(v).ok();
    let (cm, cn, ck, batch) = (int(cm)?, int(cn)?, int(k)?, int(batch)?);

    // Every other loop axis of extent > 1 is a call of its own.
    let calls_over: Vec<usize> = s
        .loops
        .iter()
        .copied()
        .filter(|a| Some(*a) != batch_axis && s.extents[*a] > 1)
        .collect();
    let count: usize = calls_over.iter().map(|a| s.extents[*a]).product();
    if count > MAX_CALLS {
        return None;
    }
    let stride_of = |f: Factor| match f {
        Factor::Lhs => (&s.lhs, lb),
        Factor::Rhs => (&s.rhs, rb),
    };
    let mut calls = Vec::with_capacity(count);
    let mut coord = vec![0usize; calls_over.len()];
    for _ in 0..count {
        let offset = |st: &[isize]| -> usize {
            calls_over
                .iter()
                .zip(&coord)
                .map(|(a, c)| st[*a] as usize * c)
                .sum()
        };
        let operand = |f: Factor, (op, ld): (Transpose, i32)| {
            let (st, batch_stride) = stride_of(f);
            GemmOperand {
                factor: f,
                op,
                offset: offset(st),
                ld,
                batch_stride,
            }
        };
        // A later coordinate along a contracted axis adds to the output.
        let accumulate = calls_over
            .iter()
            .zip(&coord)
            .any(|(a, c)| *a >= s.outer && *c > 0);
        calls.push(GemmCall {
            m: cm,
            n: cn,
            k: ck,
            a: operand(a_factor, a),
            b: operand(b_factor, b),
            c_offset: offset(&s.out),
            ldc,
            c_batch_stride: ob,
            batch,
            accumulate,
        });
        for (c, a) in coord.iter_mut().zip(&calls_over).rev() {
            *c += 1;
            if *c < s.extents[*a] {
                break;
            }
            *c = 0;
        }
    }
    Some(GemmPlan { calls })
}
