//! A bare call of a built-in name (`softplus(x)`, `sum(x)`) means oxla's op,
//! but in Rust it means whatever `softplus` names in the caller's scope. The
//! macro cannot see the caller's scope, so it lets rustc check it: the
//! original function's body gets a module whose constant resolves each bare
//! built-in name the body calls, as the call would, and fails to compile
//! when that is not oxla's built-in (see "Helpers" in docs/ARCHITECTURE.md).

use crate::codegen::paths;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use std::collections::BTreeMap;
use syn::visit::Visit;

/// Built-in names whose meaning is a real Rust item, which the caller may
/// import (`use ndarray::{concatenate, stack}`, `use oxla::*`): the name in
/// scope must be that very item.
type PathFn = fn() -> TokenStream;
const GENUINE: &[(&str, PathFn)] = &[
    ("concatenate", paths::concatenate),
    ("stack", paths::stack),
    ("checkpoint", paths::checkpoint),
    ("checkpoint_every", paths::checkpoint_every),
];

/// Every built-in function name (for suggestions).
pub(crate) fn builtin_names() -> Vec<&'static str> {
    lowered_names()
        .chain(GENUINE.iter().map(|(n, _)| *n))
        .collect()
}

/// Every function name the vocabulary lowers when called bare (the one
/// list in `lower::vocab::functions`, special functions included), except
/// the ones in `GENUINE` (oxla's own meaning is a Rust item of that name).
fn lowered_names() -> impl Iterator<Item = &'static str> {
    let mut names: Vec<&'static str> = crate::lower::vocab::functions()
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| !GENUINE.iter().any(|(g, _)| g == n))
        .collect();
    names.sort_unstable();
    names.dedup();
    names.into_iter()
}

/// Is `name` a built-in function name (called bare, it is lowered as the op)?
pub(crate) fn is_builtin_name(name: &str) -> bool {
    lowered_names().any(|n| n == name) || GENUINE.iter().any(|(n, _)| *n == name)
}

/// The bare built-in calls of `item`'s body (first call of each name), minus
/// names the body binds itself (a closure `let relu = |v| …;`).
fn bare_builtin_calls(item: &syn::ItemFn) -> BTreeMap<String, syn::Ident> {
    #[derive(Default)]
    struct Calls {
        calls: BTreeMap<String, syn::Ident>,
        bound: Vec<String>,
    }
    impl<'ast> Visit<'ast> for Calls {
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if let syn::Expr::Path(p) = &*c.func {
                if p.qself.is_none() && p.path.leading_colon.is_none() {
                    if let Some(id) = p.path.get_ident() {
                        let name = id.to_string();
                        if is_builtin_name(&name) {
                            self.calls.entry(name).or_insert_with(|| id.clone());
                        }
                    }
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.bound.push(p.ident.to_string());
            syn::visit::visit_pat_ident(self, p);
        }
    }
    let mut v = Calls::default();
    for input in &item.sig.inputs {
        v.visit_fn_arg(input);
    }
    v.visit_block(&item.block);
    let Calls { mut calls, bound } = v;
    calls.retain(|name, _| !bound.contains(name));
    calls
}

/// The check, an item for the original function's body (empty when the
/// body calls no built-in by its bare name).
///
/// For a name in `lowered_names`, the module defines a marker `struct softplus;`
/// and, in a constant, glob-imports the enclosing module's names (`use
/// super::*`: its functions, its `use` imports, explicit or glob). A name
/// in an inner block's scope, glob-imported or not, shadows the module's
/// own, so `softplus` there is the caller's `softplus` if it has one, else
/// the marker; a trait implemented by the marker alone, with a diagnostic
/// message, rejects anything else. For a name in `GENUINE` the module
/// glob-imports the genuine item beside `super::*` instead: the same item
/// twice is fine, a different one is rustc's "ambiguous" error at the probe
/// `use concatenate as _;`.
pub(crate) fn check(item: &syn::ItemFn) -> TokenStream {
    let calls = bare_builtin_calls(item);
    if calls.is_empty() {
        return TokenStream::new();
    }
    let mut markers = TokenStream::new();
    let mut probes = TokenStream::new();
    let mut genuine = TokenStream::new();
    for (name, id) in &calls {
        let span = id.span();
        // The user's identifier, so it resolves with the call's hygiene and
        // the error points at the call.
        let at = syn::Ident::new(name, span);
        if let Some((_, path)) = GENUINE.iter().find(|(n, _)| n == name) {
            let path = path();
            genuine.extend(quote!(pub use #path;));
            probes.extend(quote_spanned!(span=> use #at as _;));
            continue;
        }
        let marker = syn::Ident::new(name, Span::call_site());
        let trait_ = format_ident!("__oxla_builtin_{}", name);
        let check = format_ident!("__oxla_check_{}", name);
        let message = format!(
            "`{name}(..)` here is lowered as oxla's built-in `{name}`, but `{name}` in this scope is `{{Self}}`"
        );
        let label = format!("this would silently be oxla's `{name}`, not the `{name}` in scope");
        let note = format!(
            "oxla cannot see a plain Rust function's body: rename the function, or mark it \
             `#[oxla::func]` under another name; to mean the built-in, write `oxla::{name}(..)`"
        );
        let only = implemented_only_for(&trait_, [&message, &label, &note], &[quote!(#marker)]);
        markers.extend(quote! {
            struct #marker;
            #only
            const fn #check<T: #trait_>(_: &T) {}
        });
        probes.extend(quote_spanned!(span=> #check(&#at);));
    }
    let genuine_glob = if genuine.is_empty() {
        quote!()
    } else {
        quote!(
            use self::__oxla_genuine::*;
        )
    };
    quote! {
        #[allow(unused_imports, non_camel_case_types, dead_code)]
        mod __oxla_builtin_names {
            #markers
            mod __oxla_genuine { #genuine }
            const _: () = {
                use super::*;
                #genuine_glob
                #probes
            };
        }
    }
}

/// A trait implemented only for `types`, whose error for any other type is
/// `message`, `label` and `note` (rustc's `diagnostic` attributes): how a
/// name's resolution in the caller's scope is checked.
fn implemented_only_for(
    trait_: &syn::Ident,
    [message, label, note]: [&String; 3],
    types: &[TokenStream],
) -> TokenStream {
    quote! {
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        trait #trait_ {}
        #(
            #[diagnostic::do_not_recommend]
            impl #trait_ for #types {}
        )*
    }
}

/// `f16` / `bf16` written bare in the signature mean `half`'s types to oxla
/// (Rust's primitive `f16` is not an oxla element type): the signature is
/// rewritten to `::oxla::__private::half::f16` (the user's span), so the
/// function compiles whether or not the caller imported `half::f16`. Returns the
/// check for the original function's body: the bare name as the caller's
/// scope resolves it (its import, else a marker that shadows the
/// primitive) must be `half`'s, or the error says what it is instead.
pub(crate) fn half_types(item: &mut syn::ItemFn) -> TokenStream {
    use syn::visit_mut::VisitMut;
    struct Half(BTreeMap<String, syn::Ident>);
    impl VisitMut for Half {
        fn visit_type_path_mut(&mut self, t: &mut syn::TypePath) {
            if t.qself.is_none() {
                if let Some(id) = t.path.get_ident().cloned() {
                    let name = id.to_string();
                    if name == "f16" || name == "bf16" {
                        self.0.entry(name).or_insert_with(|| id.clone());
                        t.path = paths::half_type(&id);
                        return;
                    }
                }
            }
            syn::visit_mut::visit_type_path_mut(self, t);
        }
    }
    let mut found = Half(BTreeMap::new());
    found.visit_signature_mut(&mut item.sig);
    if found.0.is_empty() {
        return TokenStream::new();
    }
    let mut markers = TokenStream::new();
    let mut probes = TokenStream::new();
    for (name, id) in &found.0 {
        let span = id.span();
        let at = syn::Ident::new(name, span);
        let marker = syn::Ident::new(name, Span::call_site());
        let trait_ = format_ident!("__oxla_half_{}", name);
        let check = format_ident!("__oxla_check_{}", name);
        let message = format!(
            "`{name}` in this oxla function is `half::{name}` (`oxla::half::{name}`), but `{name}` in this scope is `{{Self}}`"
        );
        let label = format!("oxla reads this `{name}` as `half::{name}`");
        let note = format!(
            "import it (`use oxla::half::{name};`) or write `oxla::half::{name}`; Rust's primitive `f16` is not an oxla element type"
        );
        let only = implemented_only_for(
            &trait_,
            [&message, &label, &note],
            &[quote!(#marker), {
                let half = paths::half_type(&marker);
                quote!(#half)
            }],
        );
        markers.extend(quote! {
            struct #marker;
            #only
            const fn #check<T: #trait_>() {}
        });
        probes.extend(quote_spanned!(span=> #check::<#at>();));
    }
    quote! {
        #[allow(unused_imports, non_camel_case_types, dead_code)]
        mod __oxla_half_names {
            #markers
            const _: () = {
                use super::*;
                #probes
            };
        }
    }
}
