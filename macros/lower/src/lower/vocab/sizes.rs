//! Array sizes as values: `x.len()`, `x.nrows()`, `x.ncols()`,
//! `x.len_of(Axis(k))`, `x.dim()` (1-d) and `x.shape()[k]`, each an `i64`
//! scalar (Rust's `usize`) computed from the size bound at the call
//! (`dim_size`, which holds it in the function's float type, then
//! `convert`). `n as f64` folds back to the `dim_size` itself.

use crate::lower::vocab::arrays::axis_arg;
use crate::lower::Lowerer;
use oxla_core::{DType, Op, Var};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::Expr;

impl Lowerer<'_> {
    /// `Some` when `m` is a size method.
    pub(crate) fn lower_size_method(&mut self, m: &syn::ExprMethodCall) -> Option<Option<Var>> {
        let name = m.method.to_string();
        let axis = match (name.as_str(), m.args.len()) {
            ("len" | "nrows" | "dim", 0) => Some(0),
            ("ncols", 0) => Some(1),
            ("len_of", 1) => axis_arg(&m.args[0]),
            _ => return None,
        };
        let Some(axis) = axis else {
            self.errors
                .spanned(&m.args[0], "`len_of` takes `Axis(k)` with a literal k");
            return Some(None);
        };
        let x = self.lower_expr(&m.receiver)?;
        let rank = self.f.shape(x).rank();
        let ok = match name.as_str() {
            "len" | "dim" => rank == 1,
            "nrows" | "ncols" => rank == 2,
            _ => axis < rank,
        };
        if !ok {
            let shape = self.f.shape(x).clone();
            let want = match name.as_str() {
                "len" => "a 1-d array (for the size of an axis use `x.len_of(Axis(k))` or `x.shape()[k]`)",
                "dim" => "a 1-d array here (use `x.shape()[k]` for the size of axis k)",
                "nrows" | "ncols" => "a 2-d array",
                _ => "an axis below the array's rank",
            };
            self.errors.spanned(
                &m.method,
                format!("`{name}` takes {want}, but this has shape {shape}"),
            );
            return Some(None);
        }
        let span = self.method_span(m);
        Some(self.size_of(x, axis, span))
    }

    /// `x.shape()[k]`: `Some` when `i` is that form.
    pub(crate) fn lower_shape_index(&mut self, i: &syn::ExprIndex) -> Option<Option<Var>> {
        let Expr::MethodCall(m) = crate::lower::strip_parens(&i.expr) else {
            return None;
        };
        if m.method != "shape" || !m.args.is_empty() {
            return None;
        }
        let k = match crate::lower::strip_parens(&i.index) {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(n),
                ..
            }) => n.base10_parse::<usize>().ok(),
            _ => None,
        };
        let Some(k) = k else {
            self.errors
                .spanned(&i.index, "`x.shape()[k]` takes a literal k");
            return Some(None);
        };
        let x = self.lower_expr(&m.receiver)?;
        let shape = self.f.shape(x).clone();
        if k >= shape.rank() {
            self.errors
                .spanned(&i.index, format!("axis {k} of an array of shape {shape}"));
            return Some(None);
        }
        Some(self.size_of(x, k, i.span()))
    }

    fn size_of(&mut self, x: Var, axis: usize, span: Span) -> Option<Var> {
        let dim = self.f.shape(x).0[axis].clone();
        let n = self.push(
            Op::DimSize {
                dim,
                dtype: self.dtype,
            },
            &[],
            span,
        )?;
        self.push(Op::Convert { dtype: DType::I64 }, &[n], span)
    }

    /// The `dim_size` behind a size value `x` (`x.len()`), which holds it
    /// exactly in the function's float type.
    pub(crate) fn size_source(&self, x: Var) -> Option<Var> {
        let defs = self.f.definitions();
        let def = |v: Var| {
            defs.get(v.index())
                .copied()
                .flatten()
                .map(|i| &self.f.eqns[i])
        };
        let e = def(x).filter(|e| matches!(e.op, Op::Convert { .. }))?;
        let src = e.ins[0];
        def(src)
            .filter(|e| matches!(e.op, Op::DimSize { .. }))
            .map(|_| src)
    }
}
