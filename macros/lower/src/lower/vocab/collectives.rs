//! Collectives (JAX's `lax.psum`, …) over a named axis, each lowered to
//! the IR's `collective` op (`oxla_core::ops::collective`):
//!
//! | written | IR |
//! |---|---|
//! | `psum(x, i)`, `pmax(x, i)`, `pmin(x, i)` | `psum[i]`, `pmax[i]`, `pmin[i]` |
//! | `pmean(x, i)` | `psum[i]` divided by the axis's size (`dim_size`) |
//! | `all_gather(x, i)`, `all_gather(x, i, k)` (stacked along a new axis `k`, default 0) | `all_gather[i,k]` |
//! | `psum_scatter(x, i)`, `psum_scatter(x, i, k)` (axis `k` of the axis's size scattered, default 0; not tiled) | `psum_scatter[i,k]` |
//! | `ppermute(x, i, [(0, 1), (1, 2)])` (`(source, destination)` pairs of integer literals) | `ppermute[i;0>1;1>2]` |
//! | `all_to_all(x, i, split, concat)` | `all_to_all[i,split,concat]` |
//! | `axis_index(i)` | `axis_index[i]`, an integer scalar (`i64`, as `x.len()`; `as f64` converts it) |
//! | `axis_size(i)` | `dim_size` of the axis's symbol, an integer scalar as `x.len()` (`as f64` folds back to the size) |
//!
//! The axis `i` is the `axis_name` of an enclosing `#[pmap]` or named
//! `#[vmap]`, written as an identifier or a string literal (`psum(x, "i")`):
//! it names an axis, never a variable of the body. `x` is a float scalar or
//! array, by value or by reference (`&x`). Integer arguments are literals,
//! as JAX's are static. Each axis name's first use is remembered
//! (`Lowerer::axis_spans`): a name no attribute binds is an error there.

use crate::lower::vocab::arrays::{axis_arg, strip};
use crate::lower::Lowerer;
use oxla_core::ops::collective::{
    axis_dim, check_perm, collective, pmean, Collective, CollectiveKind,
};
use oxla_core::{DType, Op, Var};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::Expr;

/// The collectives, name and usage (`i` the `axis_name` of a `#[pmap]` or
/// `#[vmap]`).
pub(crate) const COLLECTIVE_FUNCTIONS: &[(&str, &str)] = &[
    ("psum", "psum(x, i)"),
    ("pmean", "pmean(x, i)"),
    ("pmax", "pmax(x, i)"),
    ("pmin", "pmin(x, i)"),
    ("all_gather", "all_gather(x, i[, axis])"),
    ("psum_scatter", "psum_scatter(x, i[, axis])"),
    ("ppermute", "ppermute(x, i, [(src, dst), …])"),
    ("all_to_all", "all_to_all(x, i, split_axis, concat_axis)"),
    ("axis_index", "axis_index(i)"),
    ("axis_size", "axis_size(i)"),
];

/// How each collective is called.
fn usage(name: &str) -> &'static str {
    match name {
        "axis_index" => "the axis: `axis_index(i)`",
        "axis_size" => "the axis: `axis_size(i)`",
        "psum" => "an operand and the axis: `psum(x, i)`",
        "pmean" => "an operand and the axis: `pmean(x, i)`",
        "pmax" => "an operand and the axis: `pmax(x, i)`",
        "pmin" => "an operand and the axis: `pmin(x, i)`",
        "all_gather" => {
            "an operand, the axis and optionally the new axis's position: `all_gather(x, i)` or `all_gather(x, i, 1)`"
        }
        "psum_scatter" => {
            "an operand, the axis and optionally the axis to scatter: `psum_scatter(x, i)` or `psum_scatter(x, i, 1)`"
        }
        "ppermute" => {
            "an operand, the axis and `(source, destination)` pairs: `ppermute(x, i, [(0, 1), (1, 0)])`"
        }
        _ => {
            "an operand, the axis, the axis to split and where to stack: `all_to_all(x, i, 0, 0)`"
        }
    }
}

/// An integer literal (`2`), or `Axis(2)`.
fn int_literal(e: &Expr) -> Option<usize> {
    match strip(e) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<usize>().ok(),
        e => axis_arg(e),
    }
}

/// `[(0, 1), (1, 2)]` or `&[(0, 1)]` of integer literals.
fn perm_literal(e: &Expr) -> Option<Vec<(usize, usize)>> {
    let Expr::Array(a) = strip(e) else {
        return None;
    };
    a.elems
        .iter()
        .map(|p| match strip(p) {
            Expr::Tuple(t) if t.elems.len() == 2 => {
                Some((int_literal(&t.elems[0])?, int_literal(&t.elems[1])?))
            }
            _ => None,
        })
        .collect()
}

impl Lowerer<'_> {
    /// A collective call `name(…)`, if `name` is one.
    pub(crate) fn lower_collective_call(
        &mut self,
        name: &str,
        c: &syn::ExprCall,
    ) -> Option<Option<Var>> {
        if !COLLECTIVE_FUNCTIONS.iter().any(|(n, _)| *n == name) {
            return None;
        }
        Some(self.collective_call(name, c))
    }

    fn collective_call(&mut self, name: &str, c: &syn::ExprCall) -> Option<Var> {
        let args: Vec<&Expr> = c.args.iter().collect();
        let (lo, hi) = match name {
            "axis_index" | "axis_size" => (1, 1),
            "psum" | "pmean" | "pmax" | "pmin" => (2, 2),
            "all_gather" | "psum_scatter" => (2, 3),
            "ppermute" => (3, 3),
            _ => (4, 4),
        };
        if args.len() < lo || args.len() > hi {
            self.errors.at(
                c.paren_token.span.join(),
                format!("`{name}` takes {}", usage(name)),
            );
            return None;
        }
        let span = c.span();
        if lo == 1 {
            let axis = self.axis_name_arg(args[0], name)?;
            return if name == "axis_index" {
                let kind = CollectiveKind::AxisIndex { dtype: DType::I64 };
                self.push(Op::Collective(Collective::new(kind, &axis)), &[], span)
            } else {
                // As `x.len()`: the size in the float type, then `i64`.
                let n = self.push(
                    Op::DimSize {
                        dim: axis_dim(&axis),
                        dtype: self.dtype,
                    },
                    &[],
                    span,
                )?;
                self.push(Op::Convert { dtype: DType::I64 }, &[n], span)
            };
        }
        let x = self.lower_expr(args[0]);
        let axis = self.axis_name_arg(args[1], name);
        let (x, axis) = (x?, axis?);
        let ty = self.f.ty(x).clone();
        if !ty.dtype.is_float() {
            self.errors.spanned(
                args[0],
                format!("`{name}` takes a float scalar or array, got {ty}"),
            );
            return None;
        }
        let rank = ty.shape.rank();
        // An integer literal argument (`what` it is), checked by `ok`.
        let literal = |lw: &mut Self, e: &Expr, what: &str, ok: &dyn Fn(usize) -> bool| {
            match int_literal(e) {
                Some(k) if ok(k) => Some(k),
                Some(k) => {
                    lw.errors.spanned(
                        e,
                        format!(
                            "`{name}`: {what} {k} is out of range for an operand of shape {}",
                            ty.shape
                        ),
                    );
                    None
                }
                None => {
                    lw.errors.spanned(
                        e,
                        format!(
                            "`{name}` takes {what} as an integer literal: {}",
                            usage(name)
                        ),
                    );
                    None
                }
            }
        };
        let kind = match name {
            "psum" | "pmean" => CollectiveKind::Psum,
            "pmax" => CollectiveKind::Pmax,
            "pmin" => CollectiveKind::Pmin,
            "all_gather" => {
                let axis = match args.get(2) {
                    Some(e) => literal(self, e, "the new axis", &|k| k <= rank)?,
                    None => 0,
                };
                CollectiveKind::AllGather { axis }
            }
            "psum_scatter" => {
                if rank == 0 {
                    self.errors.spanned(
                        args[0],
                        "`psum_scatter` scatters an axis of its operand across the devices, but this is a scalar: use `psum` (or scatter an array)",
                    );
                    return None;
                }
                let axis = match args.get(2) {
                    Some(e) => literal(self, e, "the scattered axis", &|k| k < rank)?,
                    None => 0,
                };
                CollectiveKind::PsumScatter { axis }
            }
            "ppermute" => {
                let Some(perm) = perm_literal(args[2]) else {
                    self.errors.spanned(
                        args[2],
                        "`ppermute` takes its permutation as a literal array of `(source, destination)` pairs of integer literals: `ppermute(x, i, [(0, 1), (1, 0)])`",
                    );
                    return None;
                };
                if let Err(e) = check_perm(&perm) {
                    self.errors.spanned(
                        args[2],
                        format!("`ppermute`: {e}; each device is a source at most once and a destination at most once"),
                    );
                    return None;
                }
                CollectiveKind::Ppermute { perm }
            }
            _ => {
                let split = literal(self, args[2], "the split axis", &|k| k < rank);
                let concat = literal(self, args[3], "the concat axis", &|k| k < rank);
                CollectiveKind::AllToAll {
                    split: split?,
                    concat: concat?,
                }
            }
        };
        let r = if name == "pmean" {
            pmean(&mut self.f, x, &axis)
        } else {
            collective(&mut self.f, kind, &axis, Some(x))
        };
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.errors.at(span, format!("`{name}`: {e}"));
                None
            }
        }
    }

    /// The axis argument of a collective: an identifier (`i`) or a string
    /// literal (`"i"`), remembered with its span.
    fn axis_name_arg(&mut self, e: &Expr, name: &str) -> Option<String> {
        let (axis, span) = match crate::lower::strip_parens(e) {
            Expr::Path(p)
                if p.qself.is_none()
                    && p.path.leading_colon.is_none()
                    && p.path.get_ident().is_some() =>
            {
                let id = p.path.get_ident()?;
                (Some(crate::lower::ident_name(id)), id.span())
            }
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => (crate::parse::attr::axis_name_of_str(&s.value()), s.span()),
            _ => (None, Span::call_site()),
        };
        let Some(axis) = axis else {
            self.errors.spanned(
                e,
                format!(
                    "the axis of `{name}` is the `axis_name` of an enclosing `#[pmap]` or `#[vmap]`, written as an identifier or a string literal (`{name}({}i)` or `{name}({}\"i\")`), not an expression",
                    if matches!(name, "axis_index" | "axis_size") { "" } else { "x, " },
                    if matches!(name, "axis_index" | "axis_size") { "" } else { "x, " },
                ),
            );
            return None;
        };
        if !self.axis_spans.iter().any(|(n, _)| *n == axis) {
            self.axis_spans.push((axis.clone(), span));
        }
        Some(axis)
    }
}
