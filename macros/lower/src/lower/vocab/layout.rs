//! The rest of jax.numpy's reshape family, each a composition of the layout
//! ops (`reshape`, `transpose`, `broadcast`) whose rules already give the
//! derivatives and the batching:
//!
//! | written | IR |
//! |---|---|
//! | `expand_dims(x, Axis(k))` (also `k`, `-1`) | `reshape` |
//! | `squeeze(x)`, `squeeze(x, Axis(k))`, `x.squeeze()` | `reshape` |
//! | `swapaxes(x, a, b)`, `x.swapaxes(a, b)` | `transpose` |
//! | `moveaxis(x, src, dst)` | `transpose` |
//! | `broadcast_to(x, shape)`, `x.broadcast(shape).unwrap()` | `reshape` (size-1 axes) + `broadcast` |
//! | `tile(x, reps)` | `concatenate` of copies along each repeated axis |
//! | `repeat(x, n, Axis(k))`, `repeat(x, n)` | `broadcast` to a new axis after `k` + `reshape`; on an axis of run-time size a `gather` |
//!
//! `tile` and `repeat` multiply a size: on an axis of run-time size `d` the
//! result's is the derived size `(d+d+…)` (see `oxla_core::shape::derived`),
//! checked and bound at the call as a concatenation's is.

use crate::lower::vocab::arrays::strip;
use crate::lower::Lowerer;
use oxla_core::ops::elementwise::{BinaryOp, Rounding, UnaryOp};
use oxla_core::ops::slicing::concatenate;
use oxla_core::shape::derived;
use oxla_core::{DType, Dim, Op, Shape, Var};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::Expr;

/// The functions handled here, name and usage (for error messages and the
/// built-in names).
pub(crate) const LAYOUT_FUNCTIONS: &[(&str, &str)] = &[
    ("expand_dims", "expand_dims(x, Axis(k))"),
    ("squeeze", "squeeze(x[, Axis(k)])"),
    ("swapaxes", "swapaxes(x, a, b)"),
    ("moveaxis", "moveaxis(x, src, dst)"),
    ("broadcast_to", "broadcast_to(x, shape)"),
    ("tile", "tile(x, reps)"),
    ("repeat", "repeat(x, n[, Axis(k)])"),
];

/// The methods handled here (for error messages).
pub(crate) const LAYOUT_METHODS: &str =
    "squeeze([Axis(k)]), swapaxes(a, b), broadcast(shape).unwrap()";

/// An axis written `Axis(k)` or as an integer literal `k`, negative from the
/// end; `None` when `e` is neither.
fn signed_axis(e: &Expr) -> Option<i64> {
    let lit = |e: &Expr| match strip(e) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<i64>().ok(),
        _ => None,
    };
    let e = match strip(e) {
        Expr::Call(c)
            if c.args.len() == 1
                && matches!(&*c.func, Expr::Path(p)
                    if p.path.segments.last().is_some_and(|s| s.ident == "Axis")) =>
        {
            &c.args[0]
        }
        e => e,
    };
    match strip(e) {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => lit(&u.expr).map(|k| -k),
        e => lit(e),
    }
}

/// A repeat count or a tile factor: an integer literal.
fn count(e: &Expr) -> Option<u64> {
    match strip(e) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<u64>().ok(),
        _ => None,
    }
}

impl Lowerer<'_> {
    /// A reshape-family function, if `name` is one (else `None`).
    pub(crate) fn lower_layout_call(
        &mut self,
        name: &str,
        c: &syn::ExprCall,
    ) -> Option<Option<Var>> {
        let usage = LAYOUT_FUNCTIONS.iter().find(|(n, _)| *n == name)?.1;
        let args: Vec<&Expr> = c.args.iter().collect();
        let (lo, hi) = match name {
            "squeeze" => (1, 2),
            "repeat" => (2, 3),
            "swapaxes" | "moveaxis" => (3, 3),
            _ => (2, 2),
        };
        if args.len() < lo || args.len() > hi {
            self.errors.at(
                c.paren_token.span.join(),
                format!("`{name}` takes `{usage}`"),
            );
            for a in &args {
                self.lower_expr(a);
            }
            return Some(None);
        }
        let x = self.lower_expr(args[0]);
        let span = c.span();
        // (`Some(None)`: handled, the error already reported.)
        let Some(x) = x else { return Some(None) };
        Some(self.layout(name, usage, x, &args[1..], span))
    }

    /// `x.squeeze(..)`, `x.swapaxes(a, b)` and `x.broadcast(shape).unwrap()`
    /// (ndarray's `broadcast` gives an `Option`), if `m` is one.
    pub(crate) fn lower_layout_method(&mut self, m: &syn::ExprMethodCall) -> Option<Option<Var>> {
        let name = m.method.to_string();
        let (name, call, receiver) = match name.as_str() {
            "squeeze" | "swapaxes" => (name, m, &m.receiver),
            "unwrap" | "expect" => match strip(&m.receiver) {
                Expr::MethodCall(inner) if inner.method == "broadcast" && inner.args.len() == 1 => {
                    ("broadcast_to".to_string(), inner, &inner.receiver)
                }
                _ => return None,
            },
            _ => return None,
        };
        let args: Vec<&Expr> = call.args.iter().collect();
        let want = match name.as_str() {
            "squeeze" => args.len() <= 1,
            "swapaxes" => args.len() == 2,
            _ => true,
        };
        let usage = match name.as_str() {
            "squeeze" => "x.squeeze()` or `x.squeeze(Axis(k))",
            "swapaxes" => "x.swapaxes(a, b)",
            _ => "x.broadcast(shape).unwrap()",
        };
        if !want {
            self.errors.at(
                call.paren_token.span.join(),
                format!("`{name}` takes `{usage}`"),
            );
            return Some(None);
        }
        let x = self.lower_expr(receiver);
        let span = self.method_span(m);
        let Some(x) = x else { return Some(None) };
        Some(self.layout(&name, usage, x, &args, span))
    }

    /// `name` applied to `x` with the arguments after the array.
    fn layout(
        &mut self,
        name: &str,
        usage: &str,
        x: Var,
        args: &[&Expr],
        span: Span,
    ) -> Option<Var> {
        let dims = self.f.shape(x).0.clone();
        let rank = dims.len();
        match name {
            "expand_dims" => {
                let k = self.layout_axis(args[0], name, rank + 1)?;
                let mut dims = dims;
                dims.insert(k, Dim::Const(1));
                self.push(Op::Reshape { shape: Shape(dims) }, &[x], span)
            }
            "squeeze" => {
                let kept: Vec<Dim> = match args.first() {
                    None => dims.into_iter().filter(|d| *d != Dim::Const(1)).collect(),
                    Some(a) => {
                        let k = self.layout_axis(a, name, rank)?;
                        if dims[k] != Dim::Const(1) {
                            self.errors.spanned(
                                a,
                                format!(
                                    "`squeeze` removes an axis of size 1, but axis {k} has size {}",
                                    dims[k]
                                ),
                            );
                            return None;
                        }
                        let mut dims = dims;
                        dims.remove(k);
                        dims
                    }
                };
                self.push(Op::Reshape { shape: Shape(kept) }, &[x], span)
            }
            "swapaxes" => {
                let a = self.layout_axis(args[0], name, rank);
                let b = self.layout_axis(args[1], name, rank);
                let mut perm: Vec<usize> = (0..rank).collect();
                perm.swap(a?, b?);
                self.push(Op::Transpose { perm }, &[x], span)
            }
            "moveaxis" => {
                let src = self.layout_axis(args[0], name, rank);
                let dst = self.layout_axis(args[1], name, rank);
                let (src, dst) = (src?, dst?);
                let mut perm: Vec<usize> = (0..rank).filter(|a| *a != src).collect();
                perm.insert(dst, src);
                self.push(Op::Transpose { perm }, &[x], span)
            }
            "broadcast_to" => {
                let target = self.shape_arg(args[0], name)?;
                self.broadcast_to(x, &target, args[0], usage, span)
            }
            "tile" => {
                let reps: Option<Vec<u64>> = match strip(args[0]) {
                    Expr::Tuple(t) => t.elems.iter().map(count).collect(),
                    Expr::Array(a) => a.elems.iter().map(count).collect(),
                    e => count(e).map(|n| vec![n]),
                };
                let Some(reps) = reps else {
                    self.errors.spanned(
                        args[0],
                        "`tile` takes its repetitions as integer literals: `tile(x, 3)`, `tile(x, (2, 3))`",
                    );
                    return None;
                };
                self.tile(x, reps, args[0], span)
            }
            "repeat" => {
                let Some(n) = count(args[0]) else {
                    self.errors.spanned(
                        args[0],
                        "`repeat` takes its count as an integer literal: `repeat(x, 2, Axis(k))`",
                    );
                    return None;
                };
                let (x, k) = match args.get(1) {
                    Some(a) => (x, self.layout_axis(a, name, rank)?),
                    None => {
                        // Without an axis, numpy repeats the flattened array.
                        let numel = self.f.shape(x).numel();
                        let flat = match (numel.syms.as_slice(), numel.factor) {
                            ([], c) => Dim::Const(c),
                            ([s], 1) => Dim::Sym(s.clone()),
                            _ => {
                                self.errors.at(
                                    span,
                                    format!("`repeat` without an axis flattens {}, whose length is a product of run-time sizes oxla cannot name: give the axis, `repeat(x, n, Axis(k))`", self.f.ty(x)),
                                );
                                return None;
                            }
                        };
                        let flat = self.push(
                            Op::Reshape {
                                shape: Shape(vec![flat]),
                            },
                            &[x],
                            span,
                        )?;
                        (flat, 0)
                    }
                };
                self.repeat(x, n, k, args[0], span)
            }
            _ => None,
        }
    }

    /// An axis argument of `name` among `positions` (`Axis(k)` or `k`,
    /// negative from the end).
    fn layout_axis(&mut self, e: &Expr, name: &str, positions: usize) -> Option<usize> {
        let Some(k) = signed_axis(e) else {
            self.errors.spanned(
                e,
                format!("`{name}` takes an axis as `Axis(k)` or an integer literal `k` (negative from the end)"),
            );
            return None;
        };
        let a = if k < 0 { k + positions as i64 } else { k };
        match usize::try_from(a).ok().filter(|a| *a < positions) {
            Some(a) => Some(a),
            None => {
                self.errors.spanned(
                    e,
                    format!("`{name}`: axis {k} is out of range for {positions} positions"),
                );
                None
            }
        }
    }

    /// numpy's `broadcast_to`: `x`'s axes aligned with `target`'s last ones,
    /// each equal to its target axis or 1 (then dropped and broadcast).
    fn broadcast_to(
        &mut self,
        x: Var,
        target: &Shape,
        at: &Expr,
        usage: &str,
        span: Span,
    ) -> Option<Var> {
        let dims = self.f.shape(x).0.clone();
        let offset = target.rank().checked_sub(dims.len());
        let Some(offset) = offset else {
            self.errors.spanned(
                at,
                format!(
                    "`{usage}`: {} has more axes than the shape {target}",
                    self.f.ty(x)
                ),
            );
            return None;
        };
        let mut kept = Vec::new();
        let mut kept_dims = Vec::new();
        for (i, d) in dims.iter().enumerate() {
            let t = &target.0[offset + i];
            if d == t || (*d != Dim::Const(1) && self.unify(d, t)) {
                kept.push(offset + i);
                kept_dims.push(t.clone());
            } else if *d != Dim::Const(1) {
                self.errors.spanned(
                    at,
                    format!(
                        "cannot broadcast {} to {target}: axis {i} has size {d}, the target's {t}",
                        self.f.ty(x)
                    ),
                );
                return None;
            }
        }
        let x = match kept_dims.len() == dims.len() {
            true => x,
            false => self.push(
                Op::Reshape {
                    shape: Shape(kept_dims),
                },
                &[x],
                span,
            )?,
        };
        self.push(
            Op::Broadcast {
                shape: target.clone(),
                dims: kept,
            },
            &[x],
            span,
        )
    }

    /// numpy's `tile`: `reps` and `x`'s axes aligned from the end (the
    /// shorter padded with 1s); each axis with factor `r` is `r` copies of
    /// itself joined (`concatenate`, whose size `(n+n+…)` has a name also
    /// when `n` is known only at run time).
    fn tile(&mut self, x: Var, reps: Vec<u64>, at: &Expr, span: Span) -> Option<Var> {
        let mut dims = self.f.shape(x).0.clone();
        let rank = dims.len().max(reps.len());
        let mut reps = reps;
        while reps.len() < rank {
            reps.insert(0, 1);
        }
        if reps.contains(&0) {
            self.errors
                .spanned(at, "`tile` takes repetitions of at least 1");
            return None;
        }
        let mut x = x;
        if dims.len() < rank {
            while dims.len() < rank {
                dims.insert(0, Dim::Const(1));
            }
            x = self.push(Op::Reshape { shape: Shape(dims) }, &[x], span)?;
        }
        for (axis, r) in reps.iter().enumerate() {
            if *r > 1 {
                x = concatenate(&mut self.f, &vec![x; *r as usize], axis);
            }
        }
        Some(x)
    }

    /// numpy's `repeat` along axis `k`: each element `n` times in a row, by
    /// broadcasting to a new axis of size `n` after `k` and merging the two;
    /// on an axis of run-time size `d`, whose product `d · n` a reshape
    /// cannot name, a gather of the indices `⌊i / n⌋` for `i` below the
    /// derived size `(d+d+…)`.
    fn repeat(&mut self, x: Var, n: u64, k: usize, at: &Expr, span: Span) -> Option<Var> {
        let dims = self.f.shape(x).0.clone();
        if n == 0 {
            self.errors
                .spanned(at, "`repeat` takes a count of at least 1");
            return None;
        }
        let Dim::Const(d) = dims[k] else {
            let long = derived::sum(&vec![dims[k].clone(); n as usize]);
            let i = self.push(
                Op::Iota {
                    shape: Shape(vec![long]),
                    axis: 0,
                    dtype: DType::F64,
                },
                &[],
                span,
            )?;
            let by = self.f.full_like(n as f64, i);
            let ratio = self.push(Op::Binary(BinaryOp::Div), &[i, by], span)?;
            let q = self.push(Op::Unary(UnaryOp::Round(Rounding::Floor)), &[ratio], span)?;
            let q = self.push(Op::Convert { dtype: DType::I64 }, &[q], span)?;
            return self.push(Op::Gather { axis: k, batch: 0 }, &[x, q], span);
        };
        let merged = Dim::Const(d * n);
        let mut wide = dims.clone();
        wide.insert(k + 1, Dim::Const(n));
        let from: Vec<usize> = (0..dims.len())
            .map(|i| if i <= k { i } else { i + 1 })
            .collect();
        let x = self.push(
            Op::Broadcast {
                shape: Shape(wide),
                dims: from,
            },
            &[x],
            span,
        )?;
        let mut out = dims;
        out[k] = merged;
        self.push(Op::Reshape { shape: Shape(out) }, &[x], span)
    }
}
