//! The Rust parameter and result types of a generated function.

use crate::codegen::paths;
use crate::lower::consts::is_const_param;
use crate::lower::{ident_name, return_tys};
use crate::parse::types::{param_ty, RustTy};
use crate::stack::{GeneratedFn, Origin};
use oxla_core::{DType, Var};
use proc_macro2::TokenStream;
use quote::quote;

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
