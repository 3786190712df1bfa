//! `<name>_into`: the sibling of an array function that writes its array
//! results into destinations the caller passes.

use super::compiled::compiled_call;
use super::items::stub_body;
use super::signature::param_type_tokens;
use crate::codegen::paths;
use crate::lower::consts::is_const_param;
use crate::lower::ident_name;
use crate::parse::types::RustTy;
use crate::stack::{GeneratedFn, Origin};
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote};

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
pub(super) fn into_function(
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
    let lints = super::lints::function();
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
                #[allow(dead_code)]
                #lints
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
                #[allow(dead_code)]
                #lints
                #stub_allow
                #[track_caller]
                #vis fn #into_ident<'oxla>(#(#params,)* #(#dest_params),*) #ret {
                    #call
                }
            }
        }
    }
}
