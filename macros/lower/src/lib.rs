//! oxla-lower: what the oxla attribute macros do, as a normal library so the
//! build helper (`oxla-build`) runs exactly the same lowering.
//!
//! The pipeline, one directory per stage:
//!
//! 1. [`parse`]: the attribute stack (`#[vmap(…)] #[grad(…)] fn f`,
//!    `#[transforms(grad(g), value_and_grad(vg))] fn f`) and the signature's
//!    types;
//! 2. [`resolve`]: what the names the body calls mean (the `#[oxla::func]`
//!    helpers, through their macros) and where the function is written;
//! 3. [`lower`]: the function body (syn) → an oxla IR [`Function`];
//! 4. [`stack`]: apply the transforms bottom-up, each to the function below
//!    it or to the one its `of = …` names, then `simplify`;
//! 5. [`codegen`]: emit each function from its IR — straight-line Rust for
//!    scalar-only functions, a call of `::oxla::__private::CompiledFn` for
//!    array functions (bound to ahead-of-time kernels when the build script
//!    compiled them, see [`codegen::aot`]).
//!
//! Two kinds of function go around the whole pipeline: one taking parameter
//! structs (`tree`: flattened in source before, wrapped after) and one
//! generic over its float type (`generic`: once per float type, then one
//! generic wrapper). This file holds the entry points that drive it.
//!
//! Errors are gathered in an [`Errors`] context, each at its span; nothing
//! here panics on user input.

pub mod codegen;
mod collect;
pub mod errors;
mod generic;
pub mod lower;
pub mod parse;
pub mod resolve;
pub mod stack;
mod tree;

#[cfg(test)]
mod tests;

pub use codegen::aot::{aot_symbols, is_straight_line};
pub use codegen::{
    generate, ir_const_name, CodegenOptions, AOT_MANIFEST_ENV, AOT_REQUIRED_ENV,
    MANIFEST_NO_OBJECTS,
};
pub use collect::{collect_from_file, collect_from_files};
pub use errors::Errors;
pub use lower::{dim_symbol, length_symbol, lower_fn};
pub use oxla_core::Function;
pub use parse::attr::{InAxes, Input, TransformAttr, TransformKind};
pub use parse::custom::{expand_rule_attr, RuleKind};
pub use resolve::helpers::{expand_func, expand_resolve, HelperTable};
/// Where a function is written; the proc-macro crate reads its file for it.
pub use resolve::site;
pub use stack::{expand_stack, GeneratedFn, Origin};
pub use tree::expand_derive as expand_tree_derive;

use codegen::trait_impl;
use parse::attr;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use resolve::{builtins, helpers, source_calls};

/// The whole expansion of the attribute `kind` with arguments `args` on
/// `item`. The first oxla attribute to expand handles the whole stack: it
/// removes the other oxla attributes from the item. On errors the original
/// function is emitted unchanged (minus those attributes) with one
/// `compile_error!` per problem, so that the IDE keeps working.
pub fn expand_attribute(kind: TransformKind, args: TokenStream, item: TokenStream) -> TokenStream {
    expand_attribute_with(kind, args, item, &CodegenOptions::from_env())
}

/// `expand_attribute` with explicit code generation options.
pub fn expand_attribute_with(
    kind: TransformKind,
    args: TokenStream,
    item: TokenStream,
    opts: &CodegenOptions,
) -> TokenStream {
    expand_with(
        attr::AttrName::One(kind),
        args,
        item,
        &TokenStream::new(),
        &HelperTable::default(),
        opts,
    )
}

/// The expansion of `#[transforms(grad(g), value_and_grad(vg), …)]`: one
/// independent transform of the function per entry.
pub fn expand_list_attribute(args: TokenStream, item: TokenStream) -> TokenStream {
    expand_list_attribute_with(args, item, &CodegenOptions::from_env())
}

/// `expand_list_attribute` with explicit code generation options.
pub fn expand_list_attribute_with(
    args: TokenStream,
    item: TokenStream,
    opts: &CodegenOptions,
) -> TokenStream {
    expand_with(
        attr::AttrName::List,
        args,
        item,
        &TokenStream::new(),
        &HelperTable::default(),
        opts,
    )
}

/// The expansion of the attribute `which`, the body's calls of the helpers
/// in `helpers` (whose token form is `helper_tokens`) inlined. A call of a
/// helper not yet known defers the expansion to that helper's macro (see
/// `helpers`). In `impl Trait for Type`, only the method itself (see
/// `trait_impl`).
pub(crate) fn expand_with(
    which: attr::AttrName,
    args: TokenStream,
    item: TokenStream,
    helper_tokens: &TokenStream,
    helpers: &HelperTable,
    opts: &CodegenOptions,
) -> TokenStream {
    // The name from the tokens: parsing the whole item here, before the
    // deep-nesting folds, could overflow the stack.
    let name = {
        let mut tokens = item.clone().into_iter();
        tokens.find(|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == "fn"));
        match tokens.next() {
            Some(proc_macro2::TokenTree::Ident(name)) => Some(name),
            _ => None,
        }
    };
    // Where the function is written (one scan of its file), for the trait
    // impl case and for its callable macros.
    let site = name.as_ref().and_then(|n| opts.enclosing(n.span()));
    let in_trait_impl = name
        .clone()
        .filter(|_| site == Some(site::Enclosing::TraitImpl));
    let at = name.map_or_else(Span::call_site, |n| n.span());
    let out = site::with_caller(opts.source, at, || {
        expand_items(which, args, item, helper_tokens, helpers, opts, site)
    });
    match in_trait_impl {
        Some(name) => trait_impl::only_the_method(out, &name),
        None => out,
    }
}

fn expand_items(
    which: attr::AttrName,
    args: TokenStream,
    item: TokenStream,
    helper_tokens: &TokenStream,
    helpers: &HelperTable,
    opts: &CodegenOptions,
    site: Option<site::Enclosing>,
) -> TokenStream {
    if is_stacked_marker(&args) {
        return TokenStream::new();
    }
    let item_tokens = item.clone();
    let mut errors = Errors::new();
    let attr_name = match which {
        attr::AttrName::One(kind) => kind.name(),
        attr::AttrName::List => attr::LIST_ATTR,
    };
    let mut item: syn::ItemFn =
        match syn::parse2(lower::control::flow::fold_double_negation(item.clone())) {
            Ok(i) => i,
            Err(_) => {
                errors.at(
                    Span::call_site(),
                    format!("`#[{attr_name}]` applies to a function (`fn`) only"),
                );
                let errs = errors.to_compile_errors();
                return quote!(#item #errs);
            }
        };
    let half_check = builtins::half_types(&mut item);
    let args_tokens = args.clone();
    let mut stack: Vec<TransformAttr> = Vec::new();
    match which {
        attr::AttrName::One(kind) => {
            stack.extend(attr::parse_args(kind, args, Span::call_site(), &mut errors))
        }
        attr::AttrName::List => attr::push_list(
            &mut stack,
            attr::parse_list(args, Span::call_site(), &mut errors),
        ),
    }
    let (inner, paths) = attr::take_oxla_attrs_with_paths(&mut item.attrs, &mut errors);
    stack.extend(inner);
    // In the original function's body: a function is the one place where
    // these items are allowed whether it is in a module or an `impl` block.
    let mut markers = stacked_markers(&item, &paths);
    markers.extend(axis_uses(&item));
    markers.extend(codegen::import_uses(&item, opts));
    markers.extend(builtins::check(&item));
    markers.extend(half_check);
    let attrs_ok = errors.is_empty();
    // The expansion that first defines a helper this item calls, if one is
    // still unknown (see `helpers`).
    let next_step = |unknown: &[syn::Path]| {
        helpers::next_step(
            attr_name,
            &args_tokens,
            &item_tokens,
            helper_tokens,
            helpers,
            unknown,
        )
    };
    // The calls of names not yet known: the expansion that defines the next
    // one, or (`Err`) errors saying in oxla's terms what rustc would report
    // as a missing macro.
    let resolve = |unknown: &[syn::Path]| -> Result<Option<TokenStream>, Errors> {
        match source_calls::diagnose(unknown, &item, opts) {
            Some(errors) => Err(errors),
            None => Ok(next_step(unknown)),
        }
    };
    // Other annotated functions call the generated functions through these.
    let callables = || {
        let attr = match which {
            attr::AttrName::One(kind) => {
                let kind = syn::Ident::new(kind.name(), Span::call_site());
                quote!(#[oxla::#kind(#args_tokens)])
            }
            attr::AttrName::List => quote!(#[oxla::transforms(#args_tokens)]),
        };
        let names: Vec<syn::Ident> = std::iter::once(item.sig.ident.clone())
            .chain(attr::in_order(&stack).iter().filter_map(|a| a.name.clone()))
            .collect();
        helpers::callable_macros(attr, &item_tokens, helper_tokens, &item, &names, opts, site)
    };
    // A function generic over its float type: one instance per type.
    if generic::is_generic(&item) {
        let (result, unknown) = stack::axes_unchecked_if(!attrs_ok, || {
            helpers::with_helpers(helpers, || generic::expand(&item, &stack, opts, &markers))
        });
        let stopped = match resolve(&unknown) {
            Ok(Some(step)) => return step,
            Ok(None) => false,
            Err(e) => {
                errors.extend(e);
                true
            }
        };
        match result {
            Ok(ts) if attrs_ok && !stopped => {
                let callables = callables();
                return quote!(#ts #callables);
            }
            Ok(_) => {}
            // Errors of a lowering that could not resolve a call are
            // consequences of it: the diagnosis of the call says it all.
            Err(_) if stopped => {}
            Err(e) => errors.extend(e),
        }
        let errs = errors.to_compile_errors();
        let attrs: &[TransformAttr] = if attrs_ok { &stack } else { &[] };
        if let Some(stubs) = generic::stubs(&item, attrs, &markers) {
            return quote!(#stubs #errs);
        }
        let item = without_body(item, &markers);
        return quote!(#item #errs);
    }
    // A function with parameter structs is flattened first (see `tree`).
    let ((flat, expanded), unknown) = stack::axes_unchecked_if(!attrs_ok, || {
        helpers::with_helpers(helpers, || match tree::flatten_fn(&item, &stack) {
            tree::Flattened::None => (None, expand_stack(&item, &stack)),
            tree::Flattened::Unknown => (None, Err(Errors::new())),
            tree::Flattened::Flat(flat, e) if e.is_empty() => {
                let r = expand_stack(&flat.item, &flat.stack).and_then(|gens| {
                    no_free_axes(
                        &item,
                        &gens,
                        "a function with a parameter struct",
                        "pass its fields as parameters",
                    )
                    .map(|()| gens)
                });
                (Some(flat), r)
            }
            tree::Flattened::Flat(flat, e) => (Some(flat), Err(e)),
            tree::Flattened::Err(e) => (None, Err(e)),
        })
    });
    let stopped = match resolve(&unknown) {
        Ok(Some(step)) => return step,
        Ok(None) => false,
        Err(e) => {
            errors.extend(e);
            true
        }
    };
    match expanded {
        Ok(gens) if attrs_ok && !stopped => {
            let generated = match &flat {
                Some(flat) => tree::generate(&item, flat, &gens, opts, &markers, false),
                None => codegen::generate_with_prelude(&item, &gens, opts, &markers),
            };
            match generated {
                Ok(ts) => {
                    let callables = callables();
                    return quote!(#ts #callables);
                }
                Err(e) => errors.extend(e),
            }
        }
        Ok(_) => {}
        Err(_) if stopped => {}
        Err(e) => errors.extend(e),
    }
    let errs = errors.to_compile_errors();
    // Every item the expansion defines, from the signature alone; the
    // attributes only when they all parsed (else which function one applies
    // to is unknown).
    let attrs: &[TransformAttr] = if attrs_ok { &stack } else { &[] };
    if let Some(flat) = &flat {
        let attrs: &[TransformAttr] = if attrs_ok { &flat.stack } else { &[] };
        if let Some(stubs) = lower::placeholder::signature_ir(&flat.item).and_then(|f| {
            let gens = stack::apply_stack(&flat.item, attrs, f, Vec::new(), Vec::new()).0;
            tree::generate(&item, flat, &gens, opts, &markers, true).ok()
        }) {
            return quote!(#stubs #errs);
        }
    }
    if let Some(stubs) = lower::placeholder::signature_ir(&item).and_then(|f| {
        let gens = stack::apply_stack(&item, attrs, f, Vec::new(), Vec::new()).0;
        codegen::generate_stubs(&item, &gens, &markers)
    }) {
        return quote!(#stubs #errs);
    }
    let item = without_body(item, &markers);
    quote!(#item #errs)
}

/// Collectives whose axes an attribute binds are not supported yet in
/// `what` (the function would not be emitted as written): an error at the
/// signature saying so, and `instead`.
pub(crate) fn no_free_axes(
    item: &syn::ItemFn,
    gens: &[GeneratedFn],
    what: &str,
    instead: &str,
) -> Result<(), Errors> {
    let Some(g) = gens.iter().find(|g| stack::has_free_axes(g)) else {
        return Ok(());
    };
    let axes: Vec<String> = stack::unbound_axes(&g.function)
        .into_iter()
        .map(|a| format!("`{a}`"))
        .collect();
    let mut e = Errors::new();
    e.spanned(
        &item.sig.ident,
        format!(
            "collectives over an axis an attribute binds ({}) are not supported yet in {what}: {instead}",
            axes.join(", ")
        ),
    );
    Err(e)
}

/// The function as written, for the IDE and for its callers to type-check
/// against, but with a body that cannot fail to compile: rustc would
/// otherwise add its own errors about the very code oxla just reported
/// (`cannot multiply ArrayView2 by f32` after an oxla error in that line).
fn without_body(mut item: syn::ItemFn, prelude: &TokenStream) -> syn::ItemFn {
    item.attrs
        .push(syn::parse_quote!(#[allow(unused_variables, unreachable_code)]));
    let body = codegen::stub_body();
    item.block = Box::new(syn::parse_quote!({ #prelude #body }));
    item
}

/// The argument that marks an attribute already handled by the stack.
const STACKED_MARKER: &str = "__oxla_stacked";

fn is_stacked_marker(args: &TokenStream) -> bool {
    let mut it = args.clone().into_iter();
    matches!((it.next(), it.next()), (Some(proc_macro2::TokenTree::Ident(i)), None) if i == STACKED_MARKER)
}

/// The attributes taken from the item are handled here, so they never
/// expand, and the compiler would call the user's `use oxla::vjp;` unused.
/// Each is re-emitted by its own path on an empty item, which it expands to
/// nothing: the import counts as used.
fn stacked_markers(item: &syn::ItemFn, paths: &[syn::Path]) -> TokenStream {
    let cfgs = parse::attr::cfg_attrs(item);
    let marker = syn::Ident::new(STACKED_MARKER, Span::call_site());
    paths
        .iter()
        .map(|path| quote!(#(#cfgs)* #[#path(#marker)] const _: () = ();))
        .collect()
}

/// The body is lowered, not emitted, so the compiler would call the user's
/// `use ndarray::Axis;` unused: each `Axis` path the body names is
/// re-emitted in an empty constant, which counts as a use.
fn axis_uses(item: &syn::ItemFn) -> TokenStream {
    struct Paths(Vec<syn::Path>);
    impl<'ast> syn::visit::Visit<'ast> for Paths {
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if let syn::Expr::Path(p) = &*c.func {
                let is_axis = p.path.segments.last().is_some_and(|s| s.ident == "Axis");
                if is_axis && p.qself.is_none() && !self.0.contains(&p.path) {
                    self.0.push(p.path.clone());
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
    }
    let mut found = Paths(Vec::new());
    syn::visit::Visit::visit_block(&mut found, &item.block);
    let cfgs = parse::attr::cfg_attrs(item);
    found
        .0
        .iter()
        .map(|path| quote!(#(#cfgs)* const _: () = { let _ = #path; };))
        .collect()
}
