//! Reduction accumulators: the blocked main loop, the per-store vector and
//! scalar accumulators, and the pairwise cascade their block totals go
//! through (see the summation order in the parent module's docs).

use super::fold::scale;
use super::inst::min_max;
use super::Body;
use crate::math::Num;
use cranelift_codegen::ir::{self, condcodes::IntCC, types, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::{FunctionBuilder, Variable};
use oxla_core::kernel::Reduce;

/// Iterations of the unrolled vector loop per reduction block: each vector
/// accumulator lane adds this many elements before the block's total goes to
/// the cascade (so a block is `lanes * unroll * VECTOR_CHAIN` elements).
const VECTOR_CHAIN: i64 = 64;

/// Elements per reduction block when the innermost loop is scalar.
const SCALAR_BLOCK: i64 = 256;

/// Iterations of the unrolled vector loop per sub-block: the accumulators
/// add this many elements per lane, then are added into a second set of
/// accumulators (`Accs::outer`) and restart from zero. A lane's chain in a
/// block is therefore `SUB_CHAIN` additions plus `VECTOR_CHAIN / SUB_CHAIN`
/// additions of sub-block sums, not `VECTOR_CHAIN`: a large value no
/// longer swallows the 63 small ones its lane adds after it (16 × 2^24 then
/// 2^22 ones summed to 32 ulp below the exact sum, now 1.5 ulp, where JAX
/// is 2 ulp below). It costs one vector add per accumulator per sub-block.
const SUB_CHAIN: i64 = 4;

/// Elements per sub-block when the innermost loop is scalar (see
/// `SUB_CHAIN`).
const SCALAR_SUB_CHAIN: i64 = 16;

/// Cascade depth: a binary counter of at most 2^64 blocks has at most 64
/// partial sums pending.
const CASCADE_DEPTH: u32 = 64;

/// Reduction state for one output element.
///
/// A reduction is summed in blocks: the row (innermost axis) is cut at
/// multiples of `block` elements from its start, each full block is summed
/// by the accumulators starting from zero, and its total (a leaf) is pushed
/// onto a binary-counter cascade: leaf `c` (1-based) is first added to as
/// many pending partial sums as `c` has trailing zero bits, so equal-sized
/// subtrees merge pairwise. What is left of a row after its full blocks
/// stays in the accumulators; with several reduced axes it is flushed once
/// `pending` (elements of rows since the last flush) reaches `block`, so
/// short rows are grouped. The finish adds the last leaf to the pending sums,
/// newest first. The tree depends only on the reduced extents, so an element's
/// rounding error is O(block / (lanes · unroll) + log2(n / block)) · eps,
/// not O(n / lanes) · eps, and a later split across threads at power-of-two
/// block counts can reproduce it exactly.
pub(super) struct Accs {
    pub(super) vector: Vec<Vec<Variable>>,
    pub(super) scalar: Vec<Variable>,
    /// Per store: the sums of the finished sub-blocks of the current block,
    /// one per vector accumulator and one scalar (sums only; see
    /// `SUB_CHAIN`).
    outer_vector: Vec<Vec<Variable>>,
    outer_scalar: Vec<Variable>,
    /// Per store: `CASCADE_DEPTH` partial sums of its scalar type.
    stack: Vec<ir::StackSlot>,
    /// Leaves pushed so far (i64).
    leaves: Variable,
    /// Partial sums on the stack (i64).
    depth: Variable,
    /// Elements since the last flush, counted per row (i64; several reduced
    /// axes only).
    pending: Variable,
    /// Elements per block of the row's main loop.
    block: i64,
}

impl Body<'_> {
    /// `counted_loop(start, end, step, body)`, or, for a reduction's main
    /// loop (`accs` given, `start` 0), the same cut into blocks of
    /// `accs.block` elements, each full block flushed to the cascade. The
    /// inner loop is the plain counted loop; its bound is computed once per
    /// block.
    pub(super) fn blocked_loop(
        &mut self,
        start: Value,
        end: Value,
        step: i64,
        accs: Option<&Accs>,
        body: impl FnOnce(&mut Self, Value, Value) -> Result<(), String>,
    ) -> Result<(), String> {
        // Max and min are exact in any order: no blocks.
        let Some(accs) = accs.filter(|_| self.k.reduce == Reduce::Sum) else {
            return self.counted_loop(start, end, step, body);
        };
        debug_assert_eq!(accs.block % step, 0);
        let chain = if step > 1 {
            SUB_CHAIN
        } else {
            SCALAR_SUB_CHAIN
        };
        let sub = step * chain;
        debug_assert_eq!(accs.block % sub, 0);
        self.counted_loop(start, end, accs.block, |s, first, block_end| {
            let partial = s.b.ins().icmp(IntCC::SignedGreaterThan, block_end, end);
            let stop = s.b.ins().select(partial, end, block_end);
            // Sub-blocks of `sub` elements, each summed from zero and then
            // added to the outer accumulators (see `SUB_CHAIN`).
            s.counted_loop(first, stop, sub, |s, sub_first, sub_end| {
                let short = s.b.ins().icmp(IntCC::SignedGreaterThan, sub_end, stop);
                let sub_stop = s.b.ins().select(short, stop, sub_end);
                s.counted_loop(sub_first, sub_stop, step, body)?;
                s.fold(accs, step > 1);
                Ok(())
            })?;
            // A partial block (the row's last) stays in the accumulators.
            let (flush, done) = (s.b.create_block(), s.b.create_block());
            s.b.ins().brif(partial, done, &[], flush, &[]);
            s.b.switch_to_block(flush);
            s.flush(accs);
            s.b.ins().jump(done, &[]);
            s.b.switch_to_block(done);
            Ok(())
        })
    }

    /// After a row of a reduction over several axes: flush the accumulators
    /// once the rows since the last flush hold a block's worth of elements.
    pub(super) fn end_row(&mut self, accs: &Accs, n: Value) {
        let pending = self.b.use_var(accs.pending);
        let pending = self.b.ins().iadd(pending, n);
        let full = self
            .b
            .ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, pending, accs.block);
        let (flush, keep, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(full, flush, &[], keep, &[]);
        self.b.switch_to_block(flush);
        self.flush(accs);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(accs.pending, zero);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(keep);
        self.b.def_var(accs.pending, pending);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    pub(super) fn new_accs(&mut self) -> Accs {
        let k = self.k;
        let i64_zero = self.b.ins().iconst(types::I64, 0);
        let int_var = |b: &mut FunctionBuilder| {
            let var = b.declare_var(types::I64);
            b.def_var(var, i64_zero);
            var
        };
        let (leaves, depth, pending) = (
            int_var(&mut self.b),
            int_var(&mut self.b),
            int_var(&mut self.b),
        );
        let block = match self.plan {
            Some(plan) => plan.lanes * plan.unroll * VECTOR_CHAIN,
            None => SCALAR_BLOCK,
        };
        let mut accs = Accs {
            vector: vec![],
            scalar: vec![],
            outer_vector: vec![],
            outer_scalar: vec![],
            stack: vec![],
            leaves,
            depth,
            pending,
            block,
        };
        let init = k.reduce.identity();
        for st in &k.stores {
            let num = self.num(k.insts[st.value].ty, false);
            let zero = num.fconst(&mut self.b, init);
            let var = self.b.declare_var(num.ty);
            self.b.def_var(var, zero);
            accs.scalar.push(var);
            let var = self.b.declare_var(num.ty);
            self.b.def_var(var, zero);
            accs.outer_scalar.push(var);
            if k.reduce == Reduce::Sum {
                let bytes = num.ty.bytes();
                let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
                    ir::StackSlotKind::ExplicitSlot,
                    bytes * CASCADE_DEPTH,
                    bytes.trailing_zeros() as u8,
                ));
                accs.stack.push(slot);
            }
            let (mut vector, mut outer) = (vec![], vec![]);
            if let Some(plan) = self.plan {
                for _ in 0..plan.unroll {
                    let zero = plan.num.fconst(&mut self.b, init);
                    for list in [&mut vector, &mut outer] {
                        let var = self.b.declare_var(plan.num.ty);
                        self.b.def_var(var, zero);
                        list.push(var);
                    }
                }
            }
            accs.vector.push(vector);
            accs.outer_vector.push(outer);
        }
        accs
    }

    pub(super) fn accumulate(&mut self, var: Variable, v: Value) {
        let acc = self.b.use_var(var);
        let sum = self.combine(acc, v);
        self.b.def_var(var, sum);
    }

    /// The kernel's reduction of two partial results (`acc` first).
    fn combine(&mut self, acc: Value, v: Value) -> Value {
        match self.k.reduce {
            Reduce::Sum => self.b.ins().fadd(acc, v),
            Reduce::Prod => self.b.ins().fmul(acc, v),
            r => {
                let ty = self.b.func.dfg.value_type(acc);
                let num = Num { ty, fma: self.fma };
                min_max(num, &mut self.b, r.op(), acc, v)
            }
        }
    }

    /// End a sub-block: add the accumulators (the vector ones when
    /// `vector`, else the scalar one) into the outer ones and reset them to
    /// zero (sums only).
    fn fold(&mut self, accs: &Accs, vector: bool) {
        for si in 0..accs.scalar.len() {
            let pairs: Vec<(Variable, Variable)> = if vector {
                accs.vector[si]
                    .iter()
                    .copied()
                    .zip(accs.outer_vector[si].iter().copied())
                    .collect()
            } else {
                vec![(accs.scalar[si], accs.outer_scalar[si])]
            };
            for (inner, outer) in pairs {
                let (a, x) = (self.b.use_var(outer), self.b.use_var(inner));
                let sum = self.b.ins().fadd(a, x);
                self.b.def_var(outer, sum);
                let ty = self.b.func.dfg.value_type(x);
                let zero = Num { ty, fma: false }.fconst(&mut self.b, 0.0);
                self.b.def_var(inner, zero);
            }
        }
    }

    /// The sum of store `si`'s accumulators (each vector with its outer
    /// one, the vectors pairwise, then lanes pairwise, then the scalar one
    /// with its outer one), which are reset to zero.
    fn block_total(&mut self, accs: &Accs, si: usize) -> Value {
        let scalar = self.b.use_var(accs.scalar[si]);
        let ty = self.k.insts[self.k.stores[si].value].ty;
        let init = self.k.reduce.identity();
        let zero = self.num(ty, false).fconst(&mut self.b, init);
        self.b.def_var(accs.scalar[si], zero);
        let scalar = if self.k.reduce == Reduce::Sum {
            let outer = self.b.use_var(accs.outer_scalar[si]);
            self.b.def_var(accs.outer_scalar[si], zero);
            self.b.ins().fadd(outer, scalar)
        } else {
            scalar
        };
        let mut vectors: Vec<Value> = accs.vector[si].iter().map(|v| self.b.use_var(*v)).collect();
        let Some(plan) = self.plan.filter(|_| !vectors.is_empty()) else {
            return scalar;
        };
        let vzero = plan.num.fconst(&mut self.b, init);
        for v in &accs.vector[si] {
            self.b.def_var(*v, vzero);
        }
        if self.k.reduce == Reduce::Sum {
            for (x, outer) in vectors.iter_mut().zip(&accs.outer_vector[si]) {
                let o = self.b.use_var(*outer);
                self.b.def_var(*outer, vzero);
                *x = self.b.ins().fadd(o, *x);
            }
        }
        let v = self.pairwise(vectors);
        let lanes = (0..plan.lanes)
            .map(|l| self.b.ins().extractlane(v, l as u8))
            .collect();
        let h = self.pairwise(lanes);
        self.combine(h, scalar)
    }

    /// `xs[0] ⊕ xs[1] ⊕ …` as a balanced tree of the kernel's reduction
    /// (`xs` not empty).
    fn pairwise(&mut self, mut xs: Vec<Value>) -> Value {
        while xs.len() > 1 {
            xs = xs
                .chunks(2)
                .map(|p| p[1..].iter().fold(p[0], |x, &y| self.combine(x, y)))
                .collect();
        }
        xs[0]
    }

    /// The address of entry `depth` of cascade `slot` (entries of `bytes`).
    fn stack_entry(&mut self, slot: ir::StackSlot, depth: Value, bytes: i64) -> Value {
        let base = self.b.ins().stack_addr(self.ptr, slot, 0);
        let offset = scale(&mut self.b, depth, bytes);
        let offset = if self.ptr == types::I64 {
            offset
        } else {
            self.b.ins().ireduce(self.ptr, offset)
        };
        self.b.ins().iadd(base, offset)
    }

    /// Add `xs` (one value per store) to the partial sums on top of the
    /// cascade, popping them: as many as `counter` has trailing zero bits, or
    /// all of them without a counter. Returns the sums; the popped (earlier)
    /// partial sum is the left operand of each addition.
    fn merge_down(&mut self, accs: &Accs, xs: &[Value], counter: Option<Value>) -> Vec<Value> {
        let vars: Vec<Variable> = xs
            .iter()
            .map(|&x| {
                let ty = self.b.func.dfg.value_type(x);
                let var = self.b.declare_var(ty);
                self.b.def_var(var, x);
                var
            })
            .collect();
        let t = self.b.declare_var(types::I64);
        if let Some(c) = counter {
            self.b.def_var(t, c);
        }
        let (head, merge, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        // With a counter: merge while its low bit is 0 (shifting it right per
        // merge), i.e. trailing-zeros-many times. Without: until the stack
        // is empty.
        let go = match counter {
            Some(_) => {
                let t = self.b.use_var(t);
                let low = self.b.ins().band_imm_s(t, 1);
                self.b.ins().icmp_imm_s(IntCC::Equal, low, 0)
            }
            None => {
                let d = self.b.use_var(accs.depth);
                self.b.ins().icmp_imm_s(IntCC::NotEqual, d, 0)
            }
        };
        self.b.ins().brif(go, merge, &[], done, &[]);
        self.b.switch_to_block(merge);
        let d = self.b.use_var(accs.depth);
        let d = self.b.ins().iadd_imm_s(d, -1);
        self.b.def_var(accs.depth, d);
        for (si, var) in vars.iter().enumerate() {
            let x = self.b.use_var(*var);
            let ty = self.b.func.dfg.value_type(x);
            let p = self.stack_entry(accs.stack[si], d, ty.bytes() as i64);
            let left = self.b.ins().load(ty, MemFlagsData::trusted(), p, 0);
            let sum = self.b.ins().fadd(left, x);
            self.b.def_var(*var, sum);
        }
        if counter.is_some() {
            let tv = self.b.use_var(t);
            let shifted = self.b.ins().ushr_imm_u(tv, 1);
            self.b.def_var(t, shifted);
        }
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(done);
        vars.iter().map(|v| self.b.use_var(*v)).collect()
    }

    /// End a block: push each store's block total onto its cascade.
    fn flush(&mut self, accs: &Accs) {
        let leaves: Vec<Value> = (0..accs.scalar.len())
            .map(|si| self.block_total(accs, si))
            .collect();
        let c = self.b.use_var(accs.leaves);
        let c = self.b.ins().iadd_imm_s(c, 1);
        self.b.def_var(accs.leaves, c);
        let merged = self.merge_down(accs, &leaves, Some(c));
        let d = self.b.use_var(accs.depth);
        for (si, x) in merged.into_iter().enumerate() {
            let ty = self.b.func.dfg.value_type(x);
            let p = self.stack_entry(accs.stack[si], d, ty.bytes() as i64);
            self.b.ins().store(MemFlagsData::trusted(), x, p, 0);
        }
        let d = self.b.ins().iadd_imm_s(d, 1);
        self.b.def_var(accs.depth, d);
    }

    /// Add the last block's total to the pending partial sums (newest first)
    /// and write each store's result at `out`.
    pub(super) fn finish_reduction(&mut self, accs: &Accs, out: Value) -> Result<(), String> {
        let last: Vec<Value> = (0..accs.scalar.len())
            .map(|si| self.block_total(accs, si))
            .collect();
        let totals = match self.k.reduce {
            Reduce::Sum => self.merge_down(accs, &last, None),
            _ => last,
        };
        for (st, total) in self.k.stores.iter().zip(totals) {
            self.store(st.arg, total, self.k.insts[st.value].ty, out, false);
        }
        Ok(())
    }
}
