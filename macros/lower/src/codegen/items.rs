//! The items of each `GeneratedFn`: a `const NAME_IR` and a function whose
//! body is emitted from its IR, either as straight-line Rust (scalar-only
//! functions, see `scalar`) or as a call of a `CompiledFn` (array functions,
//! see `compiled`), with its `_into` and `_device` siblings.

use super::compiled::array_body;
use super::compiled::compiled_item;
use super::compiled::not_built;
use super::into_fn::into_function;
use super::options::CodegenOptions;
use super::scalar::scalar_body;
use super::signature::param_type_tokens;
use super::signature::result_type_tokens;
use super::signature::rust_types;
use crate::codegen::aot::{aot_symbols, is_straight_line};
use crate::codegen::paths;
use crate::errors::Errors;
use crate::lower::consts::is_const_param;
use crate::lower::{ident_name, return_tys};
use crate::parse::types::RustTy;
use crate::stack::{guard, has_free_axes, ir_const_name, GeneratedFn, Origin};
use oxla_core::{DType, Function};
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use std::collections::BTreeSet;

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
    let cfgs = crate::parse::attr::cfg_attrs(item);
    // The prelude goes into the first function emitted as one, unless the
    // original's stand-in holds it.
    let mut prelude = Some(prelude);
    if let Some(g) = gens.first().filter(|g| has_free_axes(g)) {
        let site = opts.enclosing(item.sig.ident.span());
        if let Some(stub) = unbound_stand_in(item, g, gens, &cfgs, site, prelude.unwrap()) {
            out.extend(stub);
            prelude = None;
        }
    }
    for g in gens {
        // A function whose collectives leave an axis for another attribute
        // to bind is not callable as it is: its IR constant alone (its
        // callable macro still serves calls inside annotated functions).
        let r = if has_free_axes(g) {
            Parts::new(item, g, &cfgs, false).and_then(|parts| {
                let text = guard("printing the IR", g.name.span(), || {
                    Ok(oxla_core::text::print(&g.function))
                })?;
                Ok(parts.ir_const(&Literal::string(&text)))
            })
        } else {
            let empty = TokenStream::new();
            let p = match prelude.take() {
                Some(p) if g.origin == Origin::Original => p.clone(),
                // The original is not emitted: its signature's types are
                // used here, so that their imports count as used.
                Some(p) => {
                    let sig = signature_use(item);
                    quote!(#p #sig)
                }
                None => empty,
            };
            generate_one(item, g, &cfgs, opts, false, &p)
        };
        match r {
            Ok(ts) => out.extend(ts),
            Err(e) => errors.push(e),
        }
    }
    // No function to hold it (a helper whose collectives its callers bind).
    if let Some(prelude) = prelude.filter(|p| !p.is_empty()) {
        let host = format_ident!("__oxla_prelude", span = Span::mixed_site());
        let sig = signature_use(item);
        out.extend(quote! {
            #(#cfgs)*
            const _: () = {
                #[allow(dead_code)]
                fn #host() { #prelude #sig }
            };
        });
    }
    errors.check().map(|()| out)
}

/// The original function's signature as an uncalled item, so that the
/// imports it names count as used when the function itself is not
/// emitted (its collectives leave an axis free).
fn signature_use(item: &syn::ItemFn) -> TokenStream {
    let mut sig = item.sig.clone();
    sig.ident = format_ident!("__oxla_signature", span = Span::mixed_site());
    let panic = paths::panic();
    quote! {
        #[allow(dead_code, unused_variables, unused_mut, clippy::all)]
        #sig { #panic() }
    }
}

/// In place of the original function when its collectives leave an axis
/// for its attributes to bind, where items may be written (a module or a
/// block; `None` elsewhere, and for a function without parameters): a
/// function of the same name and parameter count whose call is an error
/// saying which functions to call instead, holding `prelude` in its body.
fn unbound_stand_in(
    item: &syn::ItemFn,
    g: &GeneratedFn,
    gens: &[GeneratedFn],
    cfgs: &[&syn::Attribute],
    site: Option<crate::resolve::site::Enclosing>,
    prelude: &TokenStream,
) -> Option<TokenStream> {
    site.filter(|s| s.allows_items())?;
    let name = &item.sig.ident;
    let params: Vec<syn::Ident> = param_idents(item, g)
        .into_iter()
        .filter(|id| !is_const_param(&id.to_string()))
        .map(|id| format_ident!("{}", id, span = Span::mixed_site()))
        .collect();
    if params.is_empty() {
        return None;
    }
    let tys: Vec<syn::Ident> = (0..params.len())
        .map(|i| format_ident!("__OxlaArg{}", i, span = Span::mixed_site()))
        .collect();
    let axes: Vec<String> = crate::stack::unbound_axes(&g.function)
        .into_iter()
        .map(|a| format!("`{a}`"))
        .collect();
    let callable: Vec<String> = gens
        .iter()
        .filter(|g| !has_free_axes(g) && g.origin != Origin::Original)
        .map(|g| format!("`{}`", ident_name(&g.name)))
        .collect();
    let instead = match callable.as_slice() {
        [] => "call it inside an annotated function under a `#[pmap]` or `#[vmap]` that binds them"
            .to_string(),
        names => format!("call {} instead", names.join(" or ")),
    };
    let message = format!(
        "`{name}` cannot be called as a plain function: its collectives use the axis {}, which only its `#[pmap]` or `#[vmap]` binds; {instead}",
        axes.join(", ")
    );
    let label = format!("`{name}` runs only under the attributes that bind its axes");
    let trait_ = format_ident!("__oxla_unbound_{}", ident_name(name));
    let vis = &item.vis;
    let sig = signature_use(item);
    let none_such = paths::infallible();
    Some(quote! {
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #[diagnostic::on_unimplemented(message = #message, label = #label)]
        #vis trait #trait_ {}
        // For no value (rustc would otherwise suggest implementing it).
        #(#cfgs)*
        #[diagnostic::do_not_recommend]
        impl #trait_ for #none_such {}
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(dead_code, unused_variables, non_camel_case_types, clippy::all)]
        #vis fn #name<#(#tys: #trait_),*>(#(#params: #tys),*) -> ! {
            #prelude
            #sig
            loop {}
        }
    })
}

/// After an error: the items `generate` would emit for `gens`, each
/// function with a body that only panics (see `placeholder`).
pub(crate) fn generate_stubs(
    item: &syn::ItemFn,
    gens: &[GeneratedFn],
    prelude: &TokenStream,
) -> Option<TokenStream> {
    let cfgs = crate::parse::attr::cfg_attrs(item);
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
        // The prelude goes into the original function.
        let empty = TokenStream::new();
        let prelude = match g.origin {
            Origin::Original => prelude,
            Origin::Transform { .. } => &empty,
        };
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
    let span = g.name.span();
    let text = guard("printing the IR", span, || {
        Ok(oxla_core::text::print(&g.function))
    })?;
    let text_lit = Literal::string(&text);
    let parts = Parts::new(item, g, cfgs, stub)?;
    let ir_const = parts.ir_const(&text_lit);
    let body = parts.body(opts, &text_lit)?;
    // The constants are read before the call, like the parameters.
    let const_lets = &parts.const_lets;
    let compiled_static = &body.compiled_static;
    let program = quote!(#compiled_static #const_lets);
    let program = (!stub).then_some((&parts.compiled_ident, &program));
    let into_fn = parts.sibling_into(program);
    let device_fn = parts.device_fn(program);
    let function = parts.function(body, prelude);
    Ok((ir_const, function, into_fn, device_fn))
}

/// What the parts of one generated function share: its name and its
/// signature's Rust form.
struct Parts<'a> {
    item: &'a syn::ItemFn,
    g: &'a GeneratedFn,
    cfgs: &'a [&'a syn::Attribute],
    stub: bool,
    name: String,
    param_idents: Vec<syn::Ident>,
    param_tys: Vec<RustTy>,
    result_tys: Vec<RustTy>,
    tuple_return: bool,
    straight_line: bool,
    /// The `let`s of the constants the function reads (see `const_lets`).
    const_lets: TokenStream,
    /// Each array function holds its compiled program in a `static` in its
    /// own body (see `compiled_item`), named this.
    compiled_ident: syn::Ident,
}

/// The function's body, and what comes before it there.
struct Body {
    /// What to say when the build script did not compile this function.
    missing_kernels: Option<TokenStream>,
    /// The `static` holding an array function's compiled program.
    compiled_static: TokenStream,
    body: TokenStream,
}

impl<'a> Parts<'a> {
    fn new(
        item: &'a syn::ItemFn,
        g: &'a GeneratedFn,
        cfgs: &'a [&'a syn::Attribute],
        stub: bool,
    ) -> Result<Self, syn::Error> {
        let f = &g.function;
        let dtype = float_type(f);
        let param_idents = param_idents(item, g);
        let const_lets = const_lets(g, &param_idents, dtype);
        if param_idents.len() != f.params.len() {
            return Err(syn::Error::new(
                g.name.span(),
                "internal error: parameter count changed",
            ));
        }
        let (param_tys, result_tys) = rust_types(item, g, dtype);
        Ok(Parts {
            item,
            g,
            cfgs,
            stub,
            name: ident_name(&g.name),
            param_idents,
            param_tys,
            result_tys,
            tuple_return: returns_tuple(item, g),
            straight_line: is_straight_line(f),
            const_lets,
            compiled_ident: format_ident!("__OXLA_COMPILED", span = Span::mixed_site()),
        })
    }

    /// `const NAME_IR: &str`, the IR's text `text_lit`.
    fn ir_const(&self, text_lit: &Literal) -> TokenStream {
        let (cfgs, vis) = (self.cfgs, &self.g.vis);
        let const_ident = self.const_ident();
        let const_doc = format!(
            " The oxla IR of `{}`, in the text form of `oxla_core::text`.",
            self.name
        );
        // Hidden from the user's docs, which would show the whole IR text.
        quote! {
            #(#cfgs)*
            #[doc = #const_doc]
            #[doc(hidden)]
            #[allow(dead_code)]
            #vis const #const_ident: &str = #text_lit;
        }
    }

    fn const_ident(&self) -> syn::Ident {
        syn::Ident::new(&ir_const_name(&self.name), self.g.name.span())
    }

    /// The body: a stub's panic, straight-line Rust, or the call of the
    /// compiled program (whose IR text is `text_lit`), bound to the
    /// ahead-of-time kernels when the manifest lists them all.
    fn body(&self, opts: &CodegenOptions, text_lit: &Literal) -> Result<Body, syn::Error> {
        let f = &self.g.function;
        let mut missing_kernels = None;
        let mut compiled_static = TokenStream::new();
        let body = if self.stub {
            stub_body()
        } else if self.straight_line {
            scalar_body(f, &self.param_idents, self.tuple_return)
        } else {
            let aot = match &opts.aot_manifest {
                Some(manifest) => {
                    let syms = aot_symbols(f);
                    let all_built = !syms.is_empty() && syms.iter().all(|s| manifest.contains(s));
                    if !syms.is_empty() && !all_built {
                        let span = self.g.name.span();
                        missing_kernels = Some(not_built(&self.name, span, opts.aot_required)?);
                    }
                    all_built.then_some(syms)
                }
                None => None,
            };
            compiled_static = compiled_item(
                &self.compiled_ident,
                text_lit,
                aot.as_deref(),
                &self.g.index_checks,
                (&self.g.original, &self.g.steps),
            );
            array_body(
                &self.param_idents,
                &self.param_tys,
                &self.result_tys,
                &self.compiled_ident,
                self.tuple_return,
            )
        };
        Ok(Body {
            missing_kernels,
            compiled_static,
            body,
        })
    }

    /// The `_into` sibling, when the function has array results and is not
    /// straight line; `program` is how its body reaches the compiled
    /// program (`None` for a stub).
    fn sibling_into(&self, program: Option<(&syn::Ident, &TokenStream)>) -> TokenStream {
        let has_array_result = self.result_tys.iter().any(|t| t.rank() > 0);
        if self.straight_line || !has_array_result {
            return TokenStream::new();
        }
        into_function(
            self.item,
            self.g,
            &self.param_idents,
            &self.param_tys,
            &self.result_tys,
            program,
            self.cfgs,
        )
    }

    /// The `_device` sibling, when the function has one (see `device`).
    fn device_fn(&self, program: Option<(&syn::Ident, &TokenStream)>) -> TokenStream {
        if !crate::codegen::device::has_device_form(self.straight_line) {
            return TokenStream::new();
        }
        crate::codegen::device::device_function(
            &self.name,
            &self.g.vis,
            self.cfgs,
            &self.param_idents,
            &self.param_tys,
            &self.result_tys,
            self.tuple_return,
            program,
        )
    }

    /// The function: the original's signature, or a transform's from its
    /// IR, around `body`, which starts with `prelude` (items that must be
    /// inside a function to be allowed in an `impl` block too: the callers
    /// pass it to one function, the original unless it is not emitted).
    fn function(&self, body: Body, prelude: &TokenStream) -> TokenStream {
        let const_lets = if self.stub {
            quote!()
        } else {
            self.const_lets.clone()
        };
        let Body {
            missing_kernels,
            compiled_static,
            body,
        } = body;
        let body = quote! {
            #prelude
            #missing_kernels
            #compiled_static
            #const_lets
            #body
        };
        // A stub's parameters are unused.
        let stub_allow = if self.stub {
            quote!(#[allow(unused_variables, unreachable_code)])
        } else {
            quote!()
        };
        // A length mismatch in an array function panics: report the caller's line.
        let track_caller = if self.straight_line {
            quote!()
        } else {
            quote!(#[track_caller])
        };
        let vis = &self.g.vis;
        match &self.g.origin {
            Origin::Original => {
                let attrs = &self.item.attrs;
                let sig = &self.item.sig;
                // Also a flattened struct function's, whose signature oxla wrote.
                let lints = super::lints::function();
                quote! {
                    #(#attrs)*
                    #stub_allow
                    #lints
                    #track_caller
                    #vis #sig {
                        #body
                    }
                }
            }
            Origin::Transform { kind, input } => {
                let doc = format!(
                    " Generated by oxla: `#[{}]` applied to `{input}`. Its IR is in `{}`.",
                    kind.name(),
                    self.const_ident()
                );
                let sig = self.transform_signature();
                let cfgs = self.cfgs;
                let lints = super::lints::function();
                quote! {
                    #(#cfgs)*
                    #[doc = #doc]
                    #stub_allow
                    #lints
                    #track_caller
                    #vis #sig {
                        #body
                    }
                }
            }
        }
    }

    /// A transform's signature, from its IR: the parameters the caller
    /// passes (not the constants' hidden ones) and the results.
    fn transform_signature(&self) -> TokenStream {
        let params = self
            .param_idents
            .iter()
            .zip(&self.param_tys)
            .filter(|(id, _)| !is_const_param(&id.to_string()))
            .map(|(id, t)| {
                let t = param_type_tokens(t);
                quote!(#id: #t)
            });
        let rets: Vec<TokenStream> = self.result_tys.iter().map(result_type_tokens).collect();
        // Views borrow for the call: one lifetime serves them all.
        let generics = if self.param_tys.iter().any(RustTy::is_ndarray) {
            quote!(<'oxla>)
        } else {
            quote!()
        };
        let ret = if self.tuple_return {
            quote!((#(#rets),*))
        } else {
            quote!(#(#rets)*)
        };
        let name = &self.g.name;
        quote!(fn #name #generics(#(#params),*) -> #ret)
    }
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
