//! The array backend: a function's compiled program (a `static`
//! `CompiledFn`, bound to the build script's kernels when it compiled them)
//! and the call of it.

use crate::codegen::paths;
use crate::lower::{ident_name, IndexCheck};
use crate::parse::types::RustTy;
use oxla_core::transforms::Step;
use oxla_core::{DType, Dim};
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote};

/// The crate has a build script (there is a manifest), but it did not compile
/// the kernels of `name`: the function would silently run on the JIT. An
/// error when the build script required its kernels, else a warning at the
/// function's name (a use of a deprecated item: a proc macro cannot emit a
/// warning itself on stable Rust).
pub(super) fn not_built(name: &str, span: Span, required: bool) -> Result<TokenStream, syn::Error> {
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

/// The `static` holding a function's compiled program, emitted in the
/// function's body: generated items never name each other, so they work in
/// an `impl` block as well as in a module. A function and its `_into`
/// sibling each have one; the runtime shares the program between them (by
/// its IR text), so it is compiled once. With the declarations of the build
/// script's kernels when it compiled them.
pub(super) fn compiled_item(
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

/// A call of `compiled` (a `CompiledFn`) on the function's parameters,
/// handing the outputs to `body` as `outs`, after the `let`s that convert
/// `usize`/`u32` arguments to the `i64` the IR holds them in. With array
/// destinations (`dests`, one per result) it is `call_into`. Parameters
/// that are all scalars and slices (of rank 0 and 1, known here) go as
/// `Flat` arguments to `call_flat`, the lean call.
pub(super) fn compiled_call(
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
pub(super) fn array_body(
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
