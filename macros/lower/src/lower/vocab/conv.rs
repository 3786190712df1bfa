//! Convolution and pooling, as JAX spells them (see `oxla_core::ops::conv`
//! and `oxla_core::ops::pool`):
//!
//! | written | IR |
//! |---|---|
//! | `conv(x, w, strides, padding)` (`lax.conv`: NCHW / OIHW) | `conv` |
//! | `conv_general_dilated(x, w, strides, padding[, lhs_dilation, rhs_dilation[, ("NHWC", "HWIO", "NHWC")[, feature_group_count]]])` | `transpose`s around a `conv` |
//! | `max_pool(x, window, strides, padding)`, `avg_pool(..)` (NCHW: the window over the spatial axes) | `reduce_window` over those axes |
//! | `reduce_window_max(x, window, strides, padding)`, `reduce_window_sum(..)` (a window size per axis) | `conv`s, selects and reductions (`ops::pool`) |
//!
//! Every parameter is read when the macro runs: sizes are integer
//! literals in `[..]` or `(..)` (or one literal for every spatial axis);
//! padding is `Padding::Same`, `Padding::Valid`, `"SAME"`, `"VALID"` or
//! explicit `[(low, high), ..]` pairs (negative crops, as JAX).

use crate::lower::vocab::slicing::int_lit;
use crate::lower::Lowerer;
use oxla_core::ops::conv::{conv_general_dilated, ConvDims, Padding};
use oxla_core::ops::pool::{reduce_window, WindowReduce};
use oxla_core::Var;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::Expr;

/// The functions handled here, name and usage.
pub(crate) const CONV_FUNCTIONS: &[(&str, &str)] = &[
    ("conv", "conv(x, w, strides, padding)"),
    (
        "conv_general_dilated",
        "conv_general_dilated(x, w, strides, padding[, lhs_dilation, rhs_dilation[, (\"NCHW\", \"OIHW\", \"NCHW\")[, feature_group_count]]])",
    ),
    ("max_pool", "max_pool(x, window, strides, padding)"),
    ("avg_pool", "avg_pool(x, window, strides, padding)"),
    (
        "reduce_window_max",
        "reduce_window_max(x, window, strides, padding)",
    ),
    (
        "reduce_window_sum",
        "reduce_window_sum(x, window, strides, padding)",
    ),
];

const PADDING_FORMS: &str =
    "`Padding::Same`, `Padding::Valid`, `\"SAME\"`, `\"VALID\"` or `[(low, high), ..]` pairs of integer literals";

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        Expr::Reference(r) if r.mutability.is_none() => strip(&r.expr),
        e => e,
    }
}

/// The elements of `[a, b]` or `(a, b)`.
fn elements(e: &Expr) -> Option<Vec<&Expr>> {
    match strip(e) {
        Expr::Array(a) => Some(a.elems.iter().collect()),
        Expr::Tuple(t) => Some(t.elems.iter().collect()),
        _ => None,
    }
}

/// Sizes: `[2, 2]`, `(2, 2)`, or one literal repeated `n` times.
fn sizes(e: &Expr, n: usize) -> Option<Vec<u64>> {
    if let Some(v) = int_lit(e) {
        return (v >= 1).then(|| vec![v as u64; n]);
    }
    let v: Vec<u64> = elements(e)?
        .into_iter()
        .map(|x| int_lit(x).filter(|v| *v >= 1).map(|v| v as u64))
        .collect::<Option<_>>()?;
    (v.len() == n).then_some(v)
}

fn string_lit(e: &Expr) -> Option<String> {
    match strip(e) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value()),
        _ => None,
    }
}

/// `Padding::Same`, `"VALID"`, `[(1, 1), (0, 2)]`, …
fn padding(e: &Expr, n: usize) -> Option<Padding> {
    if let Some(s) = string_lit(e) {
        return match s.as_str() {
            "SAME" => Some(Padding::Same),
            "VALID" => Some(Padding::Valid),
            _ => None,
        };
    }
    if let Expr::Path(p) = strip(e) {
        let segs: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        return match segs.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            [.., "Padding", "Same"] => Some(Padding::Same),
            [.., "Padding", "Valid"] => Some(Padding::Valid),
            _ => None,
        };
    }
    let pairs: Vec<(i64, i64)> = elements(e)?
        .into_iter()
        .map(|p| match elements(p)?[..] {
            [lo, hi] => Some((int_lit(lo)?, int_lit(hi)?)),
            _ => None,
        })
        .collect::<Option<_>>()?;
    (pairs.len() == n).then_some(Padding::Explicit(pairs))
}

/// JAX's `conv_dimension_numbers` from three layout strings: the batch
/// (`N`) and feature (`C`) letters of the input and the result, the
/// output (`O`) and input (`I`) feature letters of the kernel; the spatial
/// axes in the kernel's order.
fn dimension_numbers(lhs: &str, rhs: &str, out: &str) -> Result<ConvDims, String> {
    let rank = lhs.len();
    if rhs.len() != rank || out.len() != rank {
        return Err(format!(
            "the three layouts must have one length, got \"{lhs}\", \"{rhs}\", \"{out}\""
        ));
    }
    let find = |spec: &str, c: char| spec.chars().position(|d| d == c);
    let rhs_spatial: Vec<char> = rhs.chars().filter(|c| *c != 'O' && *c != 'I').collect();
    let spec = |s: &str, a: char, b: char| -> Result<Vec<usize>, String> {
        let mut v = vec![
            find(s, a).ok_or(format!("\"{s}\" has no `{a}`"))?,
            find(s, b).ok_or(format!("\"{s}\" has no `{b}`"))?,
        ];
        for c in &rhs_spatial {
            v.push(find(s, *c).ok_or(format!("\"{s}\" has no spatial `{c}` of the kernel's"))?);
        }
        let mut seen = v.clone();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != rank {
            return Err(format!("\"{s}\" names a letter twice"));
        }
        Ok(v)
    };
    Ok(ConvDims {
        lhs: spec(lhs, 'N', 'C')?,
        rhs: spec(rhs, 'O', 'I')?,
        out: spec(out, 'N', 'C')?,
    })
}

impl Lowerer<'_> {
    /// A convolution or pooling function, if `name` is one (else `None`).
    pub(crate) fn lower_conv_call(&mut self, name: &str, c: &syn::ExprCall) -> Option<Option<Var>> {
        let usage = CONV_FUNCTIONS.iter().find(|(n, _)| *n == name)?.1;
        let args: Vec<&Expr> = c.args.iter().collect();
        let (lo, hi) = match name {
            "conv_general_dilated" => (4, 8),
            "conv" => (4, 4),
            _ => (4, 4),
        };
        if args.len() < lo || args.len() > hi || args.len() == 5 {
            self.errors.at(
                c.paren_token.span.join(),
                format!("`{name}` takes `{usage}`"),
            );
            return Some(None);
        }
        let span = c.span();
        let x = self.lower_expr(args[0]);
        if name.starts_with("conv") {
            let w = self.lower_expr(args[1]);
            let (Some(x), Some(w)) = (x, w) else {
                return Some(None);
            };
            return Some(self.conv(name, usage, x, w, &args, span));
        }
        let x = x?;
        Some(self.pool(name, usage, x, &args, span))
    }

    fn conv(
        &mut self,
        name: &str,
        usage: &str,
        x: Var,
        w: Var,
        args: &[&Expr],
        span: Span,
    ) -> Option<Var> {
        let rank = self.f.shape(x).rank();
        if rank < 3 || !self.f.dtype(x).is_float() {
            self.errors.spanned(
                args[0],
                format!(
                    "`{name}` takes a float input with a batch, a feature and at least one spatial axis, got {}",
                    self.f.ty(x)
                ),
            );
            return None;
        }
        let s = rank - 2;
        let list = |this: &mut Self, k: usize, what: &str| -> Option<Vec<u64>> {
            match args.get(k) {
                None => Some(vec![1; s]),
                Some(e) => sizes(e, s).or_else(|| {
                    this.errors.spanned(
                        e,
                        format!("`{name}`'s {what}: {s} integer literals >= 1, as `[2, 2]` (or one for every spatial axis): `{usage}`"),
                    );
                    None
                }),
            }
        };
        let strides = list(self, 2, "strides")?;
        let Some(pad) = padding(args[3], s) else {
            self.errors.spanned(
                args[3],
                format!("`{name}`'s padding: {PADDING_FORMS} (one pair per spatial axis, {s})"),
            );
            return None;
        };
        let lhs_dilation = list(self, 4, "lhs_dilation")?;
        let rhs_dilation = list(self, 5, "rhs_dilation")?;
        let dims = match args.get(6) {
            None => ConvDims::nchw(s),
            Some(e) => {
                let specs: Option<Vec<String>> =
                    elements(e).and_then(|v| v.into_iter().map(string_lit).collect());
                let parsed = match specs.as_deref() {
                    Some([l, r, o]) => dimension_numbers(l, r, o),
                    _ => Err("expected three string literals".to_string()),
                };
                match parsed {
                    Ok(d) => d,
                    Err(why) => {
                        self.errors.spanned(
                            e,
                            format!("`{name}`'s dimension numbers: {why}: as `(\"NHWC\", \"HWIO\", \"NHWC\")`"),
                        );
                        return None;
                    }
                }
            }
        };
        let groups = match args.get(7) {
            None => 1,
            Some(e) => match int_lit(e).filter(|g| *g >= 1) {
                Some(g) => g as u64,
                None => {
                    self.errors.spanned(
                        e,
                        format!("`{name}`'s feature_group_count: an integer literal >= 1"),
                    );
                    return None;
                }
            },
        };
        // One feature count for the input and the kernel (a symbol of each
        // parameter, made one).
        if groups == 1 && dims.lhs.len() == rank && dims.rhs.len() == rank {
            let c = self.f.shape(x).0[dims.lhs[1]].clone();
            let i = self.f.shape(w).0[dims.rhs[1]].clone();
            if !self.unify(&c, &i) {
                self.errors.at(
                    span,
                    format!("`{name}`: the input's {c} features differ from the kernel's {i} input features"),
                );
                return None;
            }
        }
        let out = conv_general_dilated(
            &mut self.f,
            x,
            w,
            &strides,
            &pad,
            &lhs_dilation,
            &rhs_dilation,
            &dims,
            groups,
        );
        match out {
            Ok(v) => Some(v),
            Err(e) => {
                self.errors.at(span, format!("`{name}`: {e}"));
                None
            }
        }
    }

    fn pool(&mut self, name: &str, usage: &str, x: Var, args: &[&Expr], span: Span) -> Option<Var> {
        let rank = self.f.shape(x).rank();
        let spatial_only = name.ends_with("_pool");
        if !self.f.dtype(x).is_float() || (spatial_only && rank < 3) || rank == 0 {
            let want = if spatial_only {
                "an NCHW float input (a batch, a feature and at least one spatial axis)"
            } else {
                "a float array"
            };
            self.errors.spanned(
                args[0],
                format!("`{name}` takes {want}, got {}", self.f.ty(x)),
            );
            return None;
        }
        // The pools' window covers the spatial axes; reduce_window's every axis.
        let n = if spatial_only { rank - 2 } else { rank };
        let mut read = |k: usize, what: &str| {
            sizes(args[k], n).or_else(|| {
                self.errors.spanned(
                    args[k],
                    format!("`{name}`'s {what}: {n} integer literals >= 1, as `[2, 2]`: `{usage}`"),
                );
                None
            })
        };
        let window = read(1, "window");
        let strides = read(2, "strides");
        let pad = padding(args[3], n);
        if pad.is_none() {
            self.errors.spanned(
                args[3],
                format!("`{name}`'s padding: {PADDING_FORMS} ({n} pairs)"),
            );
        }
        let (mut window, mut strides, mut pad) = (window?, strides?, pad?);
        if spatial_only {
            window.splice(0..0, [1, 1]);
            strides.splice(0..0, [1, 1]);
            if let Padding::Explicit(p) = &mut pad {
                p.splice(0..0, [(0, 0), (0, 0)]);
            }
        }
        let how = match name {
            "max_pool" | "reduce_window_max" => WindowReduce::Max,
            "avg_pool" => WindowReduce::Mean,
            _ => WindowReduce::Sum,
        };
        match reduce_window(&mut self.f, x, how, &window, &strides, &pad) {
            Ok(v) => Some(v),
            Err(e) => {
                self.errors.at(span, format!("`{name}`: {e}"));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::tests::{lower, lower_errors};
    use quote::quote;

    #[test]
    fn conv_and_pools_lower_to_conv_ops() {
        let f = lower(quote! {
            fn f(x: ArrayView4<f64>, w: ArrayView4<f64>) -> f64 {
                let y = conv_general_dilated(x, w, [2, 1], "SAME", 1, [1, 2], ("NHWC", "HWIO", "NHWC"));
                max_pool(y, [2, 2], [2, 2], Padding::Valid).sum()
            }
        });
        let convs = f
            .eqns
            .iter()
            .filter(|e| matches!(e.op, oxla_core::Op::Conv(_)))
            .count();
        // The convolution and the max pool's taps.
        assert_eq!(convs, 2);
    }

    #[test]
    fn bad_parameters_are_spanned_errors_naming_the_forms() {
        let errors = lower_errors(quote! {
            fn f(x: ArrayView4<f64>, w: ArrayView4<f64>) -> f64 {
                conv(x, w, [2, 2], "FULL").sum()
            }
        });
        assert!(
            errors.iter().any(|e| e.contains("`Padding::Same`")),
            "{errors:?}"
        );
        let errors = lower_errors(quote! {
            fn f(x: ArrayView4<f64>, w: ArrayView4<f64>) -> f64 {
                conv(x, w, [2, 2, 2], Padding::Valid).sum()
            }
        });
        assert!(
            errors
                .iter()
                .any(|e| e.contains("strides: 2 integer literals")),
            "{errors:?}"
        );
        let errors = lower_errors(quote! {
            fn f(x: ArrayView4<f64>, w: ArrayView4<f64>) -> f64 {
                conv_general_dilated(x, w, 1, "VALID", 1, 1, ("NCHW", "OIHW", "NCH")).sum()
            }
        });
        assert!(
            errors.iter().any(|e| e.contains("dimension numbers")),
            "{errors:?}"
        );
        let errors = lower_errors(quote! {
            fn f(x: ArrayView4<f64>, w: ArrayView4<f64>) -> f64 {
                conv_general_dilated(x, w, 1, "VALID", 1, 1, ("NCHW", "OIHW", "NCHW"), 2).sum()
            }
        });
        assert!(
            errors.iter().any(|e| e.contains("feature groups")),
            "{errors:?}"
        );
    }
}
