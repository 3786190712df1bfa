//! The kernel IR verifier: one check of every structural invariant of a
//! [`Kernel`] that the kernel interpreter and every backend rely on, as
//! Cranelift has one verifier for every target.
//!
//! Fusion runs it on every kernel it produces (in debug builds and tests),
//! `Kernel::check_call` runs it before the interpreter or a launch reads a
//! buffer, and the backends run it before they lower a kernel; what a
//! backend adds in its own validation is only what *it* cannot lower (a
//! type or op without an instruction there: the CPU computes in no half
//! type, PTX scatter-adds only into f32 and f64), never a property of the
//! IR.
//!
//! What it checks:
//! - the header: size symbols named once, inputs before outputs, domain
//!   extents over known symbols, `reduce_dims` within the rank, a map's
//!   combiner `Sum` (maps ignore it);
//! - every instruction: a compute type (a float or `bool`); operands
//!   defined before it (SSA order); arithmetic, sizes, indices and gathers
//!   on floats, comparisons giving `bool`; loads of an input with one
//!   stride per domain axis over known symbols; a gather's index a plain
//!   load of an integer input as `f64` (`Kernel::is_index_value`); `Index`
//!   of an axis of the domain; `Carry` only in a scan kernel;
//! - the scan: on a map without a region, along an axis of the domain, its
//!   state a float instruction every `Carry` has the type of;
//! - the stores: each writes an output (every output exactly once) the
//!   value of an instruction; every store has the same region, only on a
//!   map, with one stride per axis over known symbols; a scatter-add's index
//!   as a gather's, its values floats; a reduction reduces no `bool`.
//!
//! Whether the buffers of a call hold what the kernel reads and writes
//! depends on the sizes of that call: `Kernel::check_call` checks it.

use super::{InstKind, Kernel, Reduce, Store};
use crate::dtype::DType;
use crate::shape::Size;

impl Kernel {
    /// Check every structural invariant of the kernel IR (see the module
    /// docs of `kernel::verify`). The error names the kernel and the
    /// instruction (`v3`) or store it is about.
    pub fn verify(&self) -> Result<(), String> {
        let v = Verifier { k: self };
        v.header()
            .and_then(|()| v.insts())
            .and_then(|()| v.scan())
            .and_then(|()| v.stores())
            .map_err(|e| format!("kernel `{}`: {e}", self.name))
    }
}

struct Verifier<'a> {
    k: &'a Kernel,
}

impl Verifier<'_> {
    /// Every symbol of `sizes` is one of the kernel's size symbols.
    fn known<'s>(
        &self,
        what: &str,
        sizes: impl IntoIterator<Item = &'s Size>,
    ) -> Result<(), String> {
        let mut syms = sizes.into_iter().flat_map(|s| &s.syms);
        match syms.find(|n| !self.k.sizes.contains(n)) {
            Some(n) => Err(format!("{what} names size symbol `{n}`, not in `sizes`")),
            None => Ok(()),
        }
    }

    fn header(&self) -> Result<(), String> {
        let k = self.k;
        for (i, n) in k.sizes.iter().enumerate() {
            if k.sizes[..i].contains(n) {
                return Err(format!("size symbol `{n}` appears twice in `sizes`"));
            }
        }
        if let Some(first_out) = k.args.iter().position(|a| a.output) {
            if let Some(i) = (first_out..k.args.len()).find(|i| !k.args[*i].output) {
                return Err(format!(
                    "input a{i} follows output a{first_out} (inputs come first)"
                ));
            }
        }
        self.known("the domain", &k.domain)?;
        if k.reduce_dims > k.domain.len() {
            return Err(format!(
                "reduce_dims {} exceeds the domain's rank {}",
                k.reduce_dims,
                k.domain.len()
            ));
        }
        if !k.is_reduction() && k.reduce != Reduce::Sum {
            return Err(format!(
                "a map kernel with combiner {} (a map's combiner is sum)",
                k.reduce.name()
            ));
        }
        Ok(())
    }

    fn insts(&self) -> Result<(), String> {
        for i in 0..self.k.insts.len() {
            self.inst(i).map_err(|e| format!("v{i}: {e}"))?;
        }
        Ok(())
    }

    /// Instruction `i` alone (operands, types, what it names).
    fn inst(&self, i: usize) -> Result<(), String> {
        let k = self.k;
        let inst = &k.insts[i];
        let ty = inst.ty;
        if !(ty.is_float() || ty == DType::Bool) {
            return Err(format!("type {ty} is not a compute type (a float or bool)"));
        }
        let operands: Vec<usize> = match &inst.kind {
            InstKind::Load { .. } | InstKind::Const(_) => vec![],
            InstKind::Size(_) | InstKind::Index(_) | InstKind::Carry => vec![],
            InstKind::LoadIndexed { index, .. } => vec![*index],
            InstKind::Unary(_, a) => vec![*a],
            InstKind::Binary(_, a, b) | InstKind::Cmp(_, a, b) => vec![*a, *b],
            InstKind::Select(c, a, b) => vec![*c, *a, *b],
        };
        if let Some(a) = operands.iter().find(|a| **a >= i) {
            return Err(format!("uses v{a}, which is not defined before it"));
        }
        let float = |what: &str| match ty {
            DType::Bool => Err(format!("{what} of type bool (it takes a float)")),
            _ => Ok(()),
        };
        match &inst.kind {
            InstKind::Load {
                arg,
                strides,
                offset,
            } => self.load(*arg, strides, offset),
            InstKind::LoadIndexed {
                arg,
                strides,
                offset,
                index,
                stride,
                bound,
            } => {
                float("a gather")?;
                self.load(*arg, strides, offset)?;
                self.known("the gather's stride and bound", [stride, bound])?;
                self.index(*index)
            }
            InstKind::Const(_) | InstKind::Select(..) => Ok(()),
            InstKind::Unary(op, _) => float(&format!("arithmetic ({})", op.name())),
            InstKind::Binary(op, _, _) => float(&format!("arithmetic ({})", op.name())),
            InstKind::Cmp(op, _, _) => match ty {
                DType::Bool => Ok(()),
                _ => Err(format!(
                    "comparison ({}) of type {ty} (it gives bool)",
                    op.name()
                )),
            },
            InstKind::Size(s) => {
                float("a size")?;
                self.known("the size", [s])
            }
            InstKind::Index(axis) => {
                float("an index")?;
                match *axis < k.domain.len() {
                    true => Ok(()),
                    false => Err(format!(
                        "index of axis {axis}, past the domain's rank {}",
                        k.domain.len()
                    )),
                }
            }
            InstKind::Carry if k.scan.is_none() => Err("a carry outside a scan kernel".into()),
            // Its type: `scan`.
            InstKind::Carry => Ok(()),
        }
    }

    /// A load (plain or gather) of input `arg` with `strides` and `offset`.
    fn load(&self, arg: usize, strides: &[Size], offset: &[Size]) -> Result<(), String> {
        let k = self.k;
        match k.args.get(arg) {
            Some(a) if !a.output => {}
            Some(_) => return Err(format!("loads a{arg}, which is an output")),
            None => return Err(format!("loads a{arg}, past the {} args", k.args.len())),
        }
        if strides.len() != k.domain.len() {
            return Err(format!(
                "{} load strides for a domain of rank {}",
                strides.len(),
                k.domain.len()
            ));
        }
        self.known("the load's strides or offset", strides.iter().chain(offset))
    }

    /// `v` is what an indexed load or store takes its index from.
    fn index(&self, v: usize) -> Result<(), String> {
        match self.k.is_index_value(v) {
            true => Ok(()),
            false => Err(format!(
                "the index v{v} is not a plain load of an integer input as f64"
            )),
        }
    }

    fn scan(&self) -> Result<(), String> {
        let k = self.k;
        let Some(sc) = k.scan else {
            return Ok(());
        };
        if k.is_reduction() {
            return Err(format!(
                "a scan kernel reducing {} axes (a scan is a map)",
                k.reduce_dims
            ));
        }
        if k.region().is_some() {
            return Err("a scan kernel storing into a region".into());
        }
        if sc.axis >= k.domain.len() {
            return Err(format!(
                "scan axis {} past the domain's rank {}",
                sc.axis,
                k.domain.len()
            ));
        }
        let state = match k.insts.get(sc.next) {
            None => return Err(format!("the scan's next state v{} is undefined", sc.next)),
            Some(i) if i.ty == DType::Bool => {
                return Err(format!(
                    "the scan's state v{} is bool, not a float",
                    sc.next
                ))
            }
            Some(i) => i.ty,
        };
        for (i, inst) in k.insts.iter().enumerate() {
            if inst.kind == InstKind::Carry && inst.ty != state {
                return Err(format!(
                    "v{i}: a carry of type {}, but the scan's state v{} is {state}",
                    inst.ty, sc.next
                ));
            }
        }
        Ok(())
    }

    fn stores(&self) -> Result<(), String> {
        let k = self.k;
        for (s, st) in k.stores.iter().enumerate() {
            self.store(st).map_err(|e| format!("store {s}: {e}"))?;
            if let Some(t) = k.stores[..s].iter().position(|x| x.arg == st.arg) {
                return Err(format!("stores {t} and {s} both write a{}", st.arg));
            }
            if st.region != k.stores[0].region {
                return Err(format!("stores 0 and {s} write different regions"));
            }
        }
        for (i, a) in k.args.iter().enumerate() {
            if a.output && !k.stores.iter().any(|st| st.arg == i) {
                return Err(format!("output a{i} is written by no store"));
            }
        }
        Ok(())
    }

    /// One store alone.
    fn store(&self, st: &Store) -> Result<(), String> {
        let k = self.k;
        match k.args.get(st.arg) {
            Some(a) if a.output => {}
            Some(_) => return Err(format!("writes a{}, which is an input", st.arg)),
            None => {
                return Err(format!(
                    "writes a{}, past the {} args",
                    st.arg,
                    k.args.len()
                ))
            }
        }
        let Some(value) = k.insts.get(st.value) else {
            return Err(format!("stores v{}, which is undefined", st.value));
        };
        if k.is_reduction() && value.ty == DType::Bool {
            return Err(format!(
                "a reduction ({}) of bool value v{}",
                k.reduce.name(),
                st.value
            ));
        }
        let Some(r) = &st.region else {
            return Ok(());
        };
        if k.is_reduction() {
            return Err("a region store in a reduction kernel (regions are for maps)".into());
        }
        if r.strides.len() != k.domain.len() {
            return Err(format!(
                "{} region strides for a domain of rank {}",
                r.strides.len(),
                k.domain.len()
            ));
        }
        self.known("the region", r.strides.iter().chain(&r.offset))?;
        if let Some(sc) = &r.scatter {
            self.known("the scatter's stride and bound", [&sc.stride, &sc.bound])?;
            self.index(sc.index)?;
            if value.ty == DType::Bool {
                return Err(format!("a scatter-add of bool value v{}", st.value));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
