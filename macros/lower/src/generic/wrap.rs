//! The generic wrapper `name<T: oxla::Float>` around a generated function's
//! two instances: it calls the one `T` is, converting the arguments and results
//! between `T` and the concrete type.

use crate::codegen::paths;
use crate::codegen::{self, CodegenOptions};
use crate::lower::{ident_name, return_tys};
use crate::parse::types::{strip_group, RustTy};
use crate::stack::{GeneratedFn, Origin};
use oxla_core::DType;
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
    let (ir_const, ir32) = ir_consts(ir_const, g32, &g64.vis, cfgs)?;
    let w = Wrapper::new(t, item64, g64, cfgs, stub);
    let conv = (w.convert(&to(32)), w.convert(&to(64)));
    let function = w.function(item, prelude, &ir32, (&fn32, &fn64), &conv);
    let into_fn = w.sibling_into(item, (&into32, &into64), &conv);
    Ok(quote!(#ir_const #function #into_fn))
}

/// `to_f32` or `to_f64`: the conversion of a value from `T` to the instance
/// of `bits`.
fn to(bits: u8) -> syn::Ident {
    format_ident!("to_f{}", bits)
}

/// `from_f32` or `from_f64`: the conversion of a result of the instance of
/// `bits` back to `T`.
fn from(bits: u8) -> syn::Ident {
    format_ident!("from_f{}", bits)
}

/// The IR constants: the f64 instance's `NAME_IR` (`ir64`, as generated)
/// and the f32 one's `NAME_F32_IR`, whose name is returned too.
fn ir_consts(
    ir64: TokenStream,
    g32: &GeneratedFn,
    vis: &syn::Visibility,
    cfgs: &[&syn::Attribute],
) -> Result<(TokenStream, syn::Ident), syn::Error> {
    let name32 = format!("{}_f32", ident_name(&g32.name));
    let ir32 = syn::Ident::new(&codegen::ir_const_name(&name32), g32.name.span());
    let text32 = crate::stack::guard("printing the IR", g32.name.span(), || {
        Ok(oxla_core::text::print(&g32.function))
    })?;
    let doc32 = format!(
        " The oxla IR of `{}` at f32, in the text form of `oxla_core::text`.",
        ident_name(&g32.name)
    );
    let ir_const = quote! {
        #(#cfgs)* #ir64
        #(#cfgs)*
        #[doc = #doc32]
        #[doc(hidden)]
        #[allow(dead_code)]
        #vis const #ir32: &str = #text32;
    };
    Ok((ir_const, ir32))
}

/// What the parts of one generic wrapper share: its signature, from the
/// f64 instance, and where each parameter is.
struct Wrapper<'a> {
    t: &'a syn::Ident,
    g64: &'a GeneratedFn,
    cfgs: &'a [&'a syn::Attribute],
    stub: bool,
    straight_line: bool,
    dtype: DType,
    /// The parameters the caller passes (not the constants' hidden ones).
    visible: Vec<(syn::Ident, RustTy)>,
    /// Where each of `visible` is.
    places: Vec<Place<'a>>,
    result_tys: Vec<RustTy>,
    /// The results as the original function declares them.
    declared_results: Vec<RustTy>,
    dests: Vec<Option<syn::Ident>>,
    tuple: bool,
}

impl<'a> Wrapper<'a> {
    fn new(
        t: &'a syn::Ident,
        item64: &'a syn::ItemFn,
        g64: &'a GeneratedFn,
        cfgs: &'a [&'a syn::Attribute],
        stub: bool,
    ) -> Self {
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
        Wrapper {
            t,
            g64,
            cfgs,
            stub,
            straight_line: crate::codegen::aot::is_straight_line(f),
            dtype,
            visible,
            places,
            result_tys,
            declared_results,
            dests,
            tuple,
        }
    }

    /// The `let`s that move the parameters from `T` to the instance's
    /// type with `to` (`to_f32` or `to_f64`).
    fn convert(&self, to: &syn::Ident) -> TokenStream {
        let (t, private) = (self.t, paths::generic());
        let (nd, into_trait) = (paths::ndarray(), paths::into_trait());
        let lets = self
            .visible
            .iter()
            .zip(&self.places)
            .map(|((id, ty), place)| {
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
    }

    /// The instance's result `__oxla_result` moved back to `T` with `from`
    /// (`from_f32` or `from_f64`), as the function returns it.
    fn back(&self, from: &syn::Ident) -> TokenStream {
        let (t, private) = (self.t, paths::generic());
        let r = result_ident();
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
        if self.tuple {
            let parts = self
                .declared_results
                .iter()
                .enumerate()
                .map(|(i, ty)| conv(Some(i), ty));
            quote!((#(#parts,)*))
        } else {
            let ty = self
                .declared_results
                .first()
                .cloned()
                .unwrap_or(RustTy::Scalar(self.dtype));
            conv(None, &ty)
        }
    }

    /// The parameters the caller passes, in order.
    fn args(&self) -> Vec<&syn::Ident> {
        self.visible.iter().map(|(id, _)| id).collect()
    }

    /// The generic function itself: the original's signature, or a
    /// transform's over `T`, around the call of the instance `T` is
    /// (`fns`, f32 then f64, with the parameters' conversions `conv`).
    fn function(
        &self,
        item: &syn::ItemFn,
        prelude: &TokenStream,
        ir32: &syn::Ident,
        fns: (&TokenStream, &TokenStream),
        conv: &(TokenStream, TokenStream),
    ) -> TokenStream {
        let vis = &self.g64.vis;
        let body = self.call_instance(fns, conv);
        let track_caller = if self.stub {
            quote!(#[allow(unused_variables, unreachable_code)])
        } else if self.straight_line {
            quote!(#[inline])
        } else {
            quote!(#[track_caller])
        };
        match &self.g64.origin {
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
                let doc = format!(
                    " Generated by oxla: `#[{}]` applied to `{input}`, for `{}` f32 or f64. Its IR is in `{}` (f64) and `{ir32}` (f32).",
                    kind.name(),
                    self.t,
                    codegen::ir_const_name(&ident_name(&self.g64.name)),
                );
                self.transform_function(&doc, &track_caller, &body)
            }
        }
    }

    /// The generic function's body: the call of the instance `T` is (of
    /// `fns`, f32 then f64), its arguments converted with `conv` and its
    /// results back.
    fn call_instance(
        &self,
        (fn32, fn64): (&TokenStream, &TokenStream),
        (conv32, conv64): &(TokenStream, TokenStream),
    ) -> TokenStream {
        if self.stub {
            return codegen::stub_body();
        }
        let (t, name) = (self.t, &self.g64.name);
        let private = paths::generic();
        let args = self.args();
        let r = result_ident();
        let (back32, back64) = (self.back(&from(32)), self.back(&from(64)));
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
    }

    /// A transform's generic function, with its `doc`, over `T`.
    fn transform_function(
        &self,
        doc: &str,
        track_caller: &TokenStream,
        body: &TokenStream,
    ) -> TokenStream {
        let (t, name, vis) = (self.t, &self.g64.name, &self.g64.vis);
        let params = self.generic_params();
        let rets: Vec<TokenStream> = self
            .result_tys
            .iter()
            .map(|r| generic_result_type(r, t))
            .collect();
        let ret = if self.tuple {
            quote!((#(#rets),*))
        } else {
            quote!(#(#rets)*)
        };
        let lifetime = self
            .visible
            .iter()
            .any(|(_, ty)| ty.is_ndarray())
            .then(|| quote!('oxla,));
        let bound = paths::float_trait(name.span());
        let cfgs = self.cfgs;
        let lints = crate::codegen::lints::function();
        quote! {
            #(#cfgs)*
            #[doc = #doc]
            #lints
            #track_caller
            #vis fn #name<#lifetime #t: #bound>(#(#params),*) -> #ret {
                #body
            }
        }
    }

    /// A transform's parameters over `T`: `x: T`, `v: impl Into<ArrayView…>`.
    fn generic_params(&self) -> impl Iterator<Item = TokenStream> + '_ {
        self.visible.iter().map(|(id, ty)| {
            let ty = generic_param_type(ty, self.t);
            quote!(#id: #ty)
        })
    }

    /// The destinations of `name_into`: each array result's, with its type.
    fn dest_list(&self) -> Vec<(&syn::Ident, &RustTy)> {
        self.dests
            .iter()
            .zip(&self.result_tys)
            .filter_map(|(d, ty)| Some((d.as_ref()?, ty)))
            .collect()
    }

    /// `name_into`, when the function has one (array results, not straight
    /// line): the destinations move to the concrete type like the
    /// parameters, the scalar results come back. `intos` are the
    /// instances' `_into` functions, f32 then f64.
    fn sibling_into(
        &self,
        item: &syn::ItemFn,
        (into32, into64): (&TokenStream, &TokenStream),
        (conv32, conv64): &(TokenStream, TokenStream),
    ) -> TokenStream {
        let has_array_result = self.result_tys.iter().any(|r| r.rank() > 0);
        if self.straight_line || !has_array_result {
            return TokenStream::new();
        }
        let (t, name, vis) = (self.t, &self.g64.name, &self.g64.vis);
        let private = paths::generic();
        let r = result_ident();
        let into_name = format_ident!("{}_into", ident_name(name), span = name.span());
        let dest_list = self.dest_list();
        let args = self.args();
        let dest_args = dest_list.iter().map(|(id, _)| id);
        let call_args = quote!(#(#args,)* #(#dest_args),*);
        let body = if self.stub {
            codegen::stub_body()
        } else {
            let (d32, d64) = (self.convert_dests(&to(32)), self.convert_dests(&to(64)));
            let (b32, b64) = (self.back_scalars(&from(32)), self.back_scalars(&from(64)));
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
        let sig = self.sibling_into_signature(item, &into_name);
        let doc = format!(
            " `{}`, writing its array results into the caller's buffers, for `{t}` f32 or f64 (see the function). Generated by oxla.",
            ident_name(name)
        );
        let allow = if self.stub {
            quote!(#[allow(dead_code, clippy::too_many_arguments, unused_variables, unreachable_code)])
        } else {
            quote!(#[allow(dead_code, clippy::too_many_arguments)])
        };
        let cfgs = self.cfgs;
        quote! {
            #(#cfgs)*
            #[doc = #doc]
            #allow
            #[track_caller]
            #vis #sig {
                #body
            }
        }
    }

    /// The signature of `name_into` (`into_name`): the function's
    /// parameters, then the destinations, returning the scalar results.
    fn sibling_into_signature(&self, item: &syn::ItemFn, into_name: &syn::Ident) -> TokenStream {
        let t = self.t;
        let (nd, into_trait) = (paths::ndarray(), paths::into_trait());
        let dest_params: Vec<TokenStream> = self
            .dest_list()
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
        let ret = match self.scalar_results().as_slice() {
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
        match &self.g64.origin {
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
                let params = self.generic_params();
                let bound = paths::float_trait(self.g64.name.span());
                quote!(fn #into_name<'oxla, #t: #bound>(#(#params,)* #(#dest_params),*) #ret)
            }
        }
    }

    /// The `let`s that move the float destinations from `T` to the
    /// instance's type with `to`.
    fn convert_dests(&self, to: &syn::Ident) -> TokenStream {
        let (t, private) = (self.t, paths::generic());
        let (nd, into_trait) = (paths::ndarray(), paths::into_trait());
        let lets = self
            .dest_list()
            .into_iter()
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
    }

    /// The scalar results, which `name_into` returns.
    fn scalar_results(&self) -> Vec<&RustTy> {
        self.result_tys.iter().filter(|r| r.rank() == 0).collect()
    }

    /// `name_into`'s scalar results moved back to `T` with `from`.
    fn back_scalars(&self, from: &syn::Ident) -> TokenStream {
        let (t, private) = (self.t, paths::generic());
        let r = result_ident();
        let conv = |value: TokenStream, ty: &RustTy| match family(ty, Place::Result) {
            Some(fam) => quote!(#private::#from::<#t, #fam>(#value)),
            None => value,
        };
        match self.scalar_results().as_slice() {
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
    }
}

/// `__oxla_result`, the instance's result, at mixed-site hygiene.
fn result_ident() -> syn::Ident {
    format_ident!("__oxla_result", span = Span::mixed_site())
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
