//! The kernel interpreter: the oracle every backend is checked against.
//!
//! It runs the loop nest exactly as the kernel IR defines it, in sequential
//! order, rounding every value to its type after each instruction, and
//! summing reductions pairwise in the value's type (`PairwiseSum`); max and
//! min fold from -inf / +inf in iteration order (`Reduce::combine`), and
//! products multiply in that order, rounding each step. A scan kernel runs
//! each line along its axis in the scan's order, carrying the state.

use super::{InstKind, Kernel, PairwiseSum, Reduce, Scan};
use crate::buffer::{read_raw, write_raw, Buffer};

/// Run `kernel` on host buffers (inputs then outputs, in `args` order).
///
/// Checks every precondition of `run_raw`: arity, element types, and that
/// every buffer holds the elements the kernel reads or writes.
pub fn run(kernel: &Kernel, bufs: &mut [Buffer], sizes: &[i64]) -> Result<(), String> {
    check_args(kernel, bufs, sizes)?;
    let ptrs: Vec<*mut u8> = bufs.iter_mut().map(|b| b.as_mut_ptr()).collect();
    // SAFETY: `check_args` verified arity, dtypes and lengths of every buffer.
    unsafe { run_raw(kernel, &ptrs, sizes) };
    Ok(())
}

/// Check that `bufs` and `sizes` satisfy the kernel's calling convention.
pub fn check_args(kernel: &Kernel, bufs: &[Buffer], sizes: &[i64]) -> Result<(), String> {
    kernel.check_call(bufs.iter().map(|b| (b.dtype(), b.len())), sizes)
}

/// Run `kernel` on raw pointers.
///
/// # Safety
/// `args[i]` must point to a buffer of `kernel.args[i].dtype` holding at least
/// `kernel.input_extent(i)` (inputs) or `kernel.output_len()` (outputs)
/// elements; outputs must not alias inputs or each other.
pub unsafe fn run_raw(kernel: &Kernel, args: &[*mut u8], sizes: &[i64]) {
    let extents: Vec<usize> = kernel
        .domain
        .iter()
        .map(|d| kernel.eval_size(d, sizes) as usize)
        .collect();
    let strides: Vec<Vec<usize>> = kernel
        .insts
        .iter()
        .map(|inst| match &inst.kind {
            InstKind::Load { strides, .. } | InstKind::LoadIndexed { strides, .. } => strides
                .iter()
                .map(|s| kernel.eval_size(s, sizes) as usize)
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    let offsets: Vec<usize> = kernel
        .insts
        .iter()
        .map(|inst| match &inst.kind {
            InstKind::Load { offset, .. } | InstKind::LoadIndexed { offset, .. } => {
                kernel.eval_offset(offset, sizes) as usize
            }
            _ => 0,
        })
        .collect();
    // A region store: its offset and strides; else the row-major position.
    let region = kernel.region().map(|r| {
        let strides: Vec<usize> = r
            .strides
            .iter()
            .map(|s| kernel.eval_size(s, sizes) as usize)
            .collect();
        (kernel.eval_offset(&r.offset, sizes) as usize, strides)
    });
    // Per indexed load, and for a scatter store: (stride, bound).
    let indexed = |stride: &crate::shape::Size, bound: &crate::shape::Size| {
        (
            kernel.eval_size(stride, sizes) as usize,
            kernel.eval_size(bound, sizes),
        )
    };
    // Each indexed load's (stride, bound).
    let gathers: Vec<(usize, u64)> = kernel
        .insts
        .iter()
        .map(|inst| match &inst.kind {
            InstKind::LoadIndexed { stride, bound, .. } => indexed(stride, bound),
            _ => (0, 0),
        })
        .collect();
    let scatter = kernel
        .region()
        .and_then(|r| r.scatter.as_ref())
        .map(|sc| (sc.index, indexed(&sc.stride, &sc.bound)));
    let outer = kernel.outer_dims();
    let n_outer: usize = extents[..outer].iter().product();
    let n_inner: usize = extents[outer..].iter().product();
    let sizes_f: Vec<f64> = kernel
        .insts
        .iter()
        .map(|inst| match &inst.kind {
            InstKind::Size(s) => inst.ty.round(kernel.eval_size(s, sizes) as f64),
            _ => 0.0,
        })
        .collect();
    let mut coord = vec![0usize; extents.len()];
    let mut vals = vec![0f64; kernel.insts.len()];
    let at = Iteration {
        kernel,
        args,
        strides: &strides,
        offsets: &offsets,
        sizes_f: &sizes_f,
        gathers: &gathers,
    };
    if let Some(scan) = kernel.scan {
        return at.scan(scan, &extents, &mut coord, &mut vals);
    }
    for o in 0..n_outer {
        let mut sums = vec![PairwiseSum::new(); kernel.stores.len()];
        let mut chosen = vec![kernel.reduce.identity(); kernel.stores.len()];
        for r in 0..n_inner {
            // Decode the row-major coordinate of iteration (o, r).
            let mut rem = o * n_inner + r;
            for k in (0..extents.len()).rev() {
                coord[k] = rem % extents[k];
                rem /= extents[k];
            }
            // SAFETY: the caller's contract (buffers hold what the loads read).
            unsafe { at.eval(&coord, 0.0, &mut vals) };
            for (s, st) in kernel.stores.iter().enumerate() {
                if kernel.is_reduction() {
                    let ty = kernel.insts[st.value].ty;
                    match kernel.reduce {
                        Reduce::Sum => sums[s].push(vals[st.value], |v| ty.round(v)),
                        r => chosen[s] = ty.round(r.combine(chosen[s], vals[st.value])),
                    }
                } else {
                    let at = match &region {
                        None => o * n_inner + r,
                        Some((offset, strides)) => {
                            offset + coord.iter().zip(strides).map(|(c, s)| c * s).sum::<usize>()
                        }
                    };
                    let dtype = kernel.args[st.arg].dtype;
                    match scatter {
                        None => write_raw(args[st.arg], dtype, at, vals[st.value]),
                        Some((index, (stride, bound))) => {
                            if let Some(p) = pick(vals[index], bound) {
                                let at = at + p * stride;
                                let sum = read_raw(args[st.arg], dtype, at) + vals[st.value];
                                write_raw(args[st.arg], dtype, at, dtype.compute_type().round(sum));
                            }
                        }
                    }
                }
            }
        }
        if kernel.is_reduction() {
            for (s, st) in kernel.stores.iter().enumerate() {
                let ty = kernel.insts[st.value].ty;
                let total = match kernel.reduce {
                    Reduce::Sum => sums[s].total(|v| ty.round(v)),
                    _ => chosen[s],
                };
                write_raw(args[st.arg], kernel.args[st.arg].dtype, o, total);
            }
        }
    }
}

/// What evaluating one iteration needs.
struct Iteration<'a> {
    kernel: &'a Kernel,
    args: &'a [*mut u8],
    strides: &'a [Vec<usize>],
    offsets: &'a [usize],
    sizes_f: &'a [f64],
    /// Each indexed load's (stride, bound).
    gathers: &'a [(usize, u64)],
}

/// The element index `i` picks along an axis of `bound` elements: wrapped
/// once if negative, then clamped into the axis (`ops::gather::clamp_index`);
/// `None` for an empty axis.
fn pick(i: f64, bound: u64) -> Option<usize> {
    crate::ops::gather::clamp_index(i, bound)
}

impl Iteration<'_> {
    /// Every instruction at `coord`, with the scan state `carry`.
    ///
    /// # Safety
    /// As `run_raw`, and `coord` inside the domain.
    unsafe fn eval(&self, coord: &[usize], carry: f64, vals: &mut [f64]) {
        let k = self.kernel;
        for (i, inst) in k.insts.iter().enumerate() {
            let v = match &inst.kind {
                InstKind::Load { arg, .. } => {
                    let idx: usize = self.offsets[i]
                        + coord
                            .iter()
                            .zip(&self.strides[i])
                            .map(|(c, s)| c * s)
                            .sum::<usize>();
                    read_raw(self.args[*arg], k.args[*arg].dtype, idx)
                }
                InstKind::Const(c) => *c,
                InstKind::Unary(op, a) => op.eval(vals[*a]),
                InstKind::Binary(op, a, b) => op.eval(vals[*a], vals[*b]),
                InstKind::Cmp(op, a, b) => op.eval(vals[*a], vals[*b]) as u8 as f64,
                InstKind::Select(c, a, b) => {
                    if vals[*c] != 0.0 {
                        vals[*a]
                    } else {
                        vals[*b]
                    }
                }
                InstKind::Size(_) => self.sizes_f[i],
                InstKind::Index(axis) => coord[*axis] as f64,
                InstKind::Carry => carry,
                InstKind::LoadIndexed { arg, index, .. } => {
                    let (stride, bound) = self.gathers[i];
                    match pick(vals[*index], bound) {
                        None => 0.0,
                        Some(p) => {
                            let idx: usize = self.offsets[i]
                                + p * stride
                                + coord
                                    .iter()
                                    .zip(&self.strides[i])
                                    .map(|(c, s)| c * s)
                                    .sum::<usize>();
                            read_raw(self.args[*arg], k.args[*arg].dtype, idx)
                        }
                    }
                }
            };
            vals[i] = inst.ty.round(v);
        }
    }

    /// A scan kernel: each line along `scan.axis` in order, the state
    /// carried from one position to the next; stores at the row-major
    /// position.
    ///
    /// # Safety
    /// As `run_raw`.
    unsafe fn scan(&self, scan: Scan, extents: &[usize], coord: &mut [usize], vals: &mut [f64]) {
        let k = self.kernel;
        let n = extents[scan.axis];
        let lines: usize = extents
            .iter()
            .enumerate()
            .filter(|(a, _)| *a != scan.axis)
            .map(|(_, e)| e)
            .product();
        if n == 0 {
            return;
        }
        for line in 0..lines {
            let mut rem = line;
            for a in (0..extents.len()).rev().filter(|a| *a != scan.axis) {
                coord[a] = rem % extents[a];
                rem /= extents[a];
            }
            let mut carry = 0.0;
            for step in 0..n {
                coord[scan.axis] = if scan.reverse { n - 1 - step } else { step };
                // SAFETY: the caller's contract; `coord` is in the domain.
                unsafe { self.eval(coord, carry, vals) };
                carry = vals[scan.next];
                let at = coord.iter().zip(extents).fold(0, |acc, (c, e)| acc * e + c);
                for st in &k.stores {
                    write_raw(self.args[st.arg], k.args[st.arg].dtype, at, vals[st.value]);
                }
            }
        }
    }
}
