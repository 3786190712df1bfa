//! `<name>_device`: the sibling of every array function that takes and
//! returns `oxla::DeviceArray`s and runs where its arguments live (a CPU
//! device or a GPU), as a JAX function runs on its arrays' device.
//!
//! Each parameter becomes `impl DeviceArg<T, Ix>`: a device array of the
//! parameter's element type and rank (by reference or by value), or, for a
//! scalar, a host value too. Each result is a `DeviceArray<T, Ix>`, in the
//! plain function's tuple structure.

use crate::codegen::paths;
use crate::lower::ident_name;
use crate::parse::types::RustTy;
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote};

/// Whether a function gets a `_device` sibling: every function that runs
/// kernels (not straight-line scalar code). One whose arguments are all
/// host scalars runs on the default device, as JAX runs uncommitted values.
pub(crate) fn has_device_form(straight_line: bool) -> bool {
    !straight_line
}

/// The ndarray dimension type of a parameter or result.
fn dim_type(t: &RustTy) -> TokenStream {
    paths::ix(t.rank())
}

/// The `_device` function. `program` is the compiled program's name and the
/// items that define it and the constants (`None` for a stub after an
/// error: the body only panics).
#[allow(clippy::too_many_arguments)]
pub(crate) fn device_function(
    name: &str,
    vis: &syn::Visibility,
    cfgs: &[&syn::Attribute],
    param_idents: &[syn::Ident],
    param_tys: &[RustTy],
    result_tys: &[RustTy],
    tuple_return: bool,
    program: Option<(&syn::Ident, &TokenStream)>,
) -> TokenStream {
    let span = Span::call_site();
    let device_ident = format_ident!("{}_device", name, span = span);
    let device_arg = paths::device_arg();
    let device_array = paths::device_array();
    let is_const = |id: &syn::Ident| crate::lower::consts::is_const_param(&ident_name(id));
    let params = param_idents
        .iter()
        .zip(param_tys)
        .filter(|(id, _)| !is_const(id))
        .map(|(id, t)| {
            let ty = paths::float(t.dtype());
            match t {
                // An index scalar stays the user's unsigned type.
                RustTy::Unsigned(u) => {
                    let u = paths::unsigned(*u);
                    quote!(#id: #u)
                }
                _ => {
                    let ix = dim_type(t);
                    quote!(#id: impl #device_arg<#ty, #ix>)
                }
            }
        });
    let rets: Vec<TokenStream> = result_tys
        .iter()
        .map(|t| {
            let (ty, ix) = (paths::float(t.dtype()), dim_type(t));
            quote!(#device_array<#ty, #ix>)
        })
        .collect();
    let ret = if tuple_return {
        quote!((#(#rets),*))
    } else {
        quote!(#(#rets)*)
    };
    let doc = format!(
        " `{name}` on device arrays: runs on the device its array arguments are on \
         (see `oxla::DeviceArray`); on a GPU it returns once the work is queued."
    );
    let body = match program {
        None => crate::codegen::stub_body(),
        Some((compiled, items)) => {
            let outs = format_ident!("__oxla_outs", span = Span::mixed_site());
            let takes = result_tys.iter().enumerate().map(|(i, t)| {
                let i = Literal::usize_unsuffixed(i);
                let (ty, ix) = (paths::float(t.dtype()), dim_type(t));
                quote!(#outs.take::<#ty, #ix>(#i))
            });
            let result = if tuple_return {
                quote!((#(#takes,)*))
            } else {
                quote!(#(#takes)*)
            };
            let args = param_idents.iter().zip(param_tys).map(|(id, t)| {
                let ty = paths::float(t.dtype());
                match t {
                    RustTy::Unsigned(_) => {
                        let index_arg = paths::index_arg();
                        let i64_ty = paths::float(oxla_core::DType::I64);
                        let ix0 = paths::ix(0);
                        let shown = Literal::string(&ident_name(id));
                        quote!(#device_arg::<#i64_ty, #ix0>::device_arg(&#index_arg(#id, #shown)))
                    }
                    _ => {
                        let ix = dim_type(t);
                        quote!(#device_arg::<#ty, #ix>::device_arg(&#id))
                    }
                }
            });
            quote! {
                #items
                #compiled.call_device([#(#args),*], |#outs| #result)
            }
        }
    };
    let lints = super::lints::function();
    let allow = if program.is_none() {
        quote!(#[allow(unused_variables, unreachable_code)])
    } else {
        quote!()
    };
    quote! {
        #(#cfgs)*
        #[doc = #doc]
        #[allow(dead_code)]
        #allow
        #lints
        #[track_caller]
        #vis fn #device_ident(#(#params),*) -> #ret {
            #body
        }
    }
}
