//! `#[derive(oxla::Tree)]`: the `oxla::Tree` impl, and the macro that hands
//! the struct's definition to the functions that take it.

use super::def::field_ty;
use super::def::Field;
use super::def::DERIVE_KIND;
use super::def::SUPPORTED_FIELDS;
use crate::errors::Errors;
use crate::lower::ident_name;
use crate::parse::types::{strip_group, RustTy};
use crate::resolve::helpers::{self, HelperTable};
use oxla_core::DType;
use proc_macro2::{Delimiter, Group, Span, TokenStream};
use quote::{format_ident, quote};

/// `#[derive(oxla::Tree)]` on `item`.
pub fn expand_derive(item: TokenStream) -> TokenStream {
    expand_derive_with(item, &TokenStream::new(), &HelperTable::default())
}

pub(crate) fn expand_derive_with(
    item_tokens: TokenStream,
    table_tokens: &TokenStream,
    table: &HelperTable,
) -> TokenStream {
    let mut errors = Errors::new();
    let item: syn::ItemStruct = match syn::parse2(item_tokens.clone()) {
        Ok(i) => i,
        Err(_) => {
            errors.at(
                Span::call_site(),
                "`#[derive(oxla::Tree)]` applies to a struct with named fields",
            );
            return errors.to_compile_errors();
        }
    };
    if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
        errors.spanned(
            &item.generics,
            "a parameter struct cannot be generic: its fields have one float type (f32 or f64)",
        );
    }
    let syn::Fields::Named(named) = &item.fields else {
        errors.spanned(
            &item.ident,
            format!(
                "`#[derive(oxla::Tree)]` applies to a struct with named fields (`struct {} {{ w: Array2<f32>, … }}`)",
                item.ident
            ),
        );
        return errors.to_compile_errors();
    };
    // Each field, its structs resolved (`None` while one is unknown: noted).
    let (resolved, unknown) = helpers::with_helpers(table, || {
        named
            .named
            .iter()
            .map(|f| (f, field_ty(&f.ty).resolve(table)))
            .collect::<Vec<_>>()
    });
    let mut fields: Vec<(&syn::Field, Option<Field>)> = Vec::new();
    for (f, r) in resolved {
        match r {
            Ok(field) => fields.push((f, field)),
            Err(e) => errors.spanned(&f.ty, e),
        }
    }
    if errors.is_empty() {
        if let Some(step) = helpers::next_step(
            DERIVE_KIND,
            &TokenStream::new(),
            &item_tokens,
            table_tokens,
            table,
            &unknown,
        ) {
            return step;
        }
    }
    let mut elem: Option<(DType, &syn::Field)> = None;
    for (f, field) in &fields {
        let Some(d) = field.as_ref().map(Field::dtype) else {
            continue;
        };
        if !matches!(d, DType::F32 | DType::F64) {
            errors.spanned(
                &f.ty,
                format!(
                    "a parameter struct holds f32 or f64 (this field is {d}); {SUPPORTED_FIELDS}"
                ),
            );
        }
        match elem {
            None => elem = Some((d, f)),
            Some((e, first)) if e != d => errors.spanned(
                &f.ty,
                format!(
                    "mixed float types: `{}` is {e} but this field is {d}; a parameter struct has one float type",
                    first.ident.as_ref().map(|i| i.to_string()).unwrap_or_default()
                ),
            ),
            _ => {}
        }
    }
    if fields.is_empty() && errors.is_empty() {
        errors.spanned(&item.ident, "a parameter struct needs at least one field");
    }
    let fields: Vec<(&syn::Field, Field)> = fields
        .into_iter()
        .filter_map(|(f, field)| Some((f, field?)))
        .collect();
    if !errors.is_empty() {
        return errors.to_compile_errors();
    }
    let elem = elem.map(|(d, _)| d).unwrap_or(DType::F32);
    let trait_impl = tree_impl(&item, &fields, elem);
    let name = &item.ident;
    let mac = format_ident!(
        "__oxla_tree_{}_{:016x}",
        name,
        helpers::unique_hash(&item_tokens, name.span())
    );
    // The payload: the struct's fields only (no attributes, no visibility).
    let field_tokens = named.named.iter().map(|f| {
        let (id, ty) = (&f.ident, &f.ty);
        quote!(#id: #ty)
    });
    let payload = Group::new(
        Delimiter::Brace,
        quote!(struct #name { #(#field_tokens),* }),
    );
    let table_payload = Group::new(Delimiter::Brace, table_tokens.clone());
    let vis = &item.vis;
    quote! {
        #trait_impl
        #[doc(hidden)]
        #[macro_export]
        macro_rules! #mac {
            (($($callback:tt)*) { $($state:tt)* }) => {
                $($callback)*! { $($state)* { #payload #table_payload } }
            };
        }
        #[doc(hidden)]
        #[allow(unused_imports)]
        #vis use #mac as #name;
    }
}

/// The code of the `Tree` impl for one field (or an element of an array
/// field), at the place `at` (`self.w`, `self.layers[1]`) and `other` (the
/// same place of `__oxla_other`), named `shown`.
#[derive(Default)]
struct ImplCode {
    names: Vec<TokenStream>,
    each: Vec<TokenStream>,
    each_mut: Vec<TokenStream>,
    zip: Vec<TokenStream>,
}

fn field_impl(
    field: &Field,
    ty: &syn::Type,
    at: &TokenStream,
    other: &TokenStream,
    shown: &str,
    code: &mut ImplCode,
) -> TokenStream {
    let nd = crate::codegen::paths::ndarray();
    let tree = crate::codegen::paths::tree();
    let slice = quote!(::core::slice);
    let expect = "oxla: a tree built from the wrong leaves";
    match field {
        Field::Leaf(RustTy::NdArray(_, r)) => {
            let ix = crate::codegen::paths::ix(*r);
            code.names
                .push(quote!(__oxla_names.push(::std::string::String::from(#shown));));
            code.each.push(quote!(__oxla_f(#at.view().into_dyn());));
            code.each_mut
                .push(quote!(__oxla_f(#at.view_mut().into_dyn());));
            code.zip
                .push(quote!(__oxla_f(#at.view_mut().into_dyn(), #other.view().into_dyn());));
            quote!(__oxla_leaves.next().expect(#expect).into_dimensionality::<#ix>().expect(#expect))
        }
        Field::Leaf(_) => {
            code.names
                .push(quote!(__oxla_names.push(::std::string::String::from(#shown));));
            code.each.push(quote!(__oxla_f(#nd::ArrayView::from_shape(#nd::IxDyn(&[]), #slice::from_ref(&#at)).expect(#expect));));
            code.each_mut.push(quote!(__oxla_f(#nd::ArrayViewMut::from_shape(#nd::IxDyn(&[]), #slice::from_mut(&mut #at)).expect(#expect));));
            code.zip.push(quote!(__oxla_f(
                #nd::ArrayViewMut::from_shape(#nd::IxDyn(&[]), #slice::from_mut(&mut #at)).expect(#expect),
                #nd::ArrayView::from_shape(#nd::IxDyn(&[]), #slice::from_ref(&#other)).expect(#expect),
            );));
            quote!(__oxla_leaves.next().expect(#expect).into_dimensionality::<#nd::Ix0>().expect(#expect).into_scalar())
        }
        Field::Tree(_) => {
            let prefix = format!("{shown}.");
            code.names
                .push(quote!(for n in <#ty as #tree>::leaf_names() {
                    __oxla_names.push(::std::format!("{}{}", #prefix, n));
                }));
            code.each
                .push(quote!(#tree::for_each_leaf(&#at, __oxla_f);));
            code.each_mut
                .push(quote!(#tree::for_each_leaf_mut(&mut #at, __oxla_f);));
            code.zip
                .push(quote!(#tree::zip_leaves_mut(&mut #at, &#other, __oxla_f);));
            quote!(<#ty as #tree>::__from_leaves(__oxla_leaves))
        }
        Field::Array(elem, n) => {
            let elem_ty = match strip_group(ty) {
                syn::Type::Array(a) => (*a.elem).clone(),
                t => t.clone(),
            };
            let elems = (0..*n).map(|i| {
                let i_lit = proc_macro2::Literal::usize_unsuffixed(i);
                field_impl(
                    elem,
                    &elem_ty,
                    &quote!(#at[#i_lit]),
                    &quote!(#other[#i_lit]),
                    &format!("{shown}.{i}"),
                    code,
                )
            });
            // Array elements are evaluated in order: the leaves stay in order.
            quote!([#(#elems),*])
        }
    }
}

/// `impl oxla::Tree for Name`.
fn tree_impl(item: &syn::ItemStruct, fields: &[(&syn::Field, Field)], elem: DType) -> TokenStream {
    let name = &item.ident;
    let nd = crate::codegen::paths::ndarray();
    let f = crate::codegen::paths::float(elem);
    let tree = crate::codegen::paths::tree();
    let mut code = ImplCode::default();
    let mut build = Vec::new();
    for (field, resolved) in fields {
        let id = field.ident.as_ref().expect("named field");
        let value = field_impl(
            resolved,
            &field.ty,
            &quote!(self.#id),
            &quote!(__oxla_other.#id),
            &ident_name(id),
            &mut code,
        );
        build.push(quote!(#id: #value));
    }
    let ImplCode {
        names,
        each,
        each_mut,
        zip,
    } = code;
    quote! {
        impl #tree for #name {
            type Elem = #f;
            fn leaf_names() -> ::std::vec::Vec<::std::string::String> {
                let mut __oxla_names = ::std::vec::Vec::new();
                #(#names)*
                __oxla_names
            }
            fn for_each_leaf(&self, __oxla_f: &mut dyn ::core::ops::FnMut(#nd::ArrayViewD<'_, #f>)) {
                #(#each)*
            }
            fn for_each_leaf_mut(&mut self, __oxla_f: &mut dyn ::core::ops::FnMut(#nd::ArrayViewMutD<'_, #f>)) {
                #(#each_mut)*
            }
            fn zip_leaves_mut(
                &mut self,
                __oxla_other: &Self,
                __oxla_f: &mut dyn ::core::ops::FnMut(#nd::ArrayViewMutD<'_, #f>, #nd::ArrayViewD<'_, #f>),
            ) {
                #(#zip)*
            }
            fn __from_leaves(__oxla_leaves: &mut dyn ::core::iter::Iterator<Item = #nd::ArrayD<#f>>) -> Self {
                #name { #(#build),* }
            }
        }
    }
}
