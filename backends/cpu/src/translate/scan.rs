//! Scan kernels (`Kernel::scan`): a loop nest over every domain axis but the
//! scan axis, in domain order, around a scalar loop along the scan axis (in
//! the scan's direction) that carries the state in a variable, reset to 0
//! at the start of each line. Lines are independent, but a line is
//! sequential, so nothing here is vectorized.

use super::fold::{fold_iadd, fold_imul};
use super::inst::{scalar_type, At};
use super::Body;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::Variable;
use oxla_core::kernel::Scan;

impl Body<'_> {
    /// The whole kernel; `bases` are each load's starting element index.
    pub(super) fn scan(&mut self, scan: Scan, bases: &[Value], out: Value) -> Result<(), String> {
        let order: Vec<usize> = (0..self.k.domain.len())
            .filter(|a| *a != scan.axis)
            .chain([scan.axis])
            .collect();
        let ty = self.k.insts[scan.next].ty;
        let carry = self.b.declare_var(scalar_type(ty));
        self.carry = Some(carry);
        self.scan_level(&order, scan, carry, bases, out)
    }

    /// Loops over the axes `order` (the scan axis last).
    fn scan_level(
        &mut self,
        order: &[usize],
        scan: Scan,
        carry: Variable,
        bases: &[Value],
        out: Value,
    ) -> Result<(), String> {
        let axis = order[0];
        let n = self.extents[axis];
        let zero = self.b.ins().iconst(types::I64, 0);
        if order.len() > 1 {
            return self.counted_loop(zero, n, 1, |s, i, _| {
                s.coords[axis] = Some(i);
                let next: Vec<Value> = (0..bases.len())
                    .map(|l| s.advance(bases[l], l, axis, i))
                    .collect();
                let step = fold_imul(&mut s.b, i, s.out_strides[axis]);
                let out = fold_iadd(&mut s.b, out, step);
                s.scan_level(&order[1..], scan, carry, &next, out)
            });
        }
        let ty = self.k.insts[scan.next].ty;
        let start = self.num(ty, false).fconst(&mut self.b, 0.0);
        self.b.def_var(carry, start);
        self.counted_loop(zero, n, 1, |s, j, _| {
            let c = if scan.reverse {
                let last = s.b.ins().iadd_imm_s(n, -1);
                s.b.ins().isub(last, j)
            } else {
                j
            };
            s.coords[axis] = Some(c);
            let mut vals = Vec::with_capacity(s.k.insts.len());
            for (i, &base) in bases[..s.k.insts.len()].iter().enumerate() {
                let at = s.advance(base, i, axis, c);
                let v = s.inst(i, false, &vals, Some(At::Index(at)))?;
                vals.push(v);
            }
            s.b.def_var(carry, vals[scan.next]);
            let step = fold_imul(&mut s.b, c, s.out_strides[axis]);
            let at = fold_iadd(&mut s.b, out, step);
            for st in &s.k.stores {
                let ty = s.k.insts[st.value].ty;
                s.store(st.arg, vals[st.value], ty, at, false);
            }
            Ok(())
        })
    }
}
