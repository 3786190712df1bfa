//! The attribute grammar:
//!
//! ```text
//! #[jit]            #[jit(name)]
//! #[grad(name)]     #[grad(name, wrt = x)]     #[grad(name, wrt = (x, y))]
//! #[value_and_grad(name)]    #[value_and_grad(name, wrt = …)]
//! #[jvp(name)]      #[jvp(name, wrt = x)]      #[vjp(name)]     #[vjp(name, wrt = (x, y))]
//! #[vmap(name)]     #[vmap(name, in_axes = (0, None, 1), out_axes = 0)]   (or `in_axes = 0`)
//!                   #[vmap(name, axis_name = j)]   (collectives over `j` reduce over the batch)
//! #[pmap(name, axis_name = i)]   #[pmap(name, axis_name = i, in_axes = …, out_axes = …)]
//! #[jacfwd(name, wrt = x)]   #[jacrev(name, wrt = x)]   #[hessian(name, wrt = x)]
//!
//! any of them, `of = f`:        the transform of `f` (the annotated function
//!                                or one generated before), not of the one below
//! any of them, `of = grad(…)`:  the transform of another transform (its name optional)
//!
//! #[transforms(grad(g, wrt = w), value_and_grad(vg), …)]
//!                                independent transforms of the annotated function
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
    Pmap,
    Jacfwd,
    Jacrev,
    Hessian,
}

impl TransformKind {
    pub const ALL: [TransformKind; 10] = [
        TransformKind::Jit,
        TransformKind::Grad,
        TransformKind::ValueAndGrad,
        TransformKind::Jvp,
        TransformKind::Vjp,
        TransformKind::Vmap,
        TransformKind::Pmap,
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
            TransformKind::Pmap => "pmap",
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
        const OF: (&str, &str) = ("of", "`of = f` or `of = grad(…)`");
        match self {
            TransformKind::Grad
            | TransformKind::ValueAndGrad
            | TransformKind::Jvp
            | TransformKind::Vjp => &[("wrt", "`wrt = x` or `wrt = (x, y)`"), OF],
            TransformKind::Vmap | TransformKind::Pmap => &[
                ("axis_name", "`axis_name = i` or `axis_name = \"i\"`"),
                ("in_axes", "`in_axes = (0, None, …)`"),
                ("out_axes", "`out_axes = 1` or `out_axes = (0, 1)`"),
                OF,
            ],
            TransformKind::Jacfwd | TransformKind::Jacrev | TransformKind::Hessian => {
                &[("wrt", "`wrt = x`"), OF]
            }
            TransformKind::Jit => &[OF],
        }
    }

    fn usage(self) -> String {
        let n = self.name();
        match self {
            TransformKind::Jit => "`#[jit]` or `#[jit(name)]`".to_string(),
            TransformKind::Grad
            | TransformKind::ValueAndGrad
            | TransformKind::Jvp
            | TransformKind::Vjp => {
                format!("`#[{n}(name)]`, `#[{n}(name, wrt = x)]` or `#[{n}(name, wrt = (x, y))]`")
            }
            TransformKind::Vmap => {
                "`#[vmap(name)]` or `#[vmap(name, in_axes = (0, None, …), out_axes = …, axis_name = j)]`"
                    .to_string()
            }
            TransformKind::Pmap => {
                "`#[pmap(name, axis_name = i)]` or `#[pmap(name, axis_name = i, in_axes = (0, None, …), out_axes = …)]`"
                    .to_string()
            }
            TransformKind::Jacfwd | TransformKind::Jacrev | TransformKind::Hessian => {
                format!("`#[{n}(name)]` or `#[{n}(name, wrt = x)]`")
            }
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

/// The function a transform applies to.
#[derive(Clone, Debug)]
pub enum Input {
    /// The function generated by the nearest named attribute below, or the
    /// annotated function: stacked attributes compose.
    Below,
    /// The annotated function (an entry of `#[transforms(…)]`).
    Original,
    /// `of = f`: the annotated function or one generated before this one.
    Named(Ident),
    /// `of = grad(…)`: another transform, named (then it is generated too)
    /// or not.
    Nested(Box<TransformAttr>),
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
    /// `axis_name = i` (`#[pmap]`, where it is required, and `#[vmap]`):
    /// the name the collectives of the body use, with its span.
    pub axis_name: Option<(String, Span)>,
    /// What it transforms (`of = …`).
    pub input: Input,
    /// An entry of `#[transforms(…)]`: one of several functions at the same
    /// level, so an attribute above must say which it transforms.
    pub listed: bool,
    /// Where errors about the attribute as a whole point.
    pub span: Span,
}

/// The attribute that lists independent transforms of one function.
pub const LIST_ATTR: &str = "transforms";

/// Which oxla attribute a path names.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AttrName {
    /// One transform (`#[grad(…)]`).
    One(TransformKind),
    /// `#[transforms(…)]`.
    List,
}

/// Whether `path` names an oxla attribute, `transforms` included.
pub fn oxla_attr(path: &syn::Path) -> Option<AttrName> {
    if let Some(kind) = oxla_attr_kind(path) {
        return Some(AttrName::One(kind));
    }
    let segs: Vec<&syn::PathSegment> = path.segments.iter().collect();
    let ok_prefix = match segs.len() {
        1 => path.leading_colon.is_none(),
        2 => segs[0].ident == "oxla",
        _ => false,
    };
    let last = segs.last()?;
    (ok_prefix && last.arguments.is_none() && last.ident == LIST_ATTR).then_some(AttrName::List)
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
    parse_args_as(kind, args, span, false, errors)
}

/// `parse_args`; a `nested` transform (`of = grad(…)`) may have no name.
fn parse_args_as(
    kind: TransformKind,
    args: TokenStream,
    span: Span,
    nested: bool,
    errors: &mut Errors,
) -> Option<TransformAttr> {
    let before = errors.len();
    let mut attr = TransformAttr {
        kind,
        name: None,
        wrt: None,
        in_axes: None,
        out_axes: None,
        axis_name: None,
        input: Input::Below,
        listed: false,
        span,
    };
    let parser = |input: ParseStream| -> syn::Result<()> {
        parse_args_inner(input, &mut attr, errors);
        Ok(())
    };
    if let Err(e) = parser.parse2(args) {
        errors.push(e);
    }
    if attr.name.is_none() && kind != TransformKind::Jit && !nested && errors.len() == before {
        errors.at(
            span,
            format!(
                "`#[{}]` needs the name of the function to generate: {}",
                kind.name(),
                kind.usage()
            ),
        );
    }
    if kind == TransformKind::Pmap && attr.axis_name.is_none() && errors.len() == before {
        errors.at(
            span,
            "`#[pmap]` needs `axis_name = i`: the name its body's collectives (`psum(x, i)`, `axis_index(i)`, …) use for the device axis; write `#[pmap(name, axis_name = i)]`",
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
                format!("`#[{}]` accepts: {}", kind.name(), list.join("; "))
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
        } else if key == "of" {
            if !matches!(attr.input, Input::Below) {
                errors.at(key.span(), "`of` is given twice");
            }
            if let Some(input) = parse_of(value, errors) {
                attr.input = input;
            }
        } else if key == "axis_name" {
            if attr.axis_name.is_some() {
                errors.at(key.span(), "`axis_name` is given twice");
            }
            attr.axis_name = parse_axis_name(value, errors);
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

/// `of = f` (a function's name) or `of = grad(…)` (a transform).
fn parse_of(value: TokenStream, errors: &mut Errors) -> Option<Input> {
    use proc_macro2::{Delimiter, TokenTree};
    let expected = "`of` names the function to transform: `of = f` (the annotated function or one generated before) or `of = grad(…)` (another transform of it)";
    let tokens: Vec<TokenTree> = value.clone().into_iter().collect();
    match tokens.as_slice() {
        [TokenTree::Ident(id)] => Some(Input::Named(id.clone())),
        [TokenTree::Ident(id), TokenTree::Group(g)] if g.delimiter() == Delimiter::Parenthesis => {
            let kind = transform_named(id, errors)?;
            let inner = parse_args_as(kind, g.stream(), value.span(), true, errors)?;
            Some(Input::Nested(Box::new(inner)))
        }
        _ => {
            errors.spanned(value, expected);
            None
        }
    }
}

/// The transform `id` names, or an error listing them.
fn transform_named(id: &Ident, errors: &mut Errors) -> Option<TransformKind> {
    let kind = TransformKind::from_name(&id.to_string());
    if kind.is_none() {
        let all: Vec<&str> = TransformKind::ALL.iter().map(|k| k.name()).collect();
        errors.at(
            id.span(),
            format!(
                "unknown transform `{id}`: the transforms are {}",
                all.join(", ")
            ),
        );
    }
    kind
}

/// The arguments of `#[transforms(grad(g, wrt = w), value_and_grad(vg), …)]`:
/// one transform of the annotated function per entry, in the order written.
pub fn parse_list(args: TokenStream, span: Span, errors: &mut Errors) -> Vec<TransformAttr> {
    use proc_macro2::{Delimiter, TokenTree};
    let usage = "write `#[transforms(grad(g, wrt = w), value_and_grad(vg), …)]`: one transform per entry, each with the name of the function to generate";
    let before = errors.len();
    let mut out = Vec::new();
    let mut tokens = args.into_iter().peekable();
    while tokens.peek().is_some() {
        // One entry runs to the next top-level comma.
        let mut entry = Vec::new();
        for tt in tokens.by_ref() {
            if matches!(&tt, TokenTree::Punct(p) if p.as_char() == ',') {
                break;
            }
            entry.push(tt);
        }
        match entry.as_slice() {
            [TokenTree::Ident(id), TokenTree::Group(g)]
                if g.delimiter() == Delimiter::Parenthesis =>
            {
                let Some(kind) = transform_named(id, errors) else {
                    continue;
                };
                if let Some(mut attr) = parse_args(kind, g.stream(), id.span(), errors) {
                    if attr.name.is_none() {
                        errors.at(id.span(), format!("`{id}` in `#[transforms(…)]` needs the name of the function to generate: {}", kind.usage()));
                        continue;
                    }
                    // The innermost of `of = grad(of = …)` defaults to the
                    // annotated function.
                    let mut innermost = &mut attr.input;
                    while let Input::Nested(inner) = innermost {
                        innermost = &mut inner.input;
                    }
                    if matches!(innermost, Input::Below) {
                        *innermost = Input::Original;
                    }
                    attr.listed = true;
                    out.push(attr);
                }
            }
            [] => errors.at(span, format!("empty entry: {usage}")),
            _ => {
                let ts: TokenStream = entry.into_iter().collect();
                errors.spanned(ts, format!("bad entry: {usage}"));
            }
        }
    }
    if out.is_empty() && errors.len() == before {
        errors.at(span, format!("`#[transforms]` lists no transform: {usage}"));
    }
    out
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

/// `axis_name = i` or `axis_name = "i"`: the axis's name, with its span.
fn parse_axis_name(value: TokenStream, errors: &mut Errors) -> Option<(String, Span)> {
    let expected =
        "`axis_name` is an identifier or a string literal: `axis_name = i` or `axis_name = \"i\"`";
    let span = value.span();
    match syn::parse2::<syn::Expr>(value.clone()) {
        Ok(syn::Expr::Path(p)) if p.qself.is_none() && p.path.get_ident().is_some() => {
            let id = p.path.get_ident()?;
            Some((crate::lower::ident_name(id), id.span()))
        }
        Ok(syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        })) => match axis_name_of_str(&s.value()) {
            Some(n) => Some((n, s.span())),
            None => {
                errors.at(
                    s.span(),
                    format!("`axis_name = {:?}` is not a name: write an identifier-like name (letters, digits and `_`, not starting with a digit)", s.value()),
                );
                None
            }
        },
        _ => {
            errors.at(span, expected);
            None
        }
    }
}

/// The axis name a string literal gives (`"i"`), when it is a name:
/// letters, digits and `_`, not starting with a digit, as an identifier
/// (the IR's text form reads it back).
pub(crate) fn axis_name_of_str(s: &str) -> Option<String> {
    let mut chars = s.chars();
    let first = chars.next()?;
    let ok =
        (first.is_alphabetic() || first == '_') && chars.all(|c| c.is_alphanumeric() || c == '_');
    ok.then(|| s.to_string())
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

/// Add the entries of one `#[transforms(…)]` to a stack in source order
/// (outermost first): the stack is applied bottom-up, and the entries in
/// the order written.
pub fn push_list(stack: &mut Vec<TransformAttr>, entries: Vec<TransformAttr>) {
    stack.extend(entries.into_iter().rev());
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
        let Some(which) = oxla_attr(a.path()) else {
            kept.push(a);
            continue;
        };
        let span = a.span();
        paths.push(a.path().clone());
        let (usage, name) = match which {
            AttrName::One(kind) => (kind.usage(), kind.name()),
            AttrName::List => ("`#[transforms(grad(g), …)]`".to_string(), LIST_ATTR),
        };
        let args = match &a.meta {
            syn::Meta::Path(_) => TokenStream::new(),
            syn::Meta::List(l) => l.tokens.clone(),
            syn::Meta::NameValue(_) => {
                errors.spanned(
                    &a,
                    format!("bad attribute: write {usage} (not `{name} = …`)"),
                );
                continue;
            }
        };
        match which {
            AttrName::One(kind) => out.extend(parse_args(kind, args, span, errors)),
            AttrName::List => push_list(&mut out, parse_list(args, span, errors)),
        }
    }
    *attrs = kept;
    (out, paths)
}

/// Every attribute of `stack` in the order they are applied: bottom-up, a
/// nested `of = …` transform before the one that uses it.
pub(crate) fn in_order(stack: &[TransformAttr]) -> Vec<&TransformAttr> {
    fn visit<'a>(a: &'a TransformAttr, out: &mut Vec<&'a TransformAttr>) {
        if let Input::Nested(inner) = &a.input {
            visit(inner, out);
        }
        out.push(a);
    }
    let mut out = Vec::new();
    for a in stack.iter().rev() {
        visit(a, &mut out);
    }
    out
}

/// The item's `#[cfg(..)]` attributes, which the items emitted beside it
/// repeat so that they exist exactly when it does.
pub(crate) fn cfg_attrs(item: &syn::ItemFn) -> Vec<&syn::Attribute> {
    item.attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect()
}
