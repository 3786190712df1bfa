//! The loop nest of map and reduction kernels: rotated counted loops over
//! the domain, outermost first, and the innermost row with its loads and
//! stores addressed from a row start (scan kernels have their own, `scan`).

use super::accs::Accs;
use super::fold::{fold_iadd, fold_imul, scale};
use super::inst::At;
use super::Body;
use cranelift_codegen::ir::{condcodes::IntCC, types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;
use oxla_core::kernel::{InstKind, Reduce};

/// Bytes between consecutive innermost elements of a load or store.
#[derive(Clone, Copy)]
enum Step {
    Const(i64),
    Var(Value),
}

impl Body<'_> {
    /// A rank-0 kernel: one evaluation, stored at index 0.
    pub(super) fn once(&mut self, load_offsets: &[Value], out: Value) -> Result<(), String> {
        let mut vals = Vec::with_capacity(self.k.insts.len());
        for (i, &offset) in load_offsets[..self.k.insts.len()].iter().enumerate() {
            let v = self.inst(i, false, &vals, Some(At::Index(offset)))?;
            vals.push(v);
        }
        for st in &self.k.stores {
            let ty = self.k.insts[st.value].ty;
            if self.scatter.is_some() {
                let p = self.address(st.arg, out);
                self.scatter_add_at(st.arg, vals[st.value], ty, p, 0, &vals);
                continue;
            }
            self.store(st.arg, vals[st.value], ty, out, false);
        }
        Ok(())
    }

    /// Loops over axes `axis..`; `bases` are the load indices and `out` the
    /// output index at the start of this axis.
    pub(super) fn level(
        &mut self,
        axis: usize,
        bases: &[Value],
        out: Value,
        accs: Option<&Accs>,
    ) -> Result<(), String> {
        let k = self.k;
        if accs.is_none() && k.is_reduction() && axis == k.outer_dims() {
            let accs = self.new_accs();
            self.level(axis, bases, out, Some(&accs))?;
            return self.finish_reduction(&accs, out);
        }
        if axis + 1 == k.domain.len() {
            return self.innermost(bases, out, accs);
        }
        let zero = self.b.ins().iconst(types::I64, 0);
        self.counted_loop(zero, self.extents[axis], 1, |s, i, _| {
            s.coords[axis] = Some(i);
            let next: Vec<Value> = (0..bases.len())
                .map(|l| s.advance(bases[l], l, axis, i))
                .collect();
            let step = fold_imul(&mut s.b, i, s.out_strides[axis]);
            let out = fold_iadd(&mut s.b, out, step);
            s.level(axis + 1, &next, out, accs)
        })
    }

    /// `base + i * stride` of load `inst` along `axis` (other insts: `base`).
    pub(super) fn advance(&mut self, base: Value, inst: usize, axis: usize, i: Value) -> Value {
        match self.strides[inst].get(axis) {
            Some(&stride) => {
                let step = fold_imul(&mut self.b, i, stride);
                fold_iadd(&mut self.b, base, step)
            }
            None => base,
        }
    }

    /// The innermost loop of one row. Loads that move along it read from a
    /// row start address (computed here, once per row) plus `j * step`
    /// bytes; in the vector loops that offset is computed once per iteration
    /// and each unrolled vector adds a constant displacement, which x86-64
    /// folds into the addressing mode.
    fn innermost(
        &mut self,
        bases: &[Value],
        out: Value,
        accs: Option<&Accs>,
    ) -> Result<(), String> {
        let k = self.k;
        let axis = k.domain.len() - 1;
        let n = self.extents[axis];
        // Values independent of the innermost coordinate, once per row (they
        // use only each other, so the placeholders for the rest stay unread).
        let mut pre: Vec<Option<Value>> = vec![None; k.insts.len()];
        let mut pre_vals = Vec::with_capacity(k.insts.len());
        for i in 0..k.insts.len() {
            let v = if self.invariant[i] {
                self.inst(i, false, &pre_vals, Some(At::Index(bases[i])))?
            } else {
                out
            };
            pre[i] = self.invariant[i].then_some(v);
            pre_vals.push(v);
        }
        let mut rows = Row::default();
        for (i, inst) in k.insts.iter().enumerate() {
            let load = match &inst.kind {
                InstKind::Load { arg, strides, .. }
                | InstKind::LoadIndexed { arg, strides, .. } => Some((arg, strides)),
                _ => None,
            };
            if let (Some((arg, strides)), false) = (load, self.invariant[i]) {
                let size = k.args[*arg].dtype.size_bytes() as i64;
                let p = self.address(*arg, bases[i]);
                let stride = &strides[axis];
                let step = if stride.syms.is_empty() {
                    Step::Const(stride.factor as i64 * size)
                } else {
                    Step::Var(scale(&mut self.b, self.strides[i][axis], size))
                };
                rows.loads.push((i, p, step));
            }
        }
        if !k.is_reduction() {
            for st in &k.stores {
                let size = k.args[st.arg].dtype.size_bytes() as i64;
                let p = self.address(st.arg, out);
                // A region store moves by its innermost stride.
                let step = match k.region().map(|r| &r.strides[axis]) {
                    None => Step::Const(size),
                    Some(s) if s.syms.is_empty() => Step::Const(s.factor as i64 * size),
                    Some(_) => Step::Var(scale(&mut self.b, self.out_strides[axis], size)),
                };
                rows.stores.push((p, step));
            }
        }
        let mut start = self.b.ins().iconst(types::I64, 0);
        // A reduction's main loop (the unrolled vector loop, else the scalar
        // loop) runs in blocks; the loops after it add to the last block.
        let mut blocks = accs;
        if let (Some(plan), Some(end)) = (self.plan, self.vector_end) {
            let splats: Vec<Option<Value>> = (0..k.insts.len())
                .map(|i| pre[i].map(|v| self.splat(v, k.insts[i].ty, plan)))
                .collect();
            let step = plan.lanes * plan.unroll;
            self.blocked_loop(start, end, step, blocks.take(), |s, j, next| {
                let at = s.row_addresses(&rows, j, next, step);
                for u in 0..plan.unroll {
                    s.inner_index = Some((j, u * plan.lanes));
                    s.iteration(&at, u * plan.lanes, &splats, Some(u as usize), accs)?;
                }
                Ok(())
            })?;
            start = end;
            if let Some(single_end) = self.single_end {
                self.counted_loop(start, single_end, plan.lanes, |s, j, next| {
                    let at = s.row_addresses(&rows, j, next, plan.lanes);
                    s.inner_index = Some((j, 0));
                    s.iteration(&at, 0, &splats, Some(0), accs)
                })?;
                start = single_end;
            }
        }
        self.blocked_loop(start, n, 1, blocks, |s, j, next| {
            let at = s.row_addresses(&rows, j, next, 1);
            s.inner_index = Some((j, 0));
            s.iteration(&at, 0, &pre, None, accs)
        })?;
        self.inner_index = None;
        match accs {
            Some(accs) if k.reduce_dims > 1 && k.reduce == Reduce::Sum => self.end_row(accs, n),
            _ => {}
        }
        Ok(())
    }

    /// The addresses of the row's loads and stores in the loop iteration
    /// that starts at element `j` (`next = j + step`). Constant steps address
    /// from `next` with a negative displacement, so `j` dies where `next` is
    /// computed and the induction variable is updated in place.
    fn row_addresses(&mut self, rows: &Row, j: Value, next: Value, step: i64) -> RowAt {
        let mut offsets: Vec<(i64, Value)> = vec![];
        let mut at = RowAt::default();
        let mut place = |b: &mut FunctionBuilder, p: Value, bytes: Step| match bytes {
            Step::Var(v) => {
                let o = b.ins().imul(j, v);
                Place {
                    p: b.ins().iadd(p, o),
                    disp: 0,
                    bytes: 0,
                }
            }
            Step::Const(c) => {
                let o = match offsets.iter().find(|(s, _)| *s == c) {
                    Some((_, v)) => *v,
                    None => {
                        let v = scale(b, next, c);
                        offsets.push((c, v));
                        v
                    }
                };
                Place {
                    p: b.ins().iadd(p, o),
                    disp: -step * c,
                    bytes: c,
                }
            }
        };
        for &(i, p, bytes) in &rows.loads {
            at.loads.push((i, place(&mut self.b, p, bytes)));
        }
        for &(p, bytes) in &rows.stores {
            at.stores.push(place(&mut self.b, p, bytes));
        }
        at
    }

    /// Elements `first..` of a loop iteration whose addresses are `at`: a
    /// vector of them accumulated into vector accumulator `acc` (reductions)
    /// or stored (maps) when `acc` is given, else one scalar element. `fixed`
    /// holds the values of the insts that do not move along the loop (splat
    /// in vector mode).
    fn iteration(
        &mut self,
        at: &RowAt,
        first: i64,
        fixed: &[Option<Value>],
        acc: Option<usize>,
        accs: Option<&Accs>,
    ) -> Result<(), String> {
        let k = self.k;
        let vector = acc.is_some();
        let disp = |pl: &Place| (pl.disp + pl.bytes * first) as i32;
        let mut vals = Vec::with_capacity(k.insts.len());
        let mut loads = at.loads.iter();
        for (i, fixed) in fixed.iter().enumerate() {
            let v = match *fixed {
                Some(v) => v,
                None => {
                    let place = match k.insts[i].kind {
                        InstKind::Load { .. } | InstKind::LoadIndexed { .. } => {
                            let (li, pl) = loads.next().expect("a row load");
                            debug_assert_eq!(*li, i);
                            Some(At::Addr(pl.p, disp(pl)))
                        }
                        _ => None,
                    };
                    self.inst(i, vector, &vals, place)?
                }
            };
            vals.push(v);
        }
        for (si, st) in k.stores.iter().enumerate() {
            match (accs, acc) {
                (Some(accs), Some(u)) => self.accumulate(accs.vector[si][u], vals[st.value]),
                (Some(accs), None) => self.accumulate(accs.scalar[si], vals[st.value]),
                (None, _) if self.scatter.is_some() => {
                    let pl = &at.stores[si];
                    let ty = k.insts[st.value].ty;
                    self.scatter_add_at(st.arg, vals[st.value], ty, pl.p, disp(pl), &vals);
                }
                (None, _) => {
                    let pl = &at.stores[si];
                    let ty = k.insts[st.value].ty;
                    self.store_at(st.arg, vals[st.value], ty, pl.p, disp(pl), vector);
                }
            }
        }
        Ok(())
    }

    /// `for (i = start; i < end; i += step) body(i, i + step)`, rotated: one
    /// test before the loop and one at the bottom of each iteration. `i + step`
    /// is computed first, so the body may address from it.
    pub(super) fn counted_loop(
        &mut self,
        start: Value,
        end: Value,
        step: i64,
        body: impl FnOnce(&mut Self, Value, Value) -> Result<(), String>,
    ) -> Result<(), String> {
        let iv = self.b.declare_var(types::I64);
        self.b.def_var(iv, start);
        let (block, exit) = (self.b.create_block(), self.b.create_block());
        let enter = self.b.ins().icmp(IntCC::SignedLessThan, start, end);
        self.b.ins().brif(enter, block, &[], exit, &[]);
        self.b.switch_to_block(block);
        let i = self.b.use_var(iv);
        let next = self.b.ins().iadd_imm_s(i, step);
        body(self, i, next)?;
        self.b.def_var(iv, next);
        let more = self.b.ins().icmp(IntCC::SignedLessThan, next, end);
        self.b.ins().brif(more, block, &[], exit, &[]);
        self.b.switch_to_block(exit);
        Ok(())
    }
}

/// What a row of the innermost loop reads and writes: per moving load (inst,
/// row start address, bytes between elements), and per map store (row start
/// address, bytes between elements).
#[derive(Default)]
struct Row {
    loads: Vec<(usize, Value, Step)>,
    stores: Vec<(Value, Step)>,
}

/// Where element `e` of a loop iteration is: `p + disp + e * bytes`.
struct Place {
    p: Value,
    disp: i64,
    bytes: i64,
}

/// The places of a `Row`'s loads (with their inst) and stores in one loop
/// iteration.
#[derive(Default)]
struct RowAt {
    loads: Vec<(usize, Place)>,
    stores: Vec<Place>,
}
