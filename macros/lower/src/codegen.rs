//! Rust code generation: each `GeneratedFn` becomes a `const NAME_IR` and a
//! function whose body is emitted from its IR, either as straight-line Rust
//! (scalar-only functions) or as a call of a `CompiledFn` (array functions).

use crate::aot::{aot_symbols, is_straight_line, live_eqns};
use crate::consts::is_const_param;
use crate::errors::Errors;
use crate::lower::{ident_name, return_tys, IndexCheck};
use crate::parse::types::{param_ty, RustTy};
use crate::paths;
use crate::scalar_loop;
use crate::stack::{guard, GeneratedFn, Origin};
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use oxla_core::transforms::Step;
use oxla_core::{DType, Dim, Function, Op, Var};
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use std::collections::BTreeSet;

/// The environment variable naming the manifest of AOT-compiled kernels.
pub const AOT_MANIFEST_ENV: &str = "OXLA_AOT_MANIFEST";

/// The environment variable that, set to `1` (by
/// `oxla_build::Options::require_aot`), makes an array function whose kernels
/// the build script did not compile a compile error instead of a warning.
pub const AOT_REQUIRED_ENV: &str = "OXLA_AOT_REQUIRED";

/// The manifest line by which the build helper says it wrote no object code
/// (a target it does not compile for): every function then uses the JIT, as
/// intended, and nothing is reported.
pub const MANIFEST_NO_OBJECTS: &str = "# no object code for this target";

/// What code generation needs to know beyond the IR.
#[derive(Clone, Debug, Default)]
pub struct CodegenOptions {
    /// Kernel symbols the build script compiled (the lines of the manifest),
    /// or `None` without a build script (or one that compiled no object code
    /// for this target): then kernels are JIT-compiled.
    pub aot_manifest: Option<BTreeSet<String>>,
    /// With a manifest, a function whose kernels are missing from it is an
    /// error (else a warning): the crate's build script asked for this.
    pub aot_required: bool,
    /// Whether the expansion also defines, for each function it generates,
    /// the macro through which other annotated functions call it (see
    /// `helpers`). Off for a helper's own function (its `#[oxla::func]`
    /// macro is that already).
    pub export_callables: bool,
    /// Where a span is in its source file (`None` in the result: not
    /// known). The proc-macro crate reads the file; from it come where a
    /// function is written (see `site`: whether and how its callable macro
    /// is defined, never in an `impl` or `trait` block) and what a call of
    /// an unknown name means (see `source_calls`). Without it a function is
    /// taken to be at module level.
    pub source: Option<fn(Span) -> Option<crate::resolve::site::SourceAt>>,
}

impl CodegenOptions {
    /// The block around the function whose name is at `span`: module level
    /// without a source hook, `None` when the hook cannot say.
    pub(crate) fn enclosing(&self, span: Span) -> Option<crate::resolve::site::Enclosing> {
        match self.source {
            None => Some(crate::resolve::site::Enclosing::Module),
            Some(source) => {
                let at = source(span)?;
                crate::resolve::site::enclosing_at(&at.text, at.line, at.column, &at.snippet)
            }
        }
    }

    /// Read the manifest named by `OXLA_AOT_MANIFEST`, if it is set and
    /// readable, and `OXLA_AOT_REQUIRED`.
    pub fn from_env() -> CodegenOptions {
        let aot_manifest = std::env::var_os(AOT_MANIFEST_ENV)
            .and_then(|p| std::fs::read_to_string(p).ok())
            .filter(|text| !text.lines().any(|l| l.trim() == MANIFEST_NO_OBJECTS))
            .map(|text| {
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(str::to_string)
                    .collect()
            });
        let aot_required = std::env::var(AOT_REQUIRED_ENV).is_ok_and(|v| v.trim() == "1");
        CodegenOptions {
            aot_manifest,
            aot_required,
            export_callables: true,
            source: None,
        }
    }
}

/// The crate has a build script (there is a manifest), but it did not compile
/// the kernels of `name`: the function would silently run on the JIT. An
/// error when the build script required its kernels, else a warning at the
/// function's name (a use of a deprecated item: a proc macro cannot emit a
/// warning itself on stable Rust).
fn not_built(name: &str, span: Span, required: bool) -> Result<TokenStream, syn::Error> {
    let why = format!(
        "oxla: the build script did not compile the kernels of `{name}`, so it runs on the JIT \
         compiler instead: list this file in `oxla_build::compile` in build.rs (if it is listed, \
         the build is stale: rebuild)"
    );
    if required {
        return Err(syn::Error::new(span, why));
    }
    let marker = format_ident!("oxla_kernels_not_compiled_by_build_script", span = span);
    Ok(quote::quote_spanned! {span=>
        const _: () = {
            #[deprecated(note = #why)]
            #[allow(non_camel_case_types)]
            struct #marker;
            let _ = #marker;
        };
    })
}

/// `NAME_IR` for a function called `name`.
pub fn ir_const_name(name: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_uppercase() && prev_lower {
            out.push('_');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        out.extend(c.to_uppercase());
    }
    out.push_str("_IR");
    out
}

/// The items for `gens` (the original function first): for each, its IR
/// constant and its function. `item` is the original function, with its
/// oxla attributes already removed.
pub fn generate(
    item: &syn::ItemFn,
    gens: &[GeneratedFn],
    opts: &CodegenOptions,
) -> Result<TokenStream, Errors> {
    generate_with_prelude(item, gens, opts, &TokenStream::new())
}

/// `generate`, with `prelude` (items) at the start of the original
/// function's body.
pub fn generate_with_prelude(
    item: &syn::ItemFn,
    gens: &[GeneratedFn],
    opts: &CodegenOptions,
    prelude: &TokenStream,
) -> Result<TokenStream, Errors> {
    let mut errors = Errors::new();
    let mut out = TokenStream::new();
    let cfgs: Vec<&syn::Attribute> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    for g in gens {
        match generate_one(item, g, &cfgs, opts, false, prelude) {
            Ok(ts) => out.extend(ts),
            Err(e) => errors.push(e),
        }
    }
    errors.check().map(|()| out)
}

/// After an error: the items `generate` would emit for `gens`, each
/// function with a body that only panics (see `placeholder`).
pub(crate) fn generate_stubs(
    item: &syn::ItemFn,
    gens: &[GeneratedFn],
    prelude: &TokenStream,
) -> Option<TokenStream> {
    let cfgs: Vec<&syn::Attribute> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    // A name the errors say is taken twice is emitted once.
    let mut defined = BTreeSet::new();
    let mut out = TokenStream::new();
    for g in gens {
        let name = ident_name(&g.name);
        let items = [
            name.clone(),
            format!("{name}_into"),
            format!("{name}_device"),
            ir_const_name(&name),
        ];
        if items.iter().any(|i| defined.contains(i)) {
            continue;
        }
        defined.extend(items);
        out.extend(generate_one(item, g, &cfgs, &CodegenOptions::default(), true, prelude).ok()?);
    }
    Some(out)
}

/// The body of every function after an error: nothing rustc could report.
pub(crate) fn stub_body() -> TokenStream {
    let panic = paths::panic();
    quote!(#panic("oxla: this function did not compile; see the errors above"))
}

fn generate_one(
    item: &syn::ItemFn,
    g: &GeneratedFn,
    cfgs: &[&syn::Attribute],
    opts: &CodegenOptions,
    stub: bool,
    prelude: &TokenStream,
) -> Result<TokenStream, syn::Error> {
    let (ir_const, function, into_fn, device_fn) =
        generate_parts(item, g, cfgs, opts, stub, prelude)?;
    Ok(quote!(#ir_const #function #into_fn #device_fn))
}

/// For a function with parameter structs (see `tree`): the IR constant of
/// `g` (named as the user's function) and the flat function `inner_g`, as
/// an item for the wrapper's body.
#[allow(clippy::too_many_arguments)]
pub(crate) fn generate_nested(
    item: &syn::ItemFn,
    g: &GeneratedFn,
    inner_item: &syn::ItemFn,
    inner_g: &GeneratedFn,
    cfgs: &[&syn::Attribute],
    opts: &CodegenOptions,
    stub: bool,
    prelude: &TokenStream,
) -> Result<(TokenStream, TokenStream), syn::Error> {
    let (ir_const, _, _, _) = generate_parts(
        inner_item,
        g,
        cfgs,
        &CodegenOptions::default(),
        true,
        &TokenStream::new(),
    )?;
    let (_, function, _, _) = generate_parts(inner_item, inner_g, &[], opts, stub, prelude)?;
    let _ = item;
    Ok((ir_const, function))
}

/// The Rust parameter and result types code generation gives `g`.
pub(crate) fn flat_types(item: &syn::ItemFn, g: &GeneratedFn) -> (Vec<RustTy>, Vec<RustTy>) {
    rust_types(item, g, float_type(&g.function))
}

/// The float type of `f`'s parameters and results (f32 when it has none).
pub(crate) fn float_type(f: &Function) -> DType {
    f.params
        .iter()
        .chain(&f.outs)
        .map(|v| f.dtype(*v))
        .find(|d| d.is_float())
        .unwrap_or(DType::F32)
}

/// A function's IR constant, the function, its `_into` sibling and its
/// `_device` sibling (see `device`).
fn generate_parts(
    item: &syn::ItemFn,
    g: &GeneratedFn,
    cfgs: &[&syn::Attribute],
    opts: &CodegenOptions,
    stub: bool,
    prelude: &TokenStream,
) -> Result<(TokenStream, TokenStream, TokenStream, TokenStream), syn::Error> {
    let f = &g.function;
    let span = g.name.span();
    let text = guard("printing the IR", span, || Ok(oxla_core::text::print(f)))?;
    let name = ident_name(&g.name);
    let const_ident = syn::Ident::new(&ir_const_name(&name), span);
    let vis = &g.vis;
    let text_lit = Literal::string(&text);
    let const_doc = format!(" The oxla IR of `{name}`, in the text form of `oxla_core::text`.");
    let ir_const = quote! {
        #(#cfgs)*
        #[doc = #const_doc]
        #[allow(dead_code)]
        #vis const #const_ident: &str = #text_lit;
    };

    let dtype = float_type(f);
    let param_idents = param_idents(item, g);
    let const_lets = const_lets(g, &param_idents, dtype);
    if param_idents.len() != f.params.len() {
        return Err(syn::Error::new(
            span,
            "internal error: parameter count changed",
        ));
    }
    let tuple_return = returns_tuple(item, g);

    let (param_tys, result_tys) = rust_types(item, g, dtype);
    let straight_line = is_straight_line(f);
    // What to say when the build script did not compile this function.
    let mut missing_kernels = None;
    // A length mismatch in an array function panics: report the caller's line.
    let track_caller = if straight_line {
        quote!()
    } else {
        quote!(#[track_caller])
    };
    // Each array function holds its compiled program in a `static` in its
    // own body (see `compiled_item`).
    let compiled_ident = format_ident!("__OXLA_COMPILED", span = Span::mixed_site());
    let mut compiled_static = TokenStream::new();
    let body = if stub {
        stub_body()
    } else if straight_line {
        scalar_body(f, &param_idents, tuple_return)
    } else {
        let aot = match &opts.aot_manifest {
            Some(manifest) => {
                let syms = aot_symbols(f);
                let all_built = !syms.is_empty() && syms.iter().all(|s| manifest.contains(s));
                if !syms.is_empty() && !all_built {
                    missing_kernels = Some(not_built(&name, span, opts.aot_required)?);
                }
                all_built.then_some(syms)
            }
            None => None,
        };
        compiled_static = compiled_item(
            &compiled_ident,
            &text_lit,
            aot.as_deref(),
            &g.index_checks,
            (&g.original, &g.steps),
        );
        array_body(
            &param_idents,
            &param_tys,
            &result_tys,
            &compiled_ident,
            tuple_return,
        )
    };
    let has_array_result = result_tys.iter().any(|t| t.rank() > 0);
    let into_fn = if straight_line || !has_array_result {
        TokenStream::new()
    } else {
        into_function(
            item,
            g,
            &param_idents,
            &param_tys,
            &result_tys,
            // The constants are read before the call, like the parameters.
            (!stub).then_some((&compiled_ident, &quote!(#compiled_static #const_lets))),
            cfgs,
        )
    };
    let device_fn = if crate::device::has_device_form(straight_line) {
        crate::device::device_function(
            &name,
            vis,
            cfgs,
            &param_idents,
            &param_tys,
            &result_tys,
            tuple_return,
            (!stub).then_some((&compiled_ident, &quote!(#compiled_static #const_lets))),
        )
    } else {
        TokenStream::new()
    };
    // The original function's body also holds `prelude` (items that must
    // be inside a function to be allowed in an `impl` block too).
    let prelude = match g.origin {
        Origin::Original => prelude.clone(),
        Origin::Transform { .. } => TokenStream::new(),
    };
    let const_lets = if stub { quote!() } else { const_lets };
    let body = quote! {
        #prelude
        #missing_kernels
        #compiled_static
        #const_lets
        #body
    };
    // A stub's parameters are unused.
    let stub_allow = if stub {
        quote!(#[allow(unused_variables, unreachable_code)])
    } else {
        quote!()
    };

    let function = match &g.origin {
        Origin::Original => {
            let attrs = &item.attrs;
            let sig = &item.sig;
            quote! {
                #(#attrs)*
                #stub_allow
                #track_caller
                #vis #sig {
                    #body
                }
            }
        }
        Origin::Transform { kind, input } => {
            let params = param_idents
                .iter()
                .zip(&param_tys)
                .filter(|(id, _)| !is_const_param(&id.to_string()))
                .map(|(id, t)| {
                    let t = param_type_tokens(t);
                    quote!(#id: #t)
                });
            let rets: Vec<TokenStream> = result_tys.iter().map(result_type_tokens).collect();
            // Views borrow for the call: one lifetime serves them all.
            let generics = if param_tys.iter().any(RustTy::is_ndarray) {
                quote!(<'oxla>)
            } else {
                quote!()
            };
            let ret = if tuple_return {
                quote!((#(#rets),*))
            } else {
                quote!(#(#rets)*)
            };
            let doc = format!(
                " Generated by oxla: `#[{}]` applied to `{input}`. Its IR is in `{const_ident}`.",
                kind.name()
            );
            let name = &g.name;
            quote! {
                #(#cfgs)*
                #[doc = #doc]
                #stub_allow
                #track_caller
                #vis fn #name #generics(#(#params),*) -> #ret {
                    #body
                }
            }
        }
    };
    Ok((ir_const, function, into_fn, device_fn))
}

/// The parameters' names: the user's for the original function (then the
/// constants' hidden ones), else from the IR.
pub(crate) fn param_idents(item: &syn::ItemFn, g: &GeneratedFn) -> Vec<syn::Ident> {
    let f = &g.function;
    match g.origin {
        Origin::Original => {
            // The declared parameters, then the constants' hidden ones.
            let mut declared = item.sig.inputs.iter().filter_map(|a| match a {
                syn::FnArg::Typed(pt) => match &*pt.pat {
                    syn::Pat::Ident(pi) => Some(pi.ident.clone()),
                    _ => None,
                },
                syn::FnArg::Receiver(_) => None,
            });
            f.param_names
                .iter()
                .filter_map(|n| match is_const_param(n) {
                    true => Some(syn::Ident::new(n, Span::call_site())),
                    false => declared.next(),
                })
                .collect()
        }
        Origin::Transform { .. } => ir_param_idents(f),
    }
}

/// Whether the function returns a tuple (the original as declared; a
/// transform when it has several results).
pub(crate) fn returns_tuple(item: &syn::ItemFn, g: &GeneratedFn) -> bool {
    match (&g.origin, &item.sig.output) {
        (Origin::Original, syn::ReturnType::Type(_, ty)) => {
            return_tys(ty).map(|(_, t)| t).unwrap_or(false)
        }
        _ => g.function.outs.len() != 1,
    }
}

/// For a generic function (see `generic`): `g`'s IR constant, its function
/// and its `_into` sibling (`stub`s after an error).
pub(crate) fn generate_instance(
    item: &syn::ItemFn,
    g: &GeneratedFn,
    opts: &CodegenOptions,
    stub: bool,
) -> Result<(TokenStream, TokenStream, TokenStream), syn::Error> {
    // Generic functions have no `_device` sibling (yet): their instances'
    // results convert through `T`, which device arrays do not.
    let (ir_const, function, into_fn, _) =
        generate_parts(item, g, &[], opts, stub, &TokenStream::new())?;
    Ok((ir_const, function, into_fn))
}

/// The `static` holding a function's compiled program, emitted in the
/// function's body: generated items never name each other, so they work in
/// an `impl` block as well as in a module. A function and its `_into`
/// sibling each have one; the runtime shares the program between them (by
/// its IR text), so it is compiled once. With the declarations of the build
/// script's kernels when it compiled them.
fn compiled_item(
    compiled_ident: &syn::Ident,
    ir_const: &Literal,
    aot: Option<&[String]>,
    checks: &[IndexCheck],
    (original, steps): (&crate::stack::Original, &[Step]),
) -> TokenStream {
    let compiled_fn = paths::compiled_fn();
    let bound = paths::index_bound();
    let checked = !checks.is_empty();
    let checks = checks.iter().map(|c| {
        let param = Literal::string(&c.param);
        let b = match &c.bound {
            Dim::Const(n) => {
                let n = Literal::u64_unsuffixed(*n);
                quote!(#bound::Len(#n))
            }
            Dim::Sym(s) => {
                let s = Literal::string(s);
                quote!(#bound::Sym(#s))
            }
        };
        quote!((#param, #b))
    });
    let (aot_items, aot_ref) = match aot {
        Some(syms) => aot_items(syms),
        None => (TokenStream::new(), quote!(&[])),
    };
    // A function without index checks keeps the plain constructor.
    let construct = if checked {
        quote!(#compiled_fn::checked(#ir_const, #aot_ref, &[#(#checks),*]))
    } else {
        quote!(#compiled_fn::new(#ir_const, #aot_ref))
    };
    // How the runtime derives a program that broadcasts size-1 arguments.
    let original = if steps.is_empty() {
        ir_const.clone()
    } else {
        Literal::string(original.text())
    };
    let steps = Literal::string(&Step::print_all(steps));
    let construct = quote!(#construct.derived_from(#original, #steps));
    quote! {
        static #compiled_ident: #compiled_fn = {
            #aot_items
            #construct
        };
    }
}

/// The destinations of `<name>_into`, one per array result: `out` for a
/// lone result, else `out{i}` for result i; a clash with a parameter gets an
/// `oxla_` prefix.
pub(crate) fn dest_idents(
    param_idents: &[syn::Ident],
    result_tys: &[RustTy],
) -> Vec<Option<syn::Ident>> {
    let single = result_tys.len() == 1;
    result_tys
        .iter()
        .enumerate()
        .map(|(i, t)| {
            (t.rank() > 0).then(|| {
                let base = if single {
                    "out".to_string()
                } else {
                    format!("out{i}")
                };
                let clash = param_idents.iter().any(|p| ident_name(p) == base);
                let n = if clash { format!("oxla_{base}") } else { base };
                syn::Ident::new(&n, Span::call_site())
            })
        })
        .collect()
}

/// `<name>_into`: the same parameters, then one destination per array
/// result, which the call writes into (see `docs/ARCHITECTURE.md`, "Arrays
/// at the boundary"); it returns the scalar results.
fn into_function(
    item: &syn::ItemFn,
    g: &GeneratedFn,
    param_idents: &[syn::Ident],
    param_tys: &[RustTy],
    result_tys: &[RustTy],
    // The compiled program's name and `static`; `None` for a stub.
    program: Option<(&syn::Ident, &TokenStream)>,
    cfgs: &[&syn::Attribute],
) -> TokenStream {
    let stub = program.is_none();
    let name = ident_name(&g.name);
    let span = g.name.span();
    let into_ident = format_ident!("{}_into", name, span = span);
    let nd = paths::ndarray();
    let into_trait = paths::into_trait();
    let private = paths::private();
    let dest_idents = dest_idents(param_idents, result_tys);
    let dest_params: Vec<TokenStream> = result_tys
        .iter()
        .zip(&dest_idents)
        .filter_map(|(t, id)| {
            let id = id.as_ref()?;
            let ty = paths::float(t.dtype());
            Some(match t {
                RustTy::NdArray(_, r) => {
                    let ix = paths::ix(*r);
                    quote!(#id: impl #into_trait<#nd::ArrayViewMut<'oxla, #ty, #ix>>)
                }
                _ => quote!(#id: &'oxla mut [#ty]),
            })
        })
        .collect();
    let dest_locals: Vec<syn::Ident> = (0..result_tys.len())
        .map(|i| format_ident!("__oxla_dest{}", i, span = Span::mixed_site()))
        .collect();
    let make_dests = result_tys
        .iter()
        .zip(&dest_idents)
        .zip(&dest_locals)
        .filter_map(|((t, id), local)| {
            let id = id.as_ref()?;
            let shown = Literal::string(&id.to_string());
            let ty = paths::float(t.dtype());
            Some(match t {
                RustTy::NdArray(_, r) => {
                    let ix = paths::ix(*r);
                    quote!(let mut #local = #private::Dest::view(
                        #into_trait::<#nd::ArrayViewMut<'_, #ty, #ix>>::into(#id), #shown);)
                }
                _ => quote!(let mut #local = #private::Dest::<#ty, #nd::Ix1>::slice(#id, #shown);),
            })
        });
    let raw_dests = result_tys.iter().zip(&dest_locals).map(|(t, local)| {
        if t.rank() > 0 {
            quote!(#local.raw())
        } else {
            {
                let none = paths::none();
                quote!(#none)
            }
        }
    });
    let outs_var = format_ident!("__oxla_outs", span = Span::mixed_site());
    let finishes = result_tys
        .iter()
        .zip(&dest_locals)
        .enumerate()
        .filter(|(_, (t, _))| t.rank() > 0)
        .map(|(i, (_, local))| {
            let i = Literal::usize_unsuffixed(i);
            quote!(#local.finish(#outs_var, #i);)
        });
    let scalar_results: Vec<(usize, &RustTy)> = result_tys
        .iter()
        .enumerate()
        .filter(|(_, t)| t.rank() == 0)
        .collect();
    let scalar_values = scalar_results.iter().map(|(i, t)| {
        let i = Literal::usize_unsuffixed(*i);
        let ty = paths::float(t.dtype());
        quote!(#outs_var.scalar::<#ty>(#i))
    });
    let scalar_tys: Vec<TokenStream> = scalar_results
        .iter()
        .map(|(_, t)| paths::float(t.dtype()))
        .collect();
    // No scalar results: no return type and no `()` value (which a lint
    // would flag in the caller's crate).
    let (ret, value) = match scalar_tys.len() {
        0 => (quote!(), quote!()),
        1 => (quote!(-> #(#scalar_tys)*), quote!(#(#scalar_values)*)),
        _ => (quote!(-> (#(#scalar_tys,)*)), quote!((#(#scalar_values,)*))),
    };
    let call = if let Some((compiled_ident, compiled_static)) = program {
        // Without array results there is nothing to write into: the plain call.
        let dests = (scalar_results.len() < result_tys.len()).then(|| raw_dests.collect());
        let call = compiled_call(
            compiled_ident,
            param_idents,
            param_tys,
            dests,
            &outs_var,
            quote!({
                #(#finishes)*
                #value
            }),
        );
        quote! {
        #compiled_static
        #(#make_dests)*
        #call
        }
    } else {
        stub_body()
    };
    let stub_allow = if stub {
        quote!(#[allow(unused_variables, unreachable_code)])
    } else {
        quote!()
    };
    let doc = format!(
        " `{name}`, writing its array results into the caller's buffers (no allocation for them): one destination per array result, of the result's shape (checked: a mismatch panics naming the destination); returns the scalar results. Generated by oxla."
    );
    let vis = &g.vis;
    match g.origin {
        Origin::Original => {
            let mut sig = item.sig.clone();
            sig.ident = into_ident;
            sig.generics.params.push(syn::parse_quote!('oxla));
            for p in &dest_params {
                sig.inputs.push(syn::parse_quote!(#p));
            }
            sig.output = if scalar_tys.is_empty() {
                syn::ReturnType::Default
            } else {
                syn::parse_quote!(#ret)
            };
            quote! {
                #(#cfgs)*
                #[doc = #doc]
                // A sibling the caller may not use, with one parameter more
                // per array result: no warning for either.
                #[allow(dead_code, clippy::too_many_arguments)]
                #stub_allow
                #[track_caller]
                #vis #sig {
                    #call
                }
            }
        }
        Origin::Transform { .. } => {
            let params = param_idents
                .iter()
                .zip(param_tys)
                .filter(|(id, _)| !is_const_param(&id.to_string()))
                .map(|(id, t)| {
                    let t = param_type_tokens(t);
                    quote!(#id: #t)
                });
            quote! {
                #(#cfgs)*
                #[doc = #doc]
                // A sibling the caller may not use, with one parameter more
                // per array result: no warning for either.
                #[allow(dead_code, clippy::too_many_arguments)]
                #stub_allow
                #[track_caller]
                #vis fn #into_ident<'oxla>(#(#params,)* #(#dest_params),*) #ret {
                    #call
                }
            }
        }
    }
}

/// `let __oxla_const_0: f64 = (A) as f64;` for each constant the function
/// reads (a hidden parameter, see `consts`), spanned at its use in the
/// body so that rustc's errors (no such constant, not a number) point there.
fn const_lets(g: &GeneratedFn, idents: &[syn::Ident], dtype: DType) -> TokenStream {
    let ty = paths::float(dtype);
    let lets = idents.iter().filter_map(|id| {
        let c = g.consts.iter().find(|c| *id == c.param)?;
        let path = &c.path;
        let span = path
            .path
            .segments
            .last()
            .map_or(Span::call_site(), |s| s.ident.span());
        // The cast's type too: an invalid cast is reported at the use.
        let ty = respan(ty.clone(), span);
        Some(quote_spanned!(span=> let #id: #ty = (#path) as #ty;))
    });
    quote!(#(#lets)*)
}

/// `ts` with every token at `span`.
fn respan(ts: TokenStream, span: Span) -> TokenStream {
    ts.into_iter()
        .map(|mut t| {
            if let proc_macro2::TokenTree::Group(g) = &t {
                let mut inner = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                inner.set_span(span);
                t = proc_macro2::TokenTree::Group(inner);
            } else {
                t.set_span(span);
            }
            t
        })
        .collect()
}

/// Parameter names from the IR, made into valid, distinct identifiers.
fn ir_param_idents(f: &Function) -> Vec<syn::Ident> {
    let mut seen = BTreeSet::new();
    f.param_names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut name = match syn::parse_str::<syn::Ident>(n) {
                Ok(_) if n != "_" => n.clone(),
                _ => format!("arg{i}"),
            };
            while !seen.insert(name.clone()) {
                name = format!("{name}_{i}");
            }
            syn::Ident::new(&name, Span::call_site())
        })
        .collect()
}

/// The local holding `v` (hygienic: it cannot clash with the user's names).
fn local(v: Var) -> syn::Ident {
    format_ident!("v{}", v.0, span = Span::mixed_site())
}

/// A typed float literal, e.g. `2.0f32`, `-0.5f64`, `f32::INFINITY`.
fn float_lit(value: f64, dtype: DType) -> TokenStream {
    let ty = paths::float(dtype);
    if value.is_nan() {
        return quote!(#ty::NAN);
    }
    // A value finite in f64 may round to infinity in f32 (a folded constant).
    let infinite = match dtype {
        DType::F64 => value.is_infinite(),
        _ => (value as f32).is_infinite(),
    };
    if infinite {
        return if value > 0.0 {
            quote!(#ty::INFINITY)
        } else {
            quote!(#ty::NEG_INFINITY)
        };
    }
    let lit = match dtype {
        DType::F64 => Literal::f64_suffixed(value.abs()),
        DType::I64 => Literal::i64_suffixed(value.abs() as i64),
        DType::I32 => Literal::i32_suffixed(value.abs() as i32),
        DType::Bool => {
            return if value != 0.0 {
                quote!(true)
            } else {
                quote!(false)
            }
        }
        _ => Literal::f32_suffixed((value as f32).abs()),
    };
    if value.is_sign_negative() {
        quote!(-#lit)
    } else {
        lit.into_token_stream()
    }
}

/// Straight-line Rust for a function whose values are all scalars.
fn scalar_body(f: &Function, params: &[syn::Ident], tuple_return: bool) -> TokenStream {
    let live = live_eqns(f);
    let used: BTreeSet<Var> = live
        .iter()
        .flat_map(|&i| f.eqns[i].ins.iter().copied())
        .chain(f.outs.iter().copied())
        .collect();
    let mut stmts = Vec::new();
    for (v, id) in f.params.iter().zip(params) {
        if used.contains(v) {
            let l = local(*v);
            stmts.push(quote!(let #l = #id;));
        }
    }
    for &i in &live {
        let e = &f.eqns[i];
        if e.op.is_control() {
            let outs: Vec<syn::Ident> = e.outs.iter().map(|v| local(*v)).collect();
            let ins: Vec<TokenStream> = e
                .ins
                .iter()
                .map(|v| local(*v).into_token_stream())
                .collect();
            let value = match &e.op {
                Op::Loop(l) => scalar_loop::loop_expr(l, &ins),
                Op::LoopReverse(l) => scalar_loop::reverse_expr(l, &ins),
                Op::Cond(c) => scalar_loop::cond_expr(c, &ins),
                _ => unreachable!("internal error: an unknown control op"),
            };
            stmts.push(quote!(let (#(#outs,)*) = #value;));
            continue;
        }
        let out = local(e.out());
        let ins: Vec<syn::Ident> = e.ins.iter().map(|v| local(*v)).collect();
        let dtype = f.dtype(e.out());
        let ty = paths::float(dtype);
        let value = match &e.op {
            Op::Literal { value, dtype } => float_lit(*value, *dtype),
            Op::Unary(op) => {
                let x = &ins[0];
                match op {
                    UnaryOp::Neg => quote!(-#x),
                    UnaryOp::Exp => quote!(#x.exp()),
                    UnaryOp::Log => quote!(#x.ln()),
                    UnaryOp::Sin => quote!(#x.sin()),
                    UnaryOp::Cos => quote!(#x.cos()),
                    UnaryOp::Tanh => quote!(#x.tanh()),
                    UnaryOp::Sqrt => quote!(#x.sqrt()),
                    UnaryOp::Powi(n) => {
                        let n = Literal::i32_unsuffixed(*n);
                        quote!(#x.powi(#n))
                    }
                    UnaryOp::Round(mode) => {
                        let method = syn::Ident::new(mode.name(), Span::call_site());
                        quote!(#x.#method())
                    }
                    UnaryOp::Signum => quote!(#x.signum()),
                    UnaryOp::ExpM1 => quote!(#x.exp_m1()),
                    // Rust has no stable `erf`: the interpreters' f64 one,
                    // rounded once for f32.
                    UnaryOp::Erf => {
                        let erf = paths::erf();
                        {
                            let f64_ty = paths::float(DType::F64);
                            quote!((#erf(#x as #f64_ty) as #ty))
                        }
                    }
                    // `lax.sign`: ±0 and NaN are returned as they are.
                    UnaryOp::Sign => quote!(if #x > 0.0 {
                        1.0
                    } else if #x < 0.0 {
                        -1.0
                    } else {
                        #x
                    }),
                }
            }
            Op::Binary(op) => {
                let (a, b) = (&ins[0], &ins[1]);
                match op {
                    BinaryOp::Add => quote!(#a + #b),
                    BinaryOp::Sub => quote!(#a - #b),
                    BinaryOp::Mul => quote!(#a * #b),
                    BinaryOp::Div => quote!(#a / #b),
                    // As `BinaryOp::eval`: NaN from either operand (unlike
                    // `f64::max`, which ignores a NaN), and at a tie the
                    // bitwise AND (max) or OR (min) of the operands: +0 for
                    // max and -0 for min of zeros of either sign, in either
                    // order (a comparison alone gave the second operand).
                    BinaryOp::Max => quote!(if #a == #b {
                        <#ty>::from_bits(#a.to_bits() & #b.to_bits())
                    } else if #a > #b || #a.is_nan() {
                        #a
                    } else {
                        #b
                    }),
                    BinaryOp::Min => quote!(if #a == #b {
                        <#ty>::from_bits(#a.to_bits() | #b.to_bits())
                    } else if #a < #b || #a.is_nan() {
                        #a
                    } else {
                        #b
                    }),
                    BinaryOp::Pow => quote!(#a.powf(#b)),
                }
            }
            Op::Cmp(op) => {
                let (a, b) = (&ins[0], &ins[1]);
                match op {
                    CmpOp::Lt => quote!(#a < #b),
                    CmpOp::Le => quote!(#a <= #b),
                    CmpOp::Gt => quote!(#a > #b),
                    CmpOp::Ge => quote!(#a >= #b),
                    CmpOp::Eq => quote!(#a == #b),
                    CmpOp::Ne => quote!(#a != #b),
                }
            }
            Op::Select => {
                let (p, a, b) = (&ins[0], &ins[1], &ins[2]);
                quote!(if #p { #a } else { #b })
            }
            // On scalars these are the identity (`is_straight_line` checked
            // that every live value is a scalar).
            Op::Broadcast { .. }
            | Op::ReduceSum { .. }
            | Op::ReduceMax { .. }
            | Op::ReduceMin { .. }
            | Op::ReduceProd { .. }
            | Op::Transpose { .. }
            | Op::Reshape { .. }
            | Op::StopGradient
            // A scalar slice or pad is the identity; a concatenation has
            // rank >= 1, so it never reaches straight-line code.
            | Op::Slice { .. }
            | Op::Pad { .. }
            | Op::Concatenate { .. } => {
                let x = &ins[0];
                quote!(#x)
            }
            // The picked-from array and a scatter's result have rank >= 1.
            Op::Gather { .. } | Op::ScatterAdd { .. } => {
                unreachable!("internal error: {} in straight-line code", e.op)
            }
            Op::Dot | Op::DotGeneral(_) => {
                let (x, y) = (&ins[0], &ins[1]);
                quote!(#x * #y)
            }
            // Rust's `as` is the op's semantics (see `ops::convert`).
            Op::Convert { .. } if f.dtype(e.ins[0]) == DType::Bool => {
                let x = &ins[0];
                {
                let u8_ty = paths::u8();
                quote!((#x as #u8_ty) as #ty)
            }
            }
            Op::Convert { .. } => {
                let x = &ins[0];
                quote!(#x as #ty)
            }
            // A scalar-only function has no dimension symbols.
            Op::DimSize {
                dim: oxla_core::Dim::Const(c),
                dtype,
            } => float_lit(*c as f64, *dtype),
            // Never scalar: `is_straight_line` excludes them; loops are
            // handled above.
            Op::DimSize { .. }
            | Op::Iota { .. }
            | Op::LinearScan { .. }
            | Op::Loop(_)
            | Op::LoopReverse(_)
            | Op::Cond(_) => {
                let msg = format!("internal error: {} in a scalar function", e.op);
                { let panic = paths::panic(); quote!(#panic(#msg)) }
            }
        };
        stmts.push(quote!(let #out: #ty = #value;));
    }
    let outs: Vec<syn::Ident> = f.outs.iter().map(|v| local(*v)).collect();
    let result = if tuple_return {
        quote!((#(#outs,)*))
    } else {
        quote!(#(#outs)*)
    };
    quote! {
        #(#stmts)*
        #result
    }
}

/// `f` as a Rust block expression of its results' tuple, with `args` for
/// its params (a loop's body).
pub(crate) fn scalar_block(f: &Function, args: &[TokenStream]) -> TokenStream {
    let params: Vec<syn::Ident> = (0..f.params.len())
        .map(|k| format_ident!("__oxla_arg{}", k))
        .collect();
    let body = scalar_body(f, &params, true);
    quote!({
        #[allow(unused_variables)]
        let (#(#params,)*) = (#(#args,)*);
        #body
    })
}

#[cfg(test)]
pub(crate) fn scalar_body_for_tests(f: &Function) -> TokenStream {
    let params: Vec<syn::Ident> = f
        .param_names
        .iter()
        .map(|n| format_ident!("{}", n))
        .collect();
    scalar_body(f, &params, f.outs.len() != 1)
}

/// The Rust types of the parameters and results of `g`: as declared for the
/// original function; for a generated one, by rank. Rank 1 is `&[T]` and
/// `Vec<T>` when the original function uses no ndarray type, else (and for
/// every higher rank) an ndarray view (`impl Into<ArrayViewN<T>>`, so that
/// `&array`, `array.view()` and slices all pass) and an owned array.
pub(crate) fn rust_types(
    item: &syn::ItemFn,
    g: &GeneratedFn,
    dtype: DType,
) -> (Vec<RustTy>, Vec<RustTy>) {
    let declared_params: Vec<RustTy> = item
        .sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(pt) => param_ty(&pt.ty).ok(),
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    let declared_results: Vec<RustTy> = match &item.sig.output {
        syn::ReturnType::Type(_, ty) => return_tys(ty)
            .map(|(rs, _)| rs.into_iter().map(|(r, _)| r).collect())
            .unwrap_or_default(),
        syn::ReturnType::Default => Vec::new(),
    };
    if g.origin == Origin::Original {
        // A constant's hidden parameter is a scalar of the float type.
        let mut declared = declared_params.into_iter();
        let params = g
            .function
            .param_names
            .iter()
            .filter_map(|n| match is_const_param(n) {
                true => Some(RustTy::Scalar(dtype)),
                false => declared.next(),
            })
            .collect();
        return (params, declared_results);
    }
    // An integer scalar parameter keeps its declared Rust type (a `usize`
    // stays a `usize`) in every function generated from the original.
    let declared_names: Vec<String> = item
        .sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(pt) => match (&*pt.pat, param_ty(&pt.ty)) {
                (syn::Pat::Ident(pi), Ok(_)) => Some(ident_name(&pi.ident)),
                _ => None,
            },
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    let declared_int = |name: &str, v: &Var| {
        let i = declared_names.iter().position(|n| n == name)?;
        let t = &declared_params[i];
        let int =
            matches!(t, RustTy::Unsigned(_)) || matches!(t, RustTy::Scalar(d) if !d.is_float());
        (int && t.dtype() == g.function.dtype(*v) && g.function.shape(*v).is_scalar())
            .then(|| t.clone())
    };
    let nd_style = declared_params
        .iter()
        .chain(&declared_results)
        .any(RustTy::is_ndarray);
    let f = &g.function;
    let by_rank = |v: &Var, result: bool| {
        // Integer parameters keep their element type; floats take the function's.
        let dtype = if f.dtype(*v).is_float() {
            dtype
        } else {
            f.dtype(*v)
        };
        match f.shape(*v).rank() {
            0 => RustTy::Scalar(dtype),
            1 if !nd_style && result => RustTy::Vec(dtype),
            1 if !nd_style => RustTy::Slice(dtype),
            r => RustTy::NdArray(dtype, r),
        }
    };
    (
        f.params
            .iter()
            .zip(&f.param_names)
            .map(|(v, name)| declared_int(name, v).unwrap_or_else(|| by_rank(v, false)))
            .collect(),
        f.outs.iter().map(|v| by_rank(v, true)).collect(),
    )
}

/// The parameter type of a generated function.
pub(crate) fn param_type_tokens(t: &RustTy) -> TokenStream {
    let ty = paths::float(t.dtype());
    match t {
        RustTy::Scalar(_) => ty,
        RustTy::Unsigned(u) => paths::unsigned(*u),
        RustTy::NdArray(_, r) => {
            let (nd, ix) = (paths::ndarray(), paths::ix(*r));
            let into_trait = paths::into_trait();
            quote!(impl #into_trait<#nd::ArrayView<'oxla, #ty, #ix>>)
        }
        _ => quote!(&[#ty]),
    }
}

/// The result type of a generated function.
pub(crate) fn result_type_tokens(t: &RustTy) -> TokenStream {
    let ty = paths::float(t.dtype());
    match t {
        RustTy::Scalar(_) => ty,
        RustTy::NdArray(_, r) => {
            let (nd, ix) = (paths::ndarray(), paths::ix(*r));
            quote!(#nd::Array<#ty, #ix>)
        }
        _ => {
            let vec = paths::vec();
            quote!(#vec<#ty>)
        }
    }
}

/// A call of `compiled` (a `CompiledFn`) on the function's parameters,
/// handing the outputs to `body` as `outs`, after the `let`s that convert
/// `usize`/`u32` arguments to the `i64` the IR holds them in. With array
/// destinations (`dests`, one per result) it is `call_into`. Parameters
/// that are all scalars and slices (of rank 0 and 1, known here) go as
/// `Flat` arguments to `call_flat`, the lean call.
fn compiled_call(
    compiled: &syn::Ident,
    params: &[syn::Ident],
    param_tys: &[RustTy],
    dests: Option<Vec<TokenStream>>,
    outs: &syn::Ident,
    body: TokenStream,
) -> TokenStream {
    let nd = paths::ndarray();
    let into_trait = paths::into_trait();
    let index_locals: Vec<syn::Ident> = params
        .iter()
        .map(|id| format_ident!("__oxla_index_{}", id, span = Span::mixed_site()))
        .collect();
    let index_lets =
        params
            .iter()
            .zip(param_tys)
            .zip(&index_locals)
            .filter_map(|((id, t), local)| match t {
                RustTy::Unsigned(_) => {
                    let name = Literal::string(&ident_name(id));
                    {
                        let (i64_ty, index_arg) = (paths::float(DType::I64), paths::index_arg());
                        Some(quote!(let #local: #i64_ty = #index_arg(#id, #name);))
                    }
                }
                _ => None,
            });
    let index_lets = quote!(#(#index_lets)*);
    let flat = dests.is_none()
        && param_tys.iter().all(|t| match t {
            RustTy::Scalar(_) | RustTy::Unsigned(_) | RustTy::Slice(_) | RustTy::Vec(_) => true,
            RustTy::Fixed { dims, .. } => dims.len() == 1,
            RustTy::NdArray(..) => false,
        });
    let arg = if flat {
        paths::flat_arg()
    } else {
        paths::arg()
    };
    let args = params
        .iter()
        .zip(param_tys)
        .zip(&index_locals)
        .map(|((id, t), local)| match t {
            RustTy::Unsigned(_) => quote!(#arg::scalar(&#local)),
            RustTy::Scalar(_) => quote!(#arg::scalar(&#id)),
            RustTy::Slice(_) | RustTy::Vec(_) => quote!(#arg::slice(#id)),
            RustTy::Fixed { .. } if flat => quote!(#arg::slice(&#id[..])),
            // A view, a reference to an array, or (generated functions) an
            // `impl Into` of a view.
            RustTy::NdArray(d, r) => {
                let (ty, ix) = (paths::float(*d), paths::ix(*r));
                quote!(#arg::view(#into_trait::<#nd::ArrayView<'_, #ty, #ix>>::into(#id)))
            }
            RustTy::Fixed { by_ref: true, .. } => quote!(#arg::fixed(#id)),
            RustTy::Fixed { by_ref: false, .. } => quote!(#arg::fixed(&#id)),
        });
    let call = match dests {
        None if flat => quote!(#compiled.call_flat(&[#(#args),*], |#outs| #body)),
        None => quote!(#compiled.call(&[#(#args),*], |#outs| #body)),
        Some(dests) => quote!(#compiled.call_into(&[#(#args),*], &[#(#dests),*], |#outs| #body)),
    };
    quote! {
        #index_lets
        #call
    }
}

/// A call of the function's `CompiledFn` (the module-level `static` that
/// `compiled_item` emits).
fn array_body(
    params: &[syn::Ident],
    param_tys: &[RustTy],
    result_tys: &[RustTy],
    compiled: &syn::Ident,
    tuple_return: bool,
) -> TokenStream {
    let outs_var = format_ident!("__oxla_outs", span = Span::mixed_site());
    let outs = result_tys.iter().enumerate().map(|(i, t)| {
        let i = Literal::usize_unsuffixed(i);
        let ty = paths::float(t.dtype());
        match t {
            RustTy::Scalar(_) | RustTy::Unsigned(_) => quote!(#outs_var.scalar::<#ty>(#i)),
            RustTy::NdArray(_, r) => {
                let ix = paths::ix(*r);
                quote!(#outs_var.array::<#ty, #ix>(#i))
            }
            _ => quote!(#outs_var.vec::<#ty>(#i)),
        }
    });
    let result = if tuple_return {
        quote!((#(#outs,)*))
    } else {
        quote!(#(#outs)*)
    };
    compiled_call(compiled, params, param_tys, None, &outs_var, result)
}

/// `extern` declarations of the AOT kernels and the static table naming them.
pub(crate) fn aot_items(syms: &[String]) -> (TokenStream, TokenStream) {
    let aot_kernel = paths::aot_kernel();
    let mut decls = Vec::new();
    let mut entries = Vec::new();
    for s in syms {
        let v4 = format_ident!("{}_v4", s);
        let v3 = format_ident!("{}_v3", s);
        let base = format_ident!("{}_base", s);
        let (u8_ty, i64_ty) = (paths::u8(), paths::float(DType::I64));
        decls.push(quote! {
            fn #v4(args: *const *mut #u8_ty, sizes: *const #i64_ty);
            fn #v3(args: *const *mut #u8_ty, sizes: *const #i64_ty);
            fn #base(args: *const *mut #u8_ty, sizes: *const #i64_ty);
        });
        let name = Literal::string(s);
        entries.push(quote!(#aot_kernel { name: #name, v4: #v4, v3: #v3, base: #base }));
    }
    let n = Literal::usize_unsuffixed(syms.len());
    let items = quote! {
        unsafe extern "C" {
            #(#decls)*
        }
        static __OXLA_AOT: [#aot_kernel; #n] = [#(#entries),*];
    };
    (items, quote!(&__OXLA_AOT))
}
