//! The attribute grammar:
//!
//! ```text
//! #[jit]            #[jit(name)]
//! #[grad(name)]     #[grad(name, wrt = x)]     #[grad(name, wrt = (x, y))]
//! #[value_and_grad(name)]    #[value_and_grad(name, wrt = …)]
//! #[jvp(name)]      #[vjp(name)]
//! #[vmap(name)]     #[vmap(name, in_axes = (0, None, 1), out_axes = 0)]   (or `in_axes = 0`)
//! #[jacfwd(name, wrt = x)]   #[jacrev(name, wrt = x)]   #[hessian(name, wrt = x)]
//! ```
//!
//! Each may be written as a path (`oxla::grad`, `::oxla::grad`).

use crate::errors::Errors;
use proc_macro2::{Span, TokenStream};
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Ident, Token};

/// Which transform an attribute asks for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TransformKind {
    Jit,
    Grad,
    ValueAndGrad,
    Jvp,
    Vjp,
    Vmap,
    Jacfwd,
    Jacrev,
    Hessian,
}

impl TransformKind {
    pub const ALL: [TransformKind; 9] = [
        TransformKind::Jit,
        TransformKind::Grad,
        TransformKind::ValueAndGrad,
        TransformKind::Jvp,
        TransformKind::Vjp,
        TransformKind::Vmap,
        TransformKind::Jacfwd,
        TransformKind::Jacrev,
        TransformKind::Hessian,
    ];

    /// The attribute's name.
    pub fn name(self) -> &'static str {
        match self {
            TransformKind::Jit => "jit",
            TransformKind::Grad => "grad",
            TransformKind::ValueAndGrad => "value_and_grad",
            TransformKind::Jvp => "jvp",
            TransformKind::Vjp => "vjp",
            TransformKind::Vmap => "vmap",
            TransformKind::Jacfwd => "jacfwd",
            TransformKind::Jacrev => "jacrev",
            TransformKind::Hessian => "hessian",
        }
    }

    pub fn from_name(s: &str) -> Option<TransformKind> {
        TransformKind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// The named arguments the attribute accepts, with an example of each.
    fn keys(self) -> &'static [(&'static str, &'static str)] {
        match self {
            TransformKind::Grad | TransformKind::ValueAndGrad => {
                &[("wrt", "`wrt = x` or `wrt = (x, y)`")]
            }
            TransformKind::Vmap => &[
                ("in_axes", "`in_axes = (0, None, …)`"),
                ("out_axes", "`out_axes = 1` or `out_axes = (0, 1)`"),
            ],
            TransformKind::Jacfwd | TransformKind::Jacrev | TransformKind::Hessian => {
                &[("wrt", "`wrt = x`")]
            }
            TransformKind::Jit | TransformKind::Jvp | TransformKind::Vjp => &[],
        }
    }

    fn usage(self) -> String {
        let n = self.name();
        match self {
            TransformKind::Jit => "`#[jit]` or `#[jit(name)]`".to_string(),
            TransformKind::Grad | TransformKind::ValueAndGrad => {
                format!("`#[{n}(name)]`, `#[{n}(name, wrt = x)]` or `#[{n}(name, wrt = (x, y))]`")
            }
            TransformKind::Vmap => {
                "`#[vmap(name)]` or `#[vmap(name, in_axes = (0, None, …), out_axes = …)]`"
                    .to_string()
            }
            TransformKind::Jacfwd | TransformKind::Jacrev | TransformKind::Hessian => {
                format!("`#[{n}(name)]` or `#[{n}(name, wrt = x)]`")
            }
            TransformKind::Jvp | TransformKind::Vjp => format!("`#[{n}(name)]`"),
        }
    }
}

/// `in_axes`: per parameter, `Some(k)` batched along axis `k` or `None`
/// shared by every example; `out_axes`: per result, the axis the batch goes
/// to, or `None` for a result the same for every example.
#[derive(Clone, Debug, PartialEq)]
pub enum InAxes {
    /// `in_axes = 0` or `in_axes = None`: the same for every parameter.
    All(Option<usize>),
    /// `in_axes = (0, None, …)`: one entry per parameter.
    Each(Vec<Option<usize>>),
}

/// One parsed oxla attribute.
#[derive(Clone, Debug)]
pub struct TransformAttr {
    pub kind: TransformKind,
    /// The function to generate; `None` only for a bare `#[jit]`.
    pub name: Option<Ident>,
    /// `wrt = …`: the parameters to differentiate with respect to.
    pub wrt: Option<Vec<Ident>>,
    /// `in_axes = …`, with the span of its value.
    pub in_axes: Option<(InAxes, Span)>,
    /// `out_axes = …`, with the span of its value (every entry `Some`).
    pub out_axes: Option<(InAxes, Span)>,
    /// Where errors about the attribute as a whole point.
    pub span: Span,
}

/// Whether `path` names an oxla attribute (`grad`, `oxla::grad`, `::oxla::grad`).
pub fn oxla_attr_kind(path: &syn::Path) -> Option<TransformKind> {
    let segs: Vec<&syn::PathSegment> = path.segments.iter().collect();
    let ok_prefix = match segs.len() {
        1 => path.leading_colon.is_none(),
        2 => segs[0].ident == "oxla",
        _ => false,
    };
    let last = segs.last()?;
    if !ok_prefix || !last.arguments.is_none() {
        return None;
    }
    TransformKind::from_name(&last.ident.to_string())
}

/// Parse the arguments of one attribute (the tokens inside its parentheses).
pub fn parse_args(
    kind: TransformKind,
    args: TokenStream,
    span: Span,
    errors: &mut Errors,
) -> Option<TransformAttr> {
    let before = errors.len();
    let mut attr = TransformAttr {
        kind,
        name: None,
        wrt: None,
        in_axes: None,
        out_axes: None,
        span,
    };
    let parser = |input: ParseStream| -> syn::Result<()> {
        parse_args_inner(input, &mut attr, errors);
        Ok(())
    };
    if let Err(e) = parser.parse2(args) {
        errors.push(e);
    }
    if attr.name.is_none() && kind != TransformKind::Jit && errors.len() == before {
        errors.at(
            span,
            format!(
                "`#[{}]` needs the name of the function to generate: {}",
                kind.name(),
                kind.usage()
            ),
        );
    }
    (errors.len() == before).then_some(attr)
}

fn parse_args_inner(input: ParseStream, attr: &mut TransformAttr, errors: &mut Errors) {
    let kind = attr.kind;
    let bad = |errors: &mut Errors, span: Span, what: &str| {
        errors.at(
            span,
            format!(
                "bad argument to `#[{}]`: {what}; expected {}",
                kind.name(),
                kind.usage()
            ),
        );
    };
    if input.is_empty() {
        return;
    }
    // The name comes first, unless the first thing is `key = …`.
    if !(input.peek(Ident) && input.peek2(Token![=])) {
        match input.parse::<Ident>() {
            Ok(name) => attr.name = Some(name),
            Err(_) => {
                let span = input.span();
                let _ = input.parse::<TokenStream>();
                return bad(
                    errors,
                    span,
                    "the first argument must be the name of the function to generate",
                );
            }
        }
        if input.is_empty() {
            return;
        }
        if input.parse::<Token![,]>().is_err() {
            let span = input.span();
            let _ = input.parse::<TokenStream>();
            return bad(errors, span, "expected `,` after the name");
        }
    }
    while !input.is_empty() {
        let key: Ident = match input.parse() {
            Ok(k) => k,
            Err(_) => {
                let span = input.span();
                let _ = input.parse::<TokenStream>();
                return bad(errors, span, "expected `key = value`");
            }
        };
        let keys = kind.keys();
        let Some((_, example)) = keys.iter().find(|(k, _)| key == k) else {
            let expected = if keys.is_empty() {
                format!(
                    "`#[{}]` takes only the name of the function to generate",
                    kind.name()
                )
            } else {
                let list: Vec<&str> = keys.iter().map(|(_, e)| *e).collect();
                format!("`#[{}]` accepts {}", kind.name(), list.join(", "))
            };
            errors.at(key.span(), format!("unknown argument `{key}`: {expected}"));
            let _ = input.parse::<TokenStream>();
            return;
        };
        if input.parse::<Token![=]>().is_err() {
            let _ = input.parse::<TokenStream>();
            return errors.at(
                key.span(),
                format!("expected `=` after `{key}`: write {example}"),
            );
        }
        // The value runs to the next top-level comma.
        let mut value = TokenStream::new();
        while !input.is_empty() && !input.peek(Token![,]) {
            match input.parse::<proc_macro2::TokenTree>() {
                Ok(tt) => value.extend([tt]),
                Err(_) => break,
            }
        }
        if value.is_empty() {
            errors.at(
                key.span(),
                format!("`{key}` needs a value: write {example}"),
            );
        } else if key == "wrt" {
            if attr.wrt.is_some() {
                errors.at(key.span(), "`wrt` is given twice");
            }
            attr.wrt = parse_wrt(value, errors);
        } else if key == "in_axes" {
            if attr.in_axes.is_some() {
                errors.at(key.span(), "`in_axes` is given twice");
            }
            let span = value.span();
            attr.in_axes = parse_axes(value, "in_axes", true, errors).map(|a| (a, span));
        } else {
            if attr.out_axes.is_some() {
                errors.at(key.span(), "`out_axes` is given twice");
            }
            let span = value.span();
            attr.out_axes = parse_axes(value, "out_axes", true, errors).map(|a| (a, span));
        }
        if !input.is_empty() && input.parse::<Token![,]>().is_err() {
            let _ = input.parse::<TokenStream>();
            return;
        }
    }
}

/// `x` or `(x, y, …)`.
fn parse_wrt(value: TokenStream, errors: &mut Errors) -> Option<Vec<Ident>> {
    let expr: syn::Expr = match syn::parse2(value.clone()) {
        Ok(e) => e,
        Err(_) => {
            errors.spanned(
                value,
                "`wrt` must name parameters: `wrt = x` or `wrt = (x, y)`",
            );
            return None;
        }
    };
    let items = tuple_items(&expr);
    let mut out = Vec::new();
    for e in items {
        match e {
            syn::Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                out.push(p.path.get_ident().cloned()?);
            }
            other => {
                errors.spanned(
                    other,
                    "`wrt` must name parameters: `wrt = x` or `wrt = (x, y)`",
                );
                return None;
            }
        }
    }
    if out.is_empty() {
        errors.spanned(&expr, "`wrt` must name at least one parameter");
        return None;
    }
    Some(out)
}

/// The elements of `(a, b, …)`, of `(a)`, or `a` alone.
fn tuple_items(expr: &syn::Expr) -> Vec<&syn::Expr> {
    match expr {
        syn::Expr::Tuple(t) => t.elems.iter().collect(),
        syn::Expr::Paren(p) => vec![&*p.expr],
        e => vec![e],
    }
}

/// An axis (`0`, `1`, …), `None` where `allow_none`, or a tuple of them.
fn parse_axes(
    value: TokenStream,
    key: &str,
    allow_none: bool,
    errors: &mut Errors,
) -> Option<InAxes> {
    let supported = if key == "in_axes" {
        "each entry is an axis (0, 1, …: that axis of the argument is batched) or None (shared by every example)"
    } else {
        "each entry is the axis (0, 1, …) of the result that the batch becomes, or None (a result that is the same for every example)"
    };
    let example = "(0, None, …)";
    let expr: syn::Expr = match syn::parse2(value.clone()) {
        Ok(e) => e,
        Err(_) => {
            errors.spanned(
                value,
                format!("bad `{key}`: write `{key} = {example}`; {supported}"),
            );
            return None;
        }
    };
    let items = tuple_items(&expr);
    let mut out = Vec::new();
    let mut ok = true;
    for e in items {
        match e {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) if i.suffix().is_empty() && i.base10_parse::<usize>().is_ok() => {
                out.push(i.base10_parse::<usize>().ok())
            }
            syn::Expr::Path(p) if allow_none && p.path.is_ident("None") => out.push(None),
            other => {
                let shown = quote::quote!(#other).to_string();
                errors.spanned(
                    other,
                    format!("unsupported {key} entry `{shown}`: {supported}"),
                );
                ok = false;
            }
        }
    }
    if !ok {
        return None;
    }
    Some(match expr {
        syn::Expr::Tuple(_) => InAxes::Each(out),
        _ => InAxes::All(out[0]),
    })
}

/// Remove every oxla attribute from `attrs` and parse it; the result is in
/// source order (outermost first).
pub fn take_oxla_attrs(attrs: &mut Vec<syn::Attribute>, errors: &mut Errors) -> Vec<TransformAttr> {
    take_oxla_attrs_with_paths(attrs, errors).0
}

/// `take_oxla_attrs`, also returning the path of every attribute removed
/// (those with errors included).
pub fn take_oxla_attrs_with_paths(
    attrs: &mut Vec<syn::Attribute>,
    errors: &mut Errors,
) -> (Vec<TransformAttr>, Vec<syn::Path>) {
    let mut out = Vec::new();
    let mut paths = Vec::new();
    let mut kept = Vec::new();
    for a in attrs.drain(..) {
        let Some(kind) = oxla_attr_kind(a.path()) else {
            kept.push(a);
            continue;
        };
        let span = a.span();
        paths.push(a.path().clone());
        let args = match &a.meta {
            syn::Meta::Path(_) => TokenStream::new(),
            syn::Meta::List(l) => l.tokens.clone(),
            syn::Meta::NameValue(_) => {
                errors.spanned(
                    &a,
                    format!(
                        "bad attribute: write {} (not `{} = …`)",
                        kind.usage(),
                        kind.name()
                    ),
                );
                continue;
            }
        };
        if let Some(t) = parse_args(kind, args, span, errors) {
            out.push(t);
        }
    }
    *attrs = kept;
    (out, paths)
}
