//! `#[oxla::custom_jvp(jvp = f_jvp)]` and `#[oxla::custom_vjp(fwd = f_fwd,
//! bwd = f_bwd)]` on an `#[oxla::func]` helper (JAX's `custom_jvp` and
//! `custom_vjp`): parsing the attribute, and checking at the helper's
//! definition that the rule functions fit its signature.
//!
//! The rule functions are `#[oxla::func]` helpers themselves, laid out as
//! oxla's own `#[jvp]` and `#[vjp]` functions are (tangents and cotangents
//! for float values only):
//! - `jvp(params…, tangents…) -> (results…, tangents of the results…)`;
//! - `fwd(params…) -> (results…, residuals…)`, at least one residual;
//! - `bwd(residuals…, cotangents of the results…) -> cotangents of the
//!   params…` (a single value when `f` has one float param).
//!
//! The attribute stays on the item the helper's macro hands to its callers
//! (each call reads it there); it is taken off the function compiled for
//! plain Rust callers, which runs the body as written.

use crate::errors::Errors;
use oxla_core::{Function, Type};
use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;

/// Which rule an attribute gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleKind {
    Jvp,
    Vjp,
}

impl RuleKind {
    pub fn attr_name(self) -> &'static str {
        match self {
            RuleKind::Jvp => "custom_jvp",
            RuleKind::Vjp => "custom_vjp",
        }
    }
}

/// A helper's custom rule: the paths of its rule functions.
#[derive(Clone, Debug)]
pub(crate) struct CustomRule {
    pub(crate) kind: RuleKind,
    /// `jvp` for `custom_jvp`; `fwd`, then `bwd`, for `custom_vjp`.
    pub(crate) paths: Vec<syn::Path>,
}

/// The rule an attribute path names: `custom_jvp`, `oxla::custom_jvp`,
/// `::oxla::custom_jvp` (likewise `custom_vjp`).
pub fn rule_attr_kind(path: &syn::Path) -> Option<RuleKind> {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let last = match segs.as_slice() {
        [one] if path.leading_colon.is_none() => one,
        [oxla, one] if oxla == "oxla" => one,
        _ => return None,
    };
    match last.as_str() {
        "custom_jvp" => Some(RuleKind::Jvp),
        "custom_vjp" => Some(RuleKind::Vjp),
        _ => None,
    }
}

/// The keys each rule takes, in order.
fn keys(kind: RuleKind) -> &'static [&'static str] {
    match kind {
        RuleKind::Jvp => &["jvp"],
        RuleKind::Vjp => &["fwd", "bwd"],
    }
}

/// Parse the rule attribute of `item`, reporting malformed ones.
pub(crate) fn parse_rule(item: &syn::ItemFn, errors: &mut Errors) -> Option<CustomRule> {
    let mut found: Option<CustomRule> = None;
    for attr in &item.attrs {
        let Some(kind) = rule_attr_kind(attr.path()) else {
            continue;
        };
        if found.is_some() {
            errors.spanned(
                attr,
                "a helper takes one custom rule: `custom_jvp` or `custom_vjp`, not both or twice",
            );
            continue;
        }
        let names = keys(kind);
        let mut paths: Vec<Option<syn::Path>> = vec![None; names.len()];
        let usage = match kind {
            RuleKind::Jvp => "`#[oxla::custom_jvp(jvp = f_jvp)]`",
            RuleKind::Vjp => "`#[oxla::custom_vjp(fwd = f_fwd, bwd = f_bwd)]`",
        };
        let parsed = attr.parse_nested_meta(|m| {
            let Some(k) = names.iter().position(|n| m.path.is_ident(n)) else {
                return Err(m.error(format!(
                    "unknown argument of `{}`: write {usage}",
                    kind.attr_name()
                )));
            };
            let p: syn::Path = m.value()?.parse()?;
            if paths[k].is_some() {
                return Err(syn::Error::new(
                    p.span(),
                    format!("`{}` given twice", names[k]),
                ));
            }
            paths[k] = Some(p);
            Ok(())
        });
        if let Err(e) = parsed {
            errors.push(e);
            continue;
        }
        if let Some(k) = paths.iter().position(Option::is_none) {
            errors.spanned(
                attr,
                format!(
                    "`{}` needs `{} = …`: write {usage}",
                    kind.attr_name(),
                    names[k]
                ),
            );
            continue;
        }
        let paths: Vec<syn::Path> = paths.into_iter().flatten().collect();
        for p in &paths {
            if !crate::resolve::helpers::may_be_helper(p) {
                errors.spanned(
                    p,
                    "a custom rule names an `#[oxla::func]` helper by its path (`f_jvp`, `module::f_jvp`)",
                );
            } else if p.segments.last().is_some_and(|s| s.ident == item.sig.ident) {
                errors.spanned(
                    p,
                    format!(
                        "`{}` cannot be its own rule: name a helper computing the rule",
                        item.sig.ident
                    ),
                );
            }
        }
        found = Some(CustomRule { kind, paths });
    }
    found
}

/// The rule of a helper's item, if it has a well-formed one (its own
/// expansion reports a malformed one).
pub(crate) fn rule_of(item: &syn::ItemFn) -> Option<CustomRule> {
    parse_rule(item, &mut Errors::new())
}

/// What `Lowerer::inlining` holds while `name`'s rule functions are
/// lowered: a call of `name` inside them is `name`'s body, inlined.
pub(crate) fn rule_marker(name: &str) -> String {
    format!("{name}'s custom rule")
}

/// `item` without its rule attributes (the function plain Rust calls).
pub(crate) fn without_rules(item: &syn::ItemFn) -> syn::ItemFn {
    let mut item = item.clone();
    item.attrs.retain(|a| rule_attr_kind(a.path()).is_none());
    item
}

/// `#[oxla::custom_jvp(…)]` or `#[oxla::custom_vjp(…)]` expanded before the
/// `#[oxla::func]` below it: the item again, with `#[oxla::func]` first so
/// that it expands next and reads the rule (put back below it).
pub fn expand_rule_attr(kind: RuleKind, args: TokenStream, item: TokenStream) -> TokenStream {
    let name = kind.attr_name();
    let Ok(mut f) = syn::parse2::<syn::ItemFn>(item.clone()) else {
        let msg = format!("`#[oxla::{name}]` applies to an `#[oxla::func]` helper (a `fn`)");
        return quote!(::core::compile_error! { #msg } #item);
    };
    let Some(k) = f
        .attrs
        .iter()
        .position(crate::resolve::helpers::is_func_attr)
    else {
        let msg = format!(
            "`#[oxla::{name}]` applies to an `#[oxla::func]` helper: mark `fn {}` with `#[oxla::func]` too, and call it from annotated functions",
            f.sig.ident
        );
        let err = syn::Error::new(Span::call_site(), msg).to_compile_error();
        return quote!(#err #item);
    };
    let func = f.attrs.remove(k);
    let rule = syn::Ident::new(name, Span::call_site());
    let rest = f.into_token_stream();
    quote!(#func #[oxla::#rule(#args)] #rest)
}

/// A value's kind as a signature shows it: its dtype and rank.
fn kind_of(t: &Type) -> (oxla_core::DType, usize) {
    (t.dtype, t.shape.rank())
}

fn types(f: &Function, vs: &[oxla_core::Var]) -> Vec<Type> {
    vs.iter().map(|v| f.ty(*v).clone()).collect()
}

fn floats(ts: &[Type]) -> Vec<Type> {
    ts.iter().filter(|t| t.dtype.is_float()).cloned().collect()
}

fn shown(ts: &[Type]) -> String {
    let list: Vec<String> = ts
        .iter()
        .map(|t| match t.shape.rank() {
            0 => t.dtype.to_string(),
            r => format!("{} array of rank {r}", t.dtype),
        })
        .collect();
    format!("({})", list.join(", "))
}

fn same_kinds(a: &[Type], b: &[Type]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| kind_of(x) == kind_of(y))
}

/// Check the rule functions `rules` (lowered, in `rule.paths`' order; `None`
/// where one failed to lower: its own expansion reports it) against `f`,
/// the helper lowered; errors at the rule's path in the attribute.
pub(crate) fn check_rule_signatures(
    f: &Function,
    rule: &CustomRule,
    rules: &[Option<Function>],
    errors: &mut Errors,
) {
    let p_in = types(f, &f.params);
    let p_out = types(f, &f.outs);
    let name = &f.name;
    let path = |k: usize| rule.paths[k].to_token_stream().to_string().replace(' ', "");
    match rule.kind {
        RuleKind::Jvp => {
            let Some(j) = &rules[0] else { return };
            let want_in = [p_in.clone(), floats(&p_in)].concat();
            let want_out = [p_out.clone(), floats(&p_out)].concat();
            let (got_in, got_out) = (types(j, &j.params), types(j, &j.outs));
            if !same_kinds(&got_in, &want_in) || !same_kinds(&got_out, &want_out) {
                errors.spanned(
                    &rule.paths[0],
                    format!(
                        "`jvp = {}` must take `{name}`'s parameters then one tangent per float parameter {}, and return `{name}`'s results then one tangent per float result {}; it takes {} and returns {}",
                        path(0),
                        shown(&want_in),
                        shown(&want_out),
                        shown(&got_in),
                        shown(&got_out)
                    ),
                );
            }
        }
        RuleKind::Vjp => {
            if let Some(fwd) = &rules[0] {
                let (got_in, got_out) = (types(fwd, &fwd.params), types(fwd, &fwd.outs));
                let n = p_out.len();
                let starts = got_out.len() > n && same_kinds(&got_out[..n], &p_out);
                if !same_kinds(&got_in, &p_in) || !starts {
                    errors.spanned(
                        &rule.paths[0],
                        format!(
                            "`fwd = {}` must take `{name}`'s parameters {} and return `(outputs…, residuals…)`: `{name}`'s results {} followed by at least one residual for `bwd`; it takes {} and returns {}",
                            path(0),
                            shown(&p_in),
                            shown(&p_out),
                            shown(&got_in),
                            shown(&got_out)
                        ),
                    );
                    return;
                }
                let Some(bwd) = &rules[1] else { return };
                let res = &got_out[n..];
                let want_in = [res.to_vec(), floats(&p_out)].concat();
                let want_out = floats(&p_in);
                let (b_in, b_out) = (types(bwd, &bwd.params), types(bwd, &bwd.outs));
                if b_out.len() != want_out.len() {
                    errors.spanned(
                        &rule.paths[1],
                        format!(
                            "`bwd = {}` must return one cotangent per float parameter of `{name}` ({}: {}), but returns {}",
                            path(1),
                            want_out.len(),
                            shown(&want_out),
                            b_out.len()
                        ),
                    );
                } else if !same_kinds(&b_in, &want_in) || !same_kinds(&b_out, &want_out) {
                    errors.spanned(
                        &rule.paths[1],
                        format!(
                            "`bwd = {}` must take the residuals then one cotangent per float result {} and return one cotangent per float parameter {}; it takes {} and returns {}",
                            path(1),
                            shown(&want_in),
                            shown(&want_out),
                            shown(&b_in),
                            shown(&b_out)
                        ),
                    );
                }
            }
        }
    }
}
