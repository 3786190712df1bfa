//! Method calls, casts and function calls: the scalar methods, `mapv`, and
//! the dispatch of a call to a helper, a generated function or the
//! vocabulary.

use super::function::SUPPORTED_METHODS;
use super::lowerer::Lowerer;
use super::syntax::float_path_call;
use super::syntax::method_hint;
use super::syntax::strip_parens;
use crate::parse::types::elem_of;
use oxla_core::ops::elementwise::{BinaryOp, Rounding, UnaryOp};
use oxla_core::{DType, Op, Var};
use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::Expr;

impl Lowerer<'_> {
    pub(super) fn lower_method(&mut self, m: &syn::ExprMethodCall) -> Option<Var> {
        let name = m.method.to_string();
        // Rust's iterator reductions: `x.iter().sum::<f64>()` is `x.sum()`.
        if matches!(name.as_str(), "sum" | "product") && m.args.is_empty() {
            if let Expr::MethodCall(inner) = strip_parens(&m.receiver) {
                if inner.method == "iter" && inner.args.is_empty() {
                    let mut whole = m.clone();
                    whole.receiver = inner.receiver.clone();
                    whole.turbofish = None;
                    return self.lower_method(&whole);
                }
            }
        }
        if name == "fold" {
            self.errors
                .spanned(&m.method, crate::lower::vocab::fold_error(m));
            return None;
        }
        if let Some(t) = &m.turbofish {
            self.errors
                .spanned(t, "type arguments are not supported on methods");
            return None;
        }
        if let Some(v) = self.lower_slicing_method(m) {
            return v;
        }
        // Values are immutable: a copy or a view is the value itself.
        if matches!(name.as_str(), "clone" | "to_owned" | "view" | "into_owned")
            && m.args.is_empty()
        {
            return self.lower_expr(&m.receiver);
        }
        if let Some(v) = self.lower_size_method(m) {
            return v;
        }
        if let Some(v) = self.lower_reshape_method(m) {
            return v;
        }
        // ndarray's reshapes return a `Result`: its `unwrap()` is the value.
        if matches!(name.as_str(), "unwrap" | "expect") {
            if let Expr::MethodCall(inner) = strip_parens(&m.receiver) {
                if self.is_reshape_method(inner) {
                    return self.lower_expr(&m.receiver);
                }
            }
        }
        if name == "mapv" {
            return self.lower_mapv(m);
        }
        if matches!(name.as_str(), "rem_euclid" | "div_euclid") && m.args.len() == 1 {
            // Both operands lowered once, then the integer or float form.
            let a = self.lower_expr(&m.receiver);
            let c = self.lower_expr(&m.args[0]);
            let (a, c) = (a?, c?);
            let int_scalar =
                self.f.shape(a).is_scalar() && matches!(self.f.dtype(a), DType::I32 | DType::I64);
            if int_scalar {
                return self.int_euclid(m, a, c, name == "rem_euclid");
            }
            if name == "div_euclid" {
                self.errors.spanned(
                    &m.method,
                    format!(
                        "`div_euclid` is supported on integer scalars, got {}",
                        self.f.ty(a)
                    ),
                );
                return None;
            }
            let span = self.method_span(m);
            let mut vs = [a, c];
            self.coerce(&mut vs, span)?;
            return self.float_rem_euclid(vs[0], vs[1], span);
        }
        if let Some(v) = self.lower_array_method(m) {
            return v;
        }
        if let Some(v) = self.lower_elementwise_method(m) {
            return v;
        }
        let unary = match name.as_str() {
            "exp" => Some(UnaryOp::Exp),
            "ln" => Some(UnaryOp::Log),
            "sin" => Some(UnaryOp::Sin),
            "cos" => Some(UnaryOp::Cos),
            "tanh" => Some(UnaryOp::Tanh),
            "sqrt" => Some(UnaryOp::Sqrt),
            "floor" => Some(UnaryOp::Round(Rounding::Floor)),
            "ceil" => Some(UnaryOp::Round(Rounding::Ceil)),
            "trunc" => Some(UnaryOp::Round(Rounding::Trunc)),
            "round" => Some(UnaryOp::Round(Rounding::HalfAway)),
            "round_ties_even" => Some(UnaryOp::Round(Rounding::HalfEven)),
            "signum" => Some(UnaryOp::Signum),
            "exp_m1" => Some(UnaryOp::ExpM1),
            "powi" | "powf" | "max" | "min" => None,
            _ => {
                let hint = match name.as_str() {
                    "log" => " (the natural logarithm is `ln`)",
                    "pow" => " (Rust's name is `powf`; for an integer power use `powi(n)`)",
                    _ => "",
                };
                let near = crate::lower::vocab::method_hint(&name).unwrap_or_default();
                self.errors.spanned(
                    &m.method,
                    format!(
                        "unknown method `{name}`{hint}{near}: {SUPPORTED_METHODS}, {}; on arrays also {}, {}, {}",
                        crate::lower::vocab::elementwise::ELEMENTWISE_METHODS,
                        crate::lower::vocab::arrays::ARRAY_METHODS,
                        crate::lower::vocab::layout::LAYOUT_METHODS,
                        crate::lower::vocab::linalg::LINALG_METHODS
                    ),
                );
                // Still check the receiver and arguments for errors.
                self.lower_expr(&m.receiver);
                for a in &m.args {
                    self.lower_expr(a);
                }
                return None;
            }
        };
        let x = self.lower_expr(&m.receiver);
        let want_args = if unary.is_some() { 0 } else { 1 };
        if m.args.len() != want_args {
            let what = if want_args == 0 {
                "no arguments".to_string()
            } else {
                "one argument".to_string()
            };
            self.errors
                .at(m.paren_token.span.join(), format!("`{name}` takes {what}"));
            return None;
        }
        if let Some(op) = unary {
            let x = x?;
            let span = self.method_span(m);
            return self.push(Op::Unary(op), &[x], span);
        }
        let arg = &m.args[0];
        if name == "powi" {
            let n = match strip_parens(arg) {
                Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(i),
                    ..
                }) => i.base10_parse::<i32>().ok(),
                Expr::Unary(syn::ExprUnary {
                    op: syn::UnOp::Neg(_),
                    expr,
                    ..
                }) => match strip_parens(expr) {
                    // Negate in i64 so that `-2147483648` (i32::MIN) is accepted.
                    Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(i),
                        ..
                    }) => i
                        .base10_parse::<i64>()
                        .ok()
                        .and_then(|n| i32::try_from(-n).ok()),
                    _ => None,
                },
                _ => None,
            };
            let Some(n) = n else {
                self.errors.spanned(
                    arg,
                    "`powi` takes an integer literal exponent, like `x.powi(2)`",
                );
                return None;
            };
            let x = x?;
            let span = self.method_span(m);
            return self.push(Op::Unary(UnaryOp::Powi(n)), &[x], span);
        }
        let op = match name.as_str() {
            "max" => BinaryOp::Max,
            "min" => BinaryOp::Min,
            _ => BinaryOp::Pow,
        };
        let y = self.lower_expr(arg);
        let mut vs = [x?, y?];
        let span = self.method_span(m);
        self.coerce(&mut vs, span)?;
        self.push(Op::Binary(op), &vs, span)
    }

    /// `x as T` (Rust's `as`, the `convert` op): to the function's float
    /// type from a float (the identity), an integer or a bool; to `i32` or
    /// `i64` from a float (truncating, saturating, NaN → 0) or a bool.
    /// `site` is the whole cast (or `mapv` call), where errors point.
    /// `span`: the first token of the site (printing the site to find that
    /// token made a chain of casts quadratic).
    pub(super) fn lower_cast(
        &mut self,
        x: Option<Var>,
        ty: &syn::Type,
        site: &dyn ToTokens,
        span: Span,
    ) -> Option<Var> {
        let targets = format!(
            "a cast goes to the function's float type ({}), i32 or i64",
            self.dtype
        );
        let Some(to) = elem_of(ty) else {
            let shown = ty.to_token_stream().to_string();
            self.errors
                .spanned(ty, format!("unsupported cast to `{shown}`: {targets}"));
            return None;
        };
        if to == DType::Bool {
            self.errors.spanned(
                ty,
                format!("Rust has no cast to bool: compare instead (`x != 0.0`); {targets}"),
            );
            return None;
        }
        if to.is_float() && to != self.dtype {
            self.errors.spanned(
                ty,
                format!(
                    "a cast to {to} in a function whose float type is {}: an oxla function computes in one float type; {targets}",
                    self.dtype
                ),
            );
            return None;
        }
        let x = x?;
        let from = self.f.dtype(x);
        if from == to {
            return Some(x);
        }
        // `x.len() as f64`: the size, already held as a float.
        if let Some(n) = self.size_source(x).filter(|_| to == self.dtype) {
            return Some(n);
        }
        if from == DType::Bool && to.is_float() {
            self.errors.spanned(
                site,
                format!("Rust casts a bool only to an integer: write `b as i32 as {to}`"),
            );
            return None;
        }
        if !from.is_float() && from != DType::Bool && !to.is_float() {
            return self.int_cast(x, to, span);
        }
        // `b as i32 as f32`: the bool converts to the float directly (a
        // kernel selects 1 or 0), so no integer value is computed.
        let source = self
            .f
            .definitions()
            .get(x.index())
            .copied()
            .flatten()
            .map(|i| &self.f.eqns[i])
            .filter(|e| matches!(e.op, Op::Convert { .. }) && to.is_float())
            .map(|e| e.ins[0])
            .filter(|b| self.f.dtype(*b) == DType::Bool);
        self.push(Op::Convert { dtype: to }, &[source.unwrap_or(x)], span)
    }

    /// `x.mapv(|v| v as T)`: ndarray's spelling of an elementwise cast. Only
    /// that closure is supported: every other elementwise function applies
    /// to whole arrays.
    fn lower_mapv(&mut self, m: &syn::ExprMethodCall) -> Option<Var> {
        let cast = match m.args.iter().collect::<Vec<_>>().as_slice() {
            [Expr::Closure(c)] if c.inputs.len() == 1 => {
                let param = match &c.inputs[0] {
                    syn::Pat::Ident(pi) => Some(&pi.ident),
                    syn::Pat::Type(pt) => match &*pt.pat {
                        syn::Pat::Ident(pi) => Some(&pi.ident),
                        _ => None,
                    },
                    _ => None,
                };
                // `v as T`, or a chain `v as i32 as f32` (a bool's cast).
                let mut casts = Vec::new();
                let mut at = strip_parens(&c.body);
                while let Expr::Cast(cast) = at {
                    casts.push(cast);
                    at = strip_parens(&cast.expr);
                }
                match (param, at) {
                    (Some(p), Expr::Path(e)) if e.path.is_ident(p) && !casts.is_empty() => {
                        Some(casts)
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let Some(casts) = cast else {
            self.errors.at(
                m.paren_token.span.join(),
                "`mapv` takes only a cast, `x.mapv(|v| v as T)`: other elementwise functions apply to whole arrays (`x.exp()`, `x * 2.0`)",
            );
            return None;
        };
        let x = self.lower_expr(&m.receiver);
        if x.is_some_and(|x| self.f.shape(x).is_scalar()) {
            self.errors.spanned(
                &m.method,
                "`mapv` applies to arrays: cast a number with `x as T`",
            );
            return None;
        }
        let span = self.edge_span(&m.receiver, true);
        let mut x = x;
        for cast in casts.iter().rev() {
            x = Some(self.lower_cast(x, &cast.ty, m, span)?);
        }
        x
    }

    pub(super) fn lower_call(&mut self, c: &syn::ExprCall) -> Option<Var> {
        if let Some(v) = self.lower_closure_call(c) {
            return v;
        }
        let supported_fns = crate::lower::vocab::supported_functions();
        let name = match &*c.func {
            Expr::Path(p) if p.qself.is_none() => {
                let segs = crate::lower::segment_names(&p.path);
                let args_ok = p.path.segments.iter().all(|s| s.arguments.is_none());
                match segs.as_slice() {
                    [n] if args_ok && p.path.leading_colon.is_none() => Some(n.clone()),
                    [o, n] if args_ok && o == "oxla" => Some(n.clone()),
                    [t, n] if args_ok => {
                        crate::lower::vocab::constructors::ndarray_constructor(t, n)
                            .map(str::to_string)
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(m) = float_path_call(c) {
            return self.lower_float_path_call(c, m);
        }
        if let Some(n) = &name {
            if let Some(v) = self.lower_slicing_call(n, c) {
                return v;
            }
            if let Some(v) = self.lower_array_call(n, c) {
                return v;
            }
            if let Some(v) = self.lower_elementwise_call(n, c) {
                return v;
            }
            if let Some(v) = self.lower_constructor_call(n, c) {
                return v;
            }
            if let Some(v) = self.lower_collective_call(n, c) {
                return v;
            }
        }
        let name = name.filter(|n| n == "sum" || n == "dot");
        let Some(name) = name else {
            if let Some(v) = self.lower_helper_call(c) {
                return v;
            }
            let shown = c.func.to_token_stream().to_string().replace(' ', "");
            let alias = crate::lower::vocab::function_hint(&shown)
                .map(|to| format!(" (here it is {to})"))
                .unwrap_or_default();
            self.errors.spanned(
                &c.func,
                format!(
                    "unknown function `{shown}`{alias}{}: {supported_fns}, or a function marked `#[oxla::func]`",
                    method_hint(&c.func)
                ),
            );
            for a in &c.args {
                self.lower_expr(a);
            }
            return None;
        };
        let want = if name == "sum" { 1 } else { 2 };
        let args: Vec<Option<Var>> = c.args.iter().map(|a| self.lower_expr(a)).collect();
        if args.len() != want {
            let what = if want == 1 {
                "one argument: `sum(x)`"
            } else {
                "two arguments: `dot(x, y)`"
            };
            self.errors
                .at(c.paren_token.span.join(), format!("`{name}` takes {what}"));
            return None;
        }
        let args: Vec<Var> = args.into_iter().collect::<Option<_>>()?;
        if name == "sum" {
            let x = args[0];
            let rank = self.f.shape(x).rank();
            if rank == 0 {
                self.errors.spanned(
                    &c.args[0],
                    "`sum` takes an array (a slice parameter or an expression of one)",
                );
                return None;
            }
            return self.push(
                Op::ReduceSum {
                    axes: (0..rank).collect(),
                },
                &[x],
                c.span(),
            );
        }
        for (a, e) in args.iter().zip(&c.args) {
            if self.f.shape(*a).rank() == 0 {
                self.errors.spanned(
                    e,
                    "`dot` takes two arrays (slice parameters or expressions of them)",
                );
                return None;
            }
        }
        self.ndarray_dot(args[0], args[1], c.span())
    }

    /// `f64::exp(x)`, `f32::powi(x, 2)`, …: Rust's path spelling of a float
    /// method, lowered as the method call `x.exp()`. The type must be the
    /// function's float type, as rustc would require.
    fn lower_float_path_call(&mut self, c: &syn::ExprCall, m: syn::ExprMethodCall) -> Option<Var> {
        let Expr::Path(p) = &*c.func else { return None };
        let segs: Vec<&syn::PathSegment> = p.path.segments.iter().collect();
        let ty_seg = segs[segs.len() - 2];
        let ty = ty_seg.ident.to_string();
        if ty != self.dtype.name() {
            self.errors.spanned(
                ty_seg,
                format!(
                    "mixed float types: `{ty}::{}` in a function whose float type is {}",
                    m.method, self.dtype
                ),
            );
            for a in &c.args {
                self.lower_expr(a);
            }
            return None;
        }
        self.lower_method(&m)
    }
}
