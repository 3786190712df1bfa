//! Code generation: a wrapper with the user's types around each function
//! generated from the flat one, which passes the leaves in and builds the
//! structs of the results.

use super::def::Step;
use super::flatten::Flat;
use super::flatten::Slot;
use crate::errors::Errors;
use crate::lower::{ident_name, return_tys};
use crate::parse::types::RustTy;
use crate::stack::{GeneratedFn, Origin};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::spanned::Spanned;

/// One parameter of a wrapper: its name, type, and the arguments of the
/// flat function it stands for.
struct WrapParam {
    name: syn::Ident,
    ty: TokenStream,
    /// The type of a struct parameter (`Mlp`, `Batched<Mlp>`).
    ty_tree: Option<TokenStream>,
    args: Vec<TokenStream>,
}

/// The items for `gens` (the flat function's), each function wrapped.
pub(crate) fn generate(
    item: &syn::ItemFn,
    flat: &Flat,
    gens: &[GeneratedFn],
    opts: &crate::CodegenOptions,
    prelude: &TokenStream,
    stub: bool,
) -> Result<TokenStream, Errors> {
    let mut errors = Errors::new();
    let mut out = TokenStream::new();
    let cfgs = crate::parse::attr::cfg_attrs(item);
    let inner_name = syn::Ident::new("__oxla_flat", Span::mixed_site());
    let mut inner_item = flat.item.clone();
    inner_item.attrs.clear();
    inner_item.vis = syn::Visibility::Inherited;
    inner_item.sig.ident = inner_name.clone();
    for g in gens {
        match wrap_one(
            item,
            flat,
            g,
            &inner_item,
            &inner_name,
            &cfgs,
            opts,
            prelude,
            stub,
        ) {
            Ok(ts) => out.extend(ts),
            Err(e) => errors.push(e),
        }
    }
    errors.check().map(|()| out)
}

#[allow(clippy::too_many_arguments)]
fn wrap_one(
    item: &syn::ItemFn,
    flat: &Flat,
    g: &GeneratedFn,
    inner_item: &syn::ItemFn,
    inner_name: &syn::Ident,
    cfgs: &[&syn::Attribute],
    opts: &crate::CodegenOptions,
    prelude: &TokenStream,
    stub: bool,
) -> Result<TokenStream, syn::Error> {
    let span = g.name.span();
    let internal = |what: &str| {
        syn::Error::new(
            span,
            format!("internal error in oxla (parameter structs): {what}"),
        )
    };
    let mut inner_g = g.clone();
    inner_g.name = inner_name.clone();
    inner_g.vis = syn::Visibility::Inherited;
    let prelude = match g.origin {
        Origin::Original => prelude.clone(),
        Origin::Transform { .. } => TokenStream::new(),
    };
    let (ir_const, inner_fn) =
        crate::codegen::generate_nested(item, g, inner_item, &inner_g, cfgs, opts, stub, &prelude)?;
    let (param_tys, result_tys) = crate::codegen::flat_types(inner_item, &inner_g);
    let f = &g.function;

    // The signature in the user's types of the function `g` is.
    let sig = match g.origin {
        Origin::Original => flat.original(),
        Origin::Transform { .. } => flat
            .sig(&g.name)
            .ok_or_else(|| internal("no attribute generates this function"))?,
    };

    // Parameters: primals, then tangents (jvp) or cotangents (vjp).
    let mut k = 0;
    let mut params: Vec<WrapParam> = Vec::new();
    let tree = crate::codegen::paths::tree();
    let batched = crate::codegen::paths::batched();
    for (name, _, slot) in &sig.params {
        let name = name.clone();
        match slot {
            Slot::Plain => {
                let ty = param_tys
                    .get(k)
                    .map(crate::codegen::param_type_tokens)
                    .unwrap_or_default();
                params.push(WrapParam {
                    args: vec![quote!(#name)],
                    name,
                    ty,
                    ty_tree: None,
                });
                k += 1;
            }
            Slot::Tree(ty, def) => {
                let args = def
                    .leaves()
                    .iter()
                    .map(|(path, t)| {
                        let steps = path.iter().map(|p| match p {
                            Step::Name(n) => {
                                let n = format_ident!("{}", n);
                                quote!(.#n)
                            }
                            Step::Index(i) => {
                                let i = proc_macro2::Literal::usize_unsuffixed(*i);
                                quote!([#i])
                            }
                        });
                        match t {
                            RustTy::NdArray(..) => quote!(&#name #(#steps)*),
                            _ => quote!(#name #(#steps)*),
                        }
                    })
                    .collect::<Vec<_>>();
                k += args.len();
                params.push(WrapParam {
                    name,
                    ty: quote!(&#ty),
                    args,
                    ty_tree: Some(quote!(#ty)),
                });
            }
            Slot::Batched(ty, def) => {
                // Each leaf a view with its batch axis, one rank above its
                // field's.
                let args = def
                    .leaves()
                    .iter()
                    .enumerate()
                    .map(|(i, (_, t))| {
                        let ix = crate::codegen::paths::ix(t.rank() + 1);
                        quote!(#name.__leaf::<#ix>(#i))
                    })
                    .collect::<Vec<_>>();
                k += args.len();
                params.push(WrapParam {
                    name,
                    ty: quote!(&#batched<#ty>),
                    args,
                    ty_tree: Some(quote!(#batched<#ty>)),
                });
            }
        }
    }
    if k != f.params.len() {
        return Err(internal("parameter count"));
    }

    // Results.
    let slots = match &sig.results {
        Some(slots) => slots.clone(),
        None => vec![Slot::Plain; f.outs.len()],
    };
    if slots.iter().map(Slot::leaf_count).sum::<usize>() != f.outs.len() {
        return Err(internal("result count"));
    }
    let inner_tuple = match g.origin {
        Origin::Original => match &inner_item.sig.output {
            syn::ReturnType::Type(_, ty) => return_tys(ty).map(|(_, t)| t).unwrap_or(false),
            syn::ReturnType::Default => false,
        },
        Origin::Transform { .. } => f.outs.len() != 1,
    };
    let outs: Vec<syn::Ident> = (0..f.outs.len())
        .map(|i| format_ident!("__oxla_out{}", i, span = Span::mixed_site()))
        .collect();
    let mut ret_tys = Vec::new();
    let mut ret_vals = Vec::new();
    let mut o = 0;
    for slot in &slots {
        match slot {
            Slot::Plain => {
                ret_tys.push(
                    result_tys
                        .get(o)
                        .map(crate::codegen::result_type_tokens)
                        .unwrap_or_default(),
                );
                let v = &outs[o];
                ret_vals.push(quote!(#v));
                o += 1;
            }
            Slot::Tree(ty, def) => {
                let leaves = def
                    .leaves()
                    .iter()
                    .map(|(_, t)| {
                        let v = &outs[o];
                        o += 1;
                        match t {
                            RustTy::NdArray(..) => quote!(#v.into_dyn()),
                            _ => {
                                let nd = crate::codegen::paths::ndarray();
                                quote!(#nd::arr0(#v).into_dyn())
                            }
                        }
                    })
                    .collect::<Vec<_>>();
                ret_tys.push(quote!(#ty));
                ret_vals.push(quote!(<#ty as #tree>::__from_leaves(&mut ::std::vec![#(#leaves),*].into_iter())));
            }
            Slot::Batched(ty, def) => {
                let leaves = (0..def.leaves().len())
                    .map(|_| {
                        let v = &outs[o];
                        o += 1;
                        quote!(#v.into_dyn())
                    })
                    .collect::<Vec<_>>();
                ret_tys.push(quote!(#batched<#ty>));
                ret_vals.push(quote!(#batched::<#ty>::__from_leaves(::std::vec![#(#leaves),*])));
            }
        }
    }
    let (ret_ty, ret_val) = if slots.len() == 1 {
        (quote!(#(#ret_tys)*), quote!(#(#ret_vals)*))
    } else {
        (quote!((#(#ret_tys),*)), quote!((#(#ret_vals),*)))
    };
    let args = params.iter().flat_map(|p| p.args.clone());
    let bind = if inner_tuple {
        quote!(let (#(#outs,)*) = #inner_name(#(#args),*);)
    } else {
        quote!(let #(#outs)* = #inner_name(#(#args),*);)
    };
    let body = quote! {
        #inner_fn
        #bind
        #ret_val
    };
    let function = match &g.origin {
        Origin::Original => {
            let attrs = &item.attrs;
            let (vis, sig) = (&item.vis, &item.sig);
            quote! {
                #(#attrs)*
                #[allow(unused_variables, non_snake_case)]
                #[track_caller]
                #vis #sig { #body }
            }
        }
        Origin::Transform { kind, input } => {
            let name = &g.name;
            let vis = &g.vis;
            let ps = params.iter().map(|p| {
                let (n, t) = (&p.name, &p.ty);
                quote!(#n: #t)
            });
            let views = param_tys.iter().any(RustTy::is_ndarray);
            let generics = if views { quote!(<'oxla>) } else { quote!() };
            // The leaves are borrowed as views for as long as those.
            let ps = params
                .iter()
                .zip(ps)
                .map(|(p, plain)| match (&p.ty_tree, views) {
                    (Some(ty), true) => {
                        let n = &p.name;
                        quote!(#n: &'oxla #ty)
                    }
                    _ => plain,
                });
            let doc = format!(
                " Generated by oxla: `#[{}]` applied to `{input}`. Its IR (of the flattened parameters) is in `{}`.",
                kind.name(),
                crate::codegen::ir_const_name(&ident_name(name))
            );
            let lints = crate::codegen::lints::function();
            quote! {
                #(#cfgs)*
                #[doc = #doc]
                #[allow(unused_variables, non_snake_case)]
                #lints
                #[track_caller]
                #vis fn #name #generics(#(#ps),*) -> #ret_ty { #body }
            }
        }
    };
    let _ = ret_ty.span();
    Ok(quote!(#ir_const #function))
}
