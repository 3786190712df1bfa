//! Scan kernels (`Kernel::scan`): one thread per line (every coordinate but
//! the scan axis's), in a grid-stride loop over the lines; the thread walks
//! its line in the scan's direction with the state in a register, 0 at the
//! start. Lines are independent, so no thread waits for another.

use super::{Coord, Emitter};
use crate::func::Class;
use crate::values::{float_imm, Ty, Val};
use oxla_core::kernel::Scan;

impl Emitter<'_> {
    pub(super) fn scan(&mut self, scan: Scan) {
        let rank = self.k.domain.len();
        let others: Vec<usize> = (0..rank).filter(|a| *a != scan.axis).collect();
        let lines = self.f.reg(Class::B64);
        self.f.ins(format!("mov.u64 {lines}, 1"));
        for &a in &others {
            self.f
                .ins(format!("mul.lo.u64 {lines}, {lines}, {}", self.extents[a]));
        }
        let n = self.f.reg(Class::B64);
        self.f
            .ins(format!("mov.u64 {n}, {}", self.extents[scan.axis]));
        // Row-major strides of the output, once.
        let out_strides: Vec<Option<String>> =
            (0..rank).map(|a| Some(self.product(a + 1..rank))).collect();
        let ty = Ty::of(self.k.insts[scan.next].ty).expect("validated type");
        let state = self.f.reg(ty.class());
        self.carry = Some(Val {
            ty,
            reg: state.clone(),
        });
        let (idx, step) = self.global_thread();
        let (top, end) = (self.f.new_label("lines"), self.f.new_label("done"));
        let (line_top, line_end) = (self.f.new_label("line"), self.f.new_label("line_done"));
        let p = self.f.reg(Class::Pred);
        self.f.place_label(&top);
        self.f.ins(format!("setp.ge.u64 {p}, {idx}, {lines}"));
        self.f.ins(format!("@{p} bra {end}"));
        // The line's coordinates, row-major over the other axes.
        let mut coords: Vec<Coord> = vec![None; rank];
        let mut rem = idx.clone();
        for (i, &a) in others.iter().enumerate().rev() {
            if i == 0 {
                coords[a] = Some(rem.clone());
                break;
            }
            let (q, c) = (self.f.reg(Class::B64), self.f.reg(Class::B64));
            let ext = self.extents[a].clone();
            self.f.ins(format!("div.u64 {q}, {rem}, {ext}"));
            self.f.ins(format!("mul.lo.u64 {c}, {q}, {ext}"));
            self.f.ins(format!("sub.u64 {c}, {rem}, {c}"));
            coords[a] = Some(c);
            rem = q;
        }
        self.f.ins(format!(
            "mov.{} {state}, {}",
            ty.suffix(),
            float_imm(ty, 0.0)
        ));
        let j = self.f.reg(Class::B64);
        self.f.ins(format!("mov.u64 {j}, 0"));
        self.f.place_label(&line_top);
        self.f.ins(format!("setp.ge.u64 {p}, {j}, {n}"));
        self.f.ins(format!("@{p} bra {line_end}"));
        let c = if scan.reverse {
            let c = self.f.reg(Class::B64);
            self.f.ins(format!("sub.u64 {c}, {n}, 1"));
            self.f.ins(format!("sub.u64 {c}, {c}, {j}"));
            c
        } else {
            j.clone()
        };
        coords[scan.axis] = Some(c);
        let vals = self.eval(&coords);
        let at = match self.linear(None, &coords, &out_strides) {
            Some(at) if at.parse::<u64>().is_err() => at,
            other => {
                let d = self.f.reg(Class::B64);
                let v = other.unwrap_or_else(|| "0".into());
                self.f.ins(format!("mov.u64 {d}, {v}"));
                d
            }
        };
        // Store before the state moves on: a stored carry is this register.
        for st in &self.k.stores {
            self.store(st.arg, &at, &vals[st.value]);
        }
        let next = &vals[scan.next];
        self.f
            .ins(format!("mov.{} {state}, {}", ty.suffix(), next.reg));
        self.f.ins(format!("add.u64 {j}, {j}, 1"));
        self.f.ins(format!("bra {line_top}"));
        self.f.place_label(&line_end);
        self.f.ins(format!("add.u64 {idx}, {idx}, {step}"));
        self.f.ins(format!("bra {top}"));
        self.f.place_label(&end);
        self.f.ins("ret");
    }
}
