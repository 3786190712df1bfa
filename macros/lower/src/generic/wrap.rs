//! The generic wrapper `name<T: oxla::Float>` around a generated function's
//! two instances: it calls the one `T` is, converting the arguments and results
//! between `T` and the concrete type.

use crate::codegen::paths;
use crate::codegen::{self, CodegenOptions};
use crate::lower::{ident_name, return_tys};
use crate::parse::types::{strip_group, RustTy};
use crate::stack::{GeneratedFn, Origin};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, ToTokens};

/// Where a value of a generic function's signature is.
#[derive(Clone, Copy)]
enum Place<'a> {
    /// A parameter of the annotated function, as declared.
    Declared(&'a syn::Type),
    /// A transform's parameter (its views already converted from
    /// `impl Into<ArrayView…>`).
    Transform,
    /// A result.
    Result,
}

/// How one parameter or result moves between `T` and a concrete type: the
/// `oxla::Float` family naming its kind, or `None` when it holds no float
/// (an integer or bool passes unchanged).
fn family(t: &RustTy, place: Place) -> Option<TokenStream> {
    if !t.dtype().is_float() {
        return None;
    }
    let g = paths::generic();
    Some(match t {
        RustTy::Scalar(_) => quote!(#g::Scalar),
        RustTy::Unsigned(_) => return None,
        RustTy::Slice(_) => quote!(#g::Slice<'_>),
        RustTy::Vec(_) => quote!(#g::VecOf),
        RustTy::NdArray(_, r) => {
            let ix = paths::ix(*r);
            match place {
                Place::Result => quote!(#g::Owning<#ix>),
                Place::Declared(ty) if matches!(strip_group(ty), syn::Type::Reference(_)) => {
                    quote!(#g::ArrayRef<'_, #ix>)
                }
                Place::Declared(_) | Place::Transform => quote!(#g::View<'_, #ix>),
            }
        }
        RustTy::Fixed { dims, by_ref, .. } => {
            let mut f = quote!(#g::Scalar);
            for d in dims.iter().rev() {
                let d = proc_macro2::Literal::usize_unsuffixed(*d as usize);
                f = quote!(#g::Fixed<#f, #d>);
            }
            if *by_ref {
                quote!(#g::FixedRef<'_, #f>)
            } else {
                f
            }
        }
    })
}

/// The generic function for one generated function: both instances in
/// blocks of their own, and the call of the one `T` is.
#[allow(clippy::too_many_arguments)]
pub(super) fn wrapper(
    item: &syn::ItemFn,
    t: &syn::Ident,
    (item32, g32): (&syn::ItemFn, &GeneratedFn),
    (item64, g64): (&syn::ItemFn, &GeneratedFn),
    opts: &CodegenOptions,
    cfgs: &[&syn::Attribute],
    prelude: &TokenStream,
    stub: bool,
) -> Result<TokenStream, syn::Error> {
    let (ir_const, fn64, into64) = codegen::generate_instance(item64, g64, opts, stub)?;
    let (_, fn32, into32) = codegen::generate_instance(item32, g32, opts, stub)?;
    // `NAME_IR` is the f64 instance's, `NAME_F32_IR` the f32 one's.
    let name32 = format!("{}_f32", ident_name(&g32.name));
    let ir32 = syn::Ident::new(&codegen::ir_const_name(&name32), g32.name.span());
    let text32 = crate::stack::guard("printing the IR", g32.name.span(), || {
        Ok(oxla_core::text::print(&g32.function))
    })?;
    let doc32 = format!(
        " The oxla IR of `{}` at f32, in the text form of `oxla_core::text`.",
        ident_name(&g32.name)
    );
    let vis = &g64.vis;
    let ir_const = quote! {
        #(#cfgs)* #ir_const
        #(#cfgs)*
        #[doc = #doc32]
        #[doc(hidden)]
        #[allow(dead_code)]
        #vis const #ir32: &str = #text32;
    };
    let f = &g64.function;
    let dtype = codegen::float_type(f);
    let (param_tys, result_tys) = codegen::rust_types(item64, g64, dtype);
    let idents = codegen::param_idents(item64, g64);
    let tuple = codegen::returns_tuple(item64, g64);
    let dests = codegen::dest_idents(&idents, &result_tys);
    let visible: Vec<(syn::Ident, RustTy)> = idents
        .into_iter()
        .zip(param_tys)
        .filter(|(id, _)| !crate::lower::consts::is_const_param(&ident_name(id)))
        .collect();
    let straight_line = crate::codegen::aot::is_straight_line(f);
    let name = &g64.name;
    let private = paths::generic();

    // Each parameter's family, and how the value reaches it.
    let places: Vec<Place> = match g64.origin {
        Origin::Original => item64
            .sig
            .inputs
            .iter()
            .filter_map(|a| match a {
                syn::FnArg::Typed(pt) => Some(Place::Declared(&pt.ty)),
                syn::FnArg::Receiver(_) => None,
            })
            .collect(),
        Origin::Transform { .. } => vec![Place::Transform; visible.len()],
    };
    let declared_results: Vec<RustTy> = match (&g64.origin, &item64.sig.output) {
        (Origin::Original, syn::ReturnType::Type(_, ty)) => return_tys(ty)
            .map(|(rs, _)| rs.into_iter().map(|(r, _)| r).collect())
            .unwrap_or_default(),
        _ => result_tys.clone(),
    };
    let nd = paths::ndarray();
    let into_trait = paths::into_trait();
    let convert = |to: &syn::Ident| -> TokenStream {
        let lets = visible.iter().zip(&places).map(|((id, ty), place)| {
            let view = match (ty, place) {
                // A transform's view parameter is `impl Into<ArrayView…>`.
                (RustTy::NdArray(d, r), Place::Transform) if d.is_float() => {
                    let ix = paths::ix(*r);
                    Some(quote!(let #id: #nd::ArrayView<'_, #t, #ix> = #into_trait::into(#id);))
                }
                _ => None,
            };
            match family(ty, *place) {
                Some(fam) => quote!(#view let #id = #private::#to::<#t, #fam>(#id);),
                None => quote!(),
            }
        });
        quote!(#(#lets)*)
    };
    let back = |from: &syn::Ident| -> TokenStream {
        let r = format_ident!("__oxla_result", span = Span::mixed_site());
        let conv = |i: Option<usize>, ty: &RustTy| {
            let value = match i {
                Some(i) => {
                    let i = syn::Index::from(i);
                    quote!(#r.#i)
                }
                None => quote!(#r),
            };
            match family(ty, Place::Result) {
                Some(fam) => quote!(#private::#from::<#t, #fam>(#value)),
                None => value,
            }
        };
        if tuple {
            let parts = declared_results
                .iter()
                .enumerate()
                .map(|(i, ty)| conv(Some(i), ty));
            quote!((#(#parts,)*))
        } else {
            let ty = declared_results
                .first()
                .cloned()
                .unwrap_or(RustTy::Scalar(dtype));
            conv(None, &ty)
        }
    };
    let args: Vec<&syn::Ident> = visible.iter().map(|(id, _)| id).collect();
    let r = format_ident!("__oxla_result", span = Span::mixed_site());
    let (to32, to64) = (format_ident!("to_f32"), format_ident!("to_f64"));
    let (from32, from64) = (format_ident!("from_f32"), format_ident!("from_f64"));
    let (conv32, conv64) = (convert(&to32), convert(&to64));
    let (back32, back64) = (back(&from32), back(&from64));
    let body = if stub {
        codegen::stub_body()
    } else {
        quote! {
        if #private::is_f32::<#t>() {
            #fn32
            #conv32
            let #r = #name(#(#args),*);
            #back32
        } else {
            #fn64
            #conv64
            let #r = #name(#(#args),*);
            #back64
        }
        }
    };
    let track_caller = if stub {
        quote!(#[allow(unused_variables, unreachable_code)])
    } else if straight_line {
        quote!(#[inline])
    } else {
        quote!(#[track_caller])
    };
    let function = match &g64.origin {
        Origin::Original => {
            let attrs = &item.attrs;
            let sig = &item.sig;
            quote! {
                #(#attrs)*
                #track_caller
                #vis #sig {
                    #prelude
                    #body
                }
            }
        }
        Origin::Transform { kind, input } => {
            let params = visible.iter().map(|(id, ty)| {
                let ty = generic_param_type(ty, t);
                quote!(#id: #ty)
            });
            let rets: Vec<TokenStream> = result_tys
                .iter()
                .map(|r| generic_result_type(r, t))
                .collect();
            let ret = if tuple {
                quote!((#(#rets),*))
            } else {
                quote!(#(#rets)*)
            };
            let lifetime = visible
                .iter()
                .any(|(_, ty)| ty.is_ndarray())
                .then(|| quote!('oxla,));
            let doc = format!(
                " Generated by oxla: `#[{}]` applied to `{input}`, for `{t}` f32 or f64. Its IR is in `{}` (f64) and `{ir32}` (f32).",
                kind.name(),
                codegen::ir_const_name(&ident_name(name)),
            );
            let bound = paths::float_trait(name.span());
            quote! {
                #(#cfgs)*
                #[doc = #doc]
                #track_caller
                #vis fn #name<#lifetime #t: #bound>(#(#params),*) -> #ret {
                    #body
                }
            }
        }
    };
    let has_array_result = result_tys.iter().any(|r| r.rank() > 0);
    let into_fn = if straight_line || !has_array_result {
        TokenStream::new()
    } else {
        // `name_into`: the destinations move to the concrete type like the
        // parameters, the scalar results come back.
        let into_name = format_ident!("{}_into", ident_name(name), span = name.span());
        let dest_list: Vec<(&syn::Ident, &RustTy)> = dests
            .iter()
            .zip(&result_tys)
            .filter_map(|(d, ty)| Some((d.as_ref()?, ty)))
            .collect();
        let dest_params: Vec<TokenStream> = dest_list
            .iter()
            .map(|(id, ty)| {
                let elem = element(ty, t);
                match ty {
                    RustTy::NdArray(_, r) => {
                        let ix = paths::ix(*r);
                        quote!(#id: impl #into_trait<#nd::ArrayViewMut<'oxla, #elem, #ix>>)
                    }
                    _ => quote!(#id: &'oxla mut [#elem]),
                }
            })
            .collect();
        let convert_dests = |to: &syn::Ident| -> TokenStream {
            let lets = dest_list
                .iter()
                .filter(|(_, ty)| ty.dtype().is_float())
                .map(|(id, ty)| match ty {
                    RustTy::NdArray(_, r) => {
                        let ix = paths::ix(*r);
                        quote! {
                            let #id: #nd::ArrayViewMut<'_, #t, #ix> = #into_trait::into(#id);
                            let #id = #private::#to::<#t, #private::ViewMut<'_, #ix>>(#id);
                        }
                    }
                    _ => quote!(let #id = #private::#to::<#t, #private::SliceMut<'_>>(#id);),
                });
            quote!(#(#lets)*)
        };
        let scalars: Vec<&RustTy> = result_tys.iter().filter(|r| r.rank() == 0).collect();
        let back_scalars = |from: &syn::Ident| -> TokenStream {
            let conv = |value: TokenStream, ty: &RustTy| match family(ty, Place::Result) {
                Some(fam) => quote!(#private::#from::<#t, #fam>(#value)),
                None => value,
            };
            match scalars.as_slice() {
                [] => quote!(),
                [ty] => conv(quote!(#r), ty),
                many => {
                    let parts = many.iter().enumerate().map(|(i, ty)| {
                        let i = syn::Index::from(i);
                        conv(quote!(#r.#i), ty)
                    });
                    quote!((#(#parts,)*))
                }
            }
        };
        let ret = match scalars.as_slice() {
            [] => quote!(),
            [ty] => {
                let ty = element(ty, t);
                quote!(-> #ty)
            }
            many => {
                let tys = many.iter().map(|ty| element(ty, t));
                quote!(-> (#(#tys,)*))
            }
        };
        let dest_args = dest_list.iter().map(|(id, _)| id);
        let call_args = quote!(#(#args,)* #(#dest_args),*);
        let body = if stub {
            codegen::stub_body()
        } else {
            let (d32, d64) = (convert_dests(&to32), convert_dests(&to64));
            let (b32, b64) = (back_scalars(&from32), back_scalars(&from64));
            quote! {
                if #private::is_f32::<#t>() {
                    #into32
                    #conv32
                    #d32
                    let #r = #into_name(#call_args);
                    #b32
                } else {
                    #into64
                    #conv64
                    #d64
                    let #r = #into_name(#call_args);
                    #b64
                }
            }
        };
        let sig = match &g64.origin {
            Origin::Original => {
                let mut sig = item.sig.clone();
                sig.ident = into_name.clone();
                sig.generics.params.insert(0, syn::parse_quote!('oxla));
                for p in &dest_params {
                    sig.inputs.push(syn::parse_quote!(#p));
                }
                sig.output = syn::parse2(ret.clone()).unwrap_or(syn::ReturnType::Default);
                quote!(#sig)
            }
            Origin::Transform { .. } => {
                let params = visible.iter().map(|(id, ty)| {
                    let ty = generic_param_type(ty, t);
                    quote!(#id: #ty)
                });
                let bound = paths::float_trait(name.span());
                quote!(fn #into_name<'oxla, #t: #bound>(#(#params,)* #(#dest_params),*) #ret)
            }
        };
        let doc = format!(
            " `{}`, writing its array results into the caller's buffers, for `{t}` f32 or f64 (see the function). Generated by oxla.",
            ident_name(name)
        );
        let allow = if stub {
            quote!(#[allow(dead_code, clippy::too_many_arguments, unused_variables, unreachable_code)])
        } else {
            quote!(#[allow(dead_code, clippy::too_many_arguments)])
        };
        quote! {
            #(#cfgs)*
            #[doc = #doc]
            #allow
            #[track_caller]
            #vis #sig {
                #body
            }
        }
    };
    Ok(quote!(#ir_const #function #into_fn))
}

/// The element type of `ty` in the generic signature: `t` for a float.
fn element(ty: &RustTy, t: &syn::Ident) -> TokenStream {
    if ty.dtype().is_float() {
        t.to_token_stream()
    } else {
        paths::float(ty.dtype())
    }
}

/// A transform's parameter type with `t` for the float type.
fn generic_param_type(ty: &RustTy, t: &syn::Ident) -> TokenStream {
    let elem = element(ty, t);
    match ty {
        RustTy::Scalar(_) => elem,
        RustTy::Unsigned(u) => paths::unsigned(*u),
        RustTy::NdArray(_, r) => {
            let (nd, ix) = (paths::ndarray(), paths::ix(*r));
            let into_trait = paths::into_trait();
            quote!(impl #into_trait<#nd::ArrayView<'oxla, #elem, #ix>>)
        }
        _ => quote!(&[#elem]),
    }
}

/// A transform's result type with `t` for the float type.
fn generic_result_type(ty: &RustTy, t: &syn::Ident) -> TokenStream {
    let elem = element(ty, t);
    match ty {
        RustTy::Scalar(_) => elem,
        RustTy::NdArray(_, r) => {
            let (nd, ix) = (paths::ndarray(), paths::ix(*r));
            quote!(#nd::Array<#elem, #ix>)
        }
        _ => {
            let vec = paths::vec();
            quote!(#vec<#elem>)
        }
    }
}
