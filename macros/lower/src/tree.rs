//! Parameter structs (JAX's pytrees): `#[derive(oxla::Tree)]` and functions
//! that take or return such structs.
//!
//! The derive emits the `oxla::Tree` impl and, as a helper does (see
//! `helpers`), a uniquely named `#[macro_export]` macro re-exported under
//! the struct's name, whose payload is the struct's definition (its fields'
//! names and types) with the definitions of the structs its fields name,
//! resolved where it is written. An annotated function whose parameter or
//! result type is a path that is no oxla type (`&Mlp`, `crate::m::Mlp`)
//! defers to that macro, like a call of an unknown helper.
//!
//! With every struct known, the function is flattened in its source: each
//! leaf of a struct parameter `p` becomes a parameter `p__w1` (a field of a
//! nested struct `p__layer__w`), `p.w1` in the body names it, a struct
//! passed to a helper passes its leaves, a struct result is the tuple of its
//! leaves, and `wrt = p` names every leaf of `p`. The flat function goes
//! through the usual pipeline; each generated function is then wrapped in
//! one with the user's types, which passes the leaves in and builds the
//! structs of the results (`Tree::__from_leaves`).

use crate::errors::Errors;
use crate::lower::{ident_name, return_tys};
use crate::parse::attr::{InAxes, Input, TransformAttr, TransformKind};
use crate::parse::types::{
    elem_of, float_of, ndarray_of, param_ty, result_ty, strip_group, RustTy,
};
use crate::resolve::helpers::{self, HelperTable};
use crate::stack::{GeneratedFn, Origin};
use oxla_core::DType;
use proc_macro2::{Delimiter, Group, Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use std::rc::Rc;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::Expr;

/// The `__resolve!` kind that continues a derive.
pub(crate) const DERIVE_KIND: &str = "tree";

const SUPPORTED_FIELDS: &str = "supported field types: an array `Array1<F>`…`Array6<F>` \
     (or `Array<F, IxN>`), a scalar `F`, where F is f32 or f64, one float type for the whole struct, \
     another struct with `#[derive(oxla::Tree)]`, or a fixed-size array `[T; N]` of these";

/// A parameter struct with its fields resolved.
#[derive(Debug)]
pub(crate) struct TreeDef {
    pub(crate) name: String,
    pub(crate) elem: DType,
    pub(crate) fields: Vec<(syn::Ident, Field)>,
}

#[derive(Clone, Debug)]
pub(crate) enum Field {
    /// A scalar or an array of the struct's float type.
    Leaf(RustTy),
    Tree(Rc<TreeDef>),
    /// `[T; N]`.
    Array(Box<Field>, usize),
}

/// One step of the path from a struct to one of its leaves.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Step {
    Name(String),
    Index(usize),
}

impl Field {
    /// The leaves in order: their path below this field and their type.
    fn leaves(&self) -> Vec<(Vec<Step>, RustTy)> {
        match self {
            Field::Leaf(t) => vec![(Vec::new(), t.clone())],
            Field::Tree(def) => def.leaves(),
            Field::Array(elem, n) => {
                let inner = elem.leaves();
                let mut out = Vec::new();
                for i in 0..*n {
                    for (path, t) in &inner {
                        let mut p = vec![Step::Index(i)];
                        p.extend(path.iter().cloned());
                        out.push((p, t.clone()));
                    }
                }
                out
            }
        }
    }

    fn dtype(&self) -> DType {
        match self {
            Field::Leaf(t) => t.dtype(),
            Field::Tree(def) => def.elem,
            Field::Array(elem, _) => elem.dtype(),
        }
    }
}

impl TreeDef {
    /// The leaves in order: their field path and type.
    pub(crate) fn leaves(&self) -> Vec<(Vec<Step>, RustTy)> {
        let mut out = Vec::new();
        for (name, f) in &self.fields {
            for (path, t) in f.leaves() {
                let mut p = vec![Step::Name(ident_name(name))];
                p.extend(path);
                out.push((p, t));
            }
        }
        out
    }

    fn field_names(&self) -> String {
        self.fields
            .iter()
            .map(|(n, _)| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What a field's type is.
enum FieldTy<'a> {
    Leaf(RustTy),
    Tree(&'a syn::Path),
    Array(Box<FieldTy<'a>>, usize),
    Bad(String),
}

impl FieldTy<'_> {
    /// The field, its structs resolved in `table`; `Ok(None)` when one is
    /// unknown.
    fn resolve(&self, table: &HelperTable) -> Result<Option<Field>, String> {
        Ok(Some(match self {
            FieldTy::Leaf(t) => Field::Leaf(t.clone()),
            FieldTy::Tree(p) => match resolve(p, table)? {
                Some(def) => Field::Tree(def),
                None => return Ok(None),
            },
            FieldTy::Array(e, n) => match e.resolve(table)? {
                Some(f) => Field::Array(Box::new(f), *n),
                None => return Ok(None),
            },
            FieldTy::Bad(e) => return Err(e.clone()),
        }))
    }
}

fn field_ty(ty: &syn::Type) -> FieldTy<'_> {
    if let Some(d) = float_of(ty) {
        return FieldTy::Leaf(RustTy::Scalar(d));
    }
    if let Some(r) = ndarray_of(ty, "Array") {
        return match r {
            Ok((d, rank)) if d.is_float() => FieldTy::Leaf(RustTy::NdArray(d, rank)),
            Ok(_) => FieldTy::Bad(format!(
                "an integer or bool array is not a parameter: {SUPPORTED_FIELDS}"
            )),
            Err(e) => FieldTy::Bad(format!("{e}; {SUPPORTED_FIELDS}")),
        };
    }
    if elem_of(ty).is_some() {
        return FieldTy::Bad(format!(
            "an integer or bool field is not a parameter: {SUPPORTED_FIELDS}"
        ));
    }
    if let syn::Type::Array(a) = strip_group(ty) {
        let len = match &a.len {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => i.base10_parse::<usize>().ok(),
            _ => None,
        };
        return match len {
            Some(n) => match field_ty(&a.elem) {
                FieldTy::Bad(e) => FieldTy::Bad(e),
                e => FieldTy::Array(Box::new(e), n),
            },
            None => FieldTy::Bad(format!(
                "the length `{}` of an array field must be an integer literal",
                a.len.to_token_stream()
            )),
        };
    }
    match tree_path(ty) {
        Some(p) => FieldTy::Tree(p),
        None => FieldTy::Bad(format!(
            "unsupported field type `{}`: {SUPPORTED_FIELDS}",
            ty.to_token_stream().to_string().replace(' ', "")
        )),
    }
}

/// A type that may name a parameter struct: a plain path (no generic
/// arguments) whose last segment is capitalized and is not one of the
/// standard or ndarray types oxla reports on by itself.
pub(crate) fn tree_path(ty: &syn::Type) -> Option<&syn::Path> {
    let syn::Type::Path(p) = strip_group(ty) else {
        return None;
    };
    if p.qself.is_some() || p.path.segments.iter().any(|s| !s.arguments.is_none()) {
        return None;
    }
    let last = p.path.segments.last()?.ident.to_string();
    let known = last.starts_with("Array")
        || matches!(
            last.as_str(),
            "Vec" | "String" | "Option" | "Box" | "Rc" | "Arc" | "HashMap" | "Self" | "Ix1"
        );
    (last.starts_with(|c: char| c.is_ascii_uppercase()) && !known).then_some(&p.path)
}

/// The struct `path` names, resolved in `table`. `Ok(None)` when unknown:
/// it is noted, for the expansion to ask its macro.
pub(crate) fn resolve(
    path: &syn::Path,
    table: &HelperTable,
) -> Result<Option<Rc<TreeDef>>, String> {
    let Some((entry, callees)) = table.get_tree(path) else {
        helpers::note_unknown(path);
        return Ok(None);
    };
    let item = &entry.item;
    let syn::Fields::Named(named) = &item.fields else {
        return Err(format!("`{}` has no named fields", item.ident));
    };
    let mut fields = Vec::new();
    let mut elem = None;
    for f in &named.named {
        let Some(name) = f.ident.clone() else {
            continue;
        };
        let Some(field) = field_ty(&f.ty).resolve(&callees)? else {
            return Ok(None);
        };
        let d = field.dtype();
        if *elem.get_or_insert(d) != d {
            return Err(format!("`{}` mixes float types", item.ident));
        }
        fields.push((name, field));
    }
    Ok(Some(Rc::new(TreeDef {
        name: item.ident.to_string(),
        elem: elem.unwrap_or(DType::F32),
        fields,
    })))
}

// ---------------------------------------------------------------------------
// The derive.

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
    let tree = quote!(::oxla::Tree);
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
    let tree = quote!(::oxla::Tree);
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

// ---------------------------------------------------------------------------
// Flattening a function.

/// What a parameter or result of the user's function is.
#[derive(Clone, Debug)]
pub(crate) enum Slot {
    Plain,
    /// A parameter struct: the type as written (without `&`), its definition.
    Tree(Box<syn::Type>, Rc<TreeDef>),
}

impl Slot {
    fn leaf_count(&self) -> usize {
        match self {
            Slot::Plain => 1,
            Slot::Tree(_, def) => def.leaves().len(),
        }
    }
}

/// A function with parameter structs, flattened.
pub(crate) struct Flat {
    /// The function with one parameter per leaf.
    pub(crate) item: syn::ItemFn,
    /// The attributes, `wrt` naming leaves.
    pub(crate) stack: Vec<TransformAttr>,
    /// The attributes as written.
    orig_stack: Vec<TransformAttr>,
    /// Each parameter of the user's function: its name, whether a float
    /// (for the default `wrt`), its slot.
    params: Vec<(syn::Ident, bool, Slot)>,
    results: Vec<Slot>,
}

impl Flat {
    /// For the function `name` of the expansion, made by `kind` (`None`:
    /// the original): the parameters its transform is taken with respect
    /// to, and the slot of each of its results (`None` for a transform
    /// whose results are not slots of the user's, the Jacobians); `None`
    /// when no attribute makes `name`.
    pub(crate) fn result_slots(
        &self,
        name: &syn::Ident,
        kind: Option<TransformKind>,
    ) -> Option<(Vec<usize>, Option<Vec<Slot>>)> {
        let wrt = match kind {
            None => None,
            Some(_) => self
                .orig_stack
                .iter()
                .find(|a| a.name.as_ref().is_some_and(|n| n == name))?
                .wrt
                .clone(),
        };
        let wrt_slots: Vec<usize> = match &wrt {
            Some(ids) => ids
                .iter()
                .filter_map(|id| self.params.iter().position(|(n, _, _)| n == id))
                .collect(),
            None => (0..self.params.len())
                .filter(|&i| self.params[i].1 || matches!(self.params[i].2, Slot::Tree(..)))
                .collect(),
        };
        let wrt_result = |i: &usize| self.params[*i].2.clone();
        let results = self.results.iter().cloned();
        let slots: Option<Vec<Slot>> = match kind {
            None | Some(TransformKind::Jit) | Some(TransformKind::Vmap) => Some(results.collect()),
            Some(TransformKind::Grad) => Some(wrt_slots.iter().map(wrt_result).collect()),
            Some(TransformKind::ValueAndGrad) | Some(TransformKind::Vjp) => {
                Some(results.chain(wrt_slots.iter().map(wrt_result)).collect())
            }
            Some(TransformKind::Jvp) => Some(results.clone().chain(results).collect()),
            Some(_) => None,
        };
        Some((wrt_slots, slots))
    }
}

pub(crate) enum Flattened {
    /// No parameter struct: the function as it is.
    None,
    /// A struct type is not known yet (noted for the expansion).
    Unknown,
    /// The flat function, and the errors flattening found (the flat
    /// signature still serves the stubs emitted after an error).
    Flat(Box<Flat>, Errors),
    Err(Errors),
}

/// `expand_stack` of `item`, flattened first when it has parameter
/// structs (the build script's path; the macro's is `expand_with`).
pub(crate) fn expand_stack_flat(
    item: &syn::ItemFn,
    stack: &[TransformAttr],
) -> Result<Vec<GeneratedFn>, Errors> {
    match flatten_fn(item, stack) {
        Flattened::None => crate::stack::expand_stack(item, stack),
        Flattened::Flat(flat, e) if e.is_empty() => {
            crate::stack::expand_stack(&flat.item, &flat.stack)
        }
        Flattened::Flat(_, e) | Flattened::Err(e) => Err(e),
        Flattened::Unknown => Err(Errors::new()),
    }
}

/// The leaf parameter of `param` at `path`.
fn leaf_ident(param: &syn::Ident, path: &[Step], span: Span) -> syn::Ident {
    let mut name = ident_name(param);
    for p in path {
        name.push_str("__");
        match p {
            Step::Name(n) => name.push_str(n),
            Step::Index(i) => name.push_str(&i.to_string()),
        }
    }
    syn::Ident::new(&name, span)
}

fn leaf_param_type(t: &RustTy) -> syn::Type {
    let f = crate::codegen::paths::float(t.dtype());
    match t {
        RustTy::NdArray(_, r) => {
            let arr = format_ident!("Array{}", r);
            syn::parse_quote!(&::oxla::ndarray::#arr<#f>)
        }
        _ => syn::parse_quote!(#f),
    }
}

fn leaf_result_type(t: &RustTy) -> syn::Type {
    let f = crate::codegen::paths::float(t.dtype());
    match t {
        RustTy::NdArray(_, r) => {
            let arr = format_ident!("Array{}", r);
            syn::parse_quote!(::oxla::ndarray::#arr<#f>)
        }
        _ => syn::parse_quote!(#f),
    }
}

/// The struct type a parameter type names: `Mlp`, `&Mlp`, `&m::Mlp`.
fn param_tree_path(ty: &syn::Type) -> Option<(&syn::Type, &syn::Path)> {
    let inner = match strip_group(ty) {
        syn::Type::Reference(r) if r.mutability.is_none() => &*r.elem,
        t => t,
    };
    tree_path(inner).map(|p| (inner, p))
}

/// Flatten `item` (with its attributes `stack`) against the structs of the
/// current helper table.
pub(crate) fn flatten_fn(item: &syn::ItemFn, stack: &[TransformAttr]) -> Flattened {
    let table = helpers::current();
    let mut errors = Errors::new();
    let mut unknown = false;
    let mut params = Vec::new();
    // The function's own type parameters name no struct (the lowering
    // reports them).
    let generic = |p: &syn::Path| {
        item.sig
            .generics
            .type_params()
            .any(|t| p.is_ident(&t.ident))
    };
    for input in &item.sig.inputs {
        let syn::FnArg::Typed(pt) = input else {
            return Flattened::None;
        };
        let syn::Pat::Ident(pi) = &*pt.pat else {
            return Flattened::None;
        };
        let plain = param_ty(&pt.ty);
        let slot = match (&plain, param_tree_path(&pt.ty)) {
            (Err(_), Some((ty, path))) if !generic(path) => match resolve(path, &table) {
                Ok(Some(def)) => Slot::Tree(Box::new(ty.clone()), def),
                Ok(None) => {
                    unknown = true;
                    Slot::Plain
                }
                Err(e) => {
                    errors.spanned(&pt.ty, e);
                    Slot::Plain
                }
            },
            _ => Slot::Plain,
        };
        let float = plain.map(|t| t.dtype().is_float()).unwrap_or(true);
        params.push((pi.ident.clone(), float, slot));
    }
    // Results: one type, or a tuple of types, any of them a struct.
    let mut results = Vec::new();
    let mut result_tuple = false;
    if let syn::ReturnType::Type(_, ty) = &item.sig.output {
        let tys: Vec<&syn::Type> = match strip_group(ty) {
            syn::Type::Tuple(t) => {
                result_tuple = true;
                t.elems.iter().collect()
            }
            t => vec![t],
        };
        for t in tys {
            let slot = match (result_ty(t), tree_path(t)) {
                (Err(_), Some(path)) if !generic(path) => match resolve(path, &table) {
                    Ok(Some(def)) => Slot::Tree(Box::new(t.clone()), def),
                    Ok(None) => {
                        unknown = true;
                        Slot::Plain
                    }
                    Err(e) => {
                        errors.spanned(t, e);
                        Slot::Plain
                    }
                },
                _ => Slot::Plain,
            };
            results.push(slot);
        }
    }
    if unknown {
        return Flattened::Unknown;
    }
    let has_tree = params.iter().any(|(_, _, s)| matches!(s, Slot::Tree(..)))
        || results.iter().any(|s| matches!(s, Slot::Tree(..)));
    if !has_tree {
        return if errors.is_empty() {
            Flattened::None
        } else {
            Flattened::Err(errors)
        };
    }

    // The signature: one parameter per leaf, a tuple of leaves per result.
    let mut flat = item.clone();
    let mut inputs = syn::punctuated::Punctuated::<syn::FnArg, syn::Token![,]>::new();
    for (input, (name, _, slot)) in item.sig.inputs.iter().zip(&params) {
        match slot {
            Slot::Plain => inputs.push(input.clone()),
            Slot::Tree(_, def) => {
                for (path, t) in def.leaves() {
                    let id = leaf_ident(name, &path, name.span());
                    let ty = leaf_param_type(&t);
                    inputs.push(syn::parse_quote!(#id: #ty));
                }
            }
        }
    }
    flat.sig.inputs = inputs;
    if let syn::ReturnType::Type(arrow, ty) = &item.sig.output {
        let written: Vec<syn::Type> = match strip_group(ty) {
            syn::Type::Tuple(t) => t.elems.iter().cloned().collect(),
            t => vec![t.clone()],
        };
        let mut out: Vec<syn::Type> = Vec::new();
        for (t, slot) in written.iter().zip(&results) {
            match slot {
                Slot::Plain => out.push(t.clone()),
                Slot::Tree(_, def) => {
                    out.extend(def.leaves().iter().map(|(_, t)| leaf_result_type(t)))
                }
            }
        }
        let ty: syn::Type = if out.len() == 1 {
            out.pop().expect("one result")
        } else {
            syn::parse_quote!((#(#out),*))
        };
        flat.sig.output = syn::ReturnType::Type(*arrow, Box::new(ty));
    }

    // The body.
    let mut rewrite = Rewrite {
        params: params
            .iter()
            .filter_map(|(n, _, s)| match s {
                Slot::Tree(_, def) => Some(Bound {
                    name: ident_name(n),
                    param: n.clone(),
                    prefix: Vec::new(),
                    pos: Field::Tree(def.clone()),
                }),
                Slot::Plain => None,
            })
            .collect(),
        results: results.clone(),
        result_tuple,
        errors: Errors::new(),
    };
    let mut block = (*item.block).clone();
    if let Some(syn::Stmt::Expr(tail, None)) = block.stmts.last_mut() {
        rewrite.result(tail);
    }
    rewrite.visit_block_mut(&mut block);
    flat.block = Box::new(block);
    errors.extend(rewrite.errors);

    // The attributes: what is supported, `wrt = p` naming p's leaves.
    let mut new_stack = Vec::new();
    let last = stack.len().saturating_sub(1);
    let fn_name = ident_name(&item.sig.ident);
    for (i, attr) in stack.iter().enumerate() {
        let supported_kind = matches!(
            attr.kind,
            TransformKind::Jit
                | TransformKind::Grad
                | TransformKind::ValueAndGrad
                | TransformKind::Jvp
                | TransformKind::Vjp
                | TransformKind::Vmap
        );
        let of_original = match &attr.input {
            Input::Below => i == last || stack[i + 1..].iter().all(|a| a.name.is_none()),
            Input::Original => true,
            Input::Named(id) => ident_name(id) == fn_name,
            Input::Nested(_) => false,
        };
        if !supported_kind {
            errors.at(
                attr.span,
                format!(
                    "`#[{}]` of a function with a parameter struct is not supported yet: such a function supports `jit`, `grad`, `value_and_grad`, `jvp`, `vjp` and `vmap` (with the struct shared: `None` in `in_axes`)",
                    attr.kind.name()
                ),
            );
            continue;
        }
        if !of_original {
            errors.at(
                attr.span,
                format!(
                    "`#[{}]` transforms another transform of a function with a parameter struct, which is not supported yet: transform the function itself (each entry of `#[transforms(…)]` does)",
                    attr.kind.name()
                ),
            );
            continue;
        }
        let mut a = attr.clone();
        if attr.kind == TransformKind::Vmap {
            match vmap_axes(attr, &params, &results) {
                Ok(axes) => a.in_axes = axes,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            }
        }
        if let Some(wrt) = &attr.wrt {
            let mut flat_wrt = Vec::new();
            for id in wrt {
                match params.iter().find(|(n, _, _)| n == id) {
                    Some((n, _, Slot::Tree(_, def))) => flat_wrt.extend(
                        def.leaves()
                            .iter()
                            .map(|(path, _)| leaf_ident(n, path, id.span())),
                    ),
                    _ => flat_wrt.push(id.clone()),
                }
            }
            a.wrt = Some(flat_wrt);
        }
        new_stack.push(a);
    }
    Flattened::Flat(
        Box::new(Flat {
            item: flat,
            stack: new_stack,
            orig_stack: stack.to_vec(),
            params,
            results,
        }),
        errors,
    )
}

/// The `in_axes` of a `vmap` over the flat function: each struct is shared
/// by every example (`None` for each of its leaves); batched structs and
/// struct results are not supported yet (their leaves would gain an axis,
/// so they would not be the same struct type).
fn vmap_axes(
    attr: &TransformAttr,
    params: &[(syn::Ident, bool, Slot)],
    results: &[Slot],
) -> Result<Option<(InAxes, Span)>, syn::Error> {
    let refuse = |what: &str| {
        syn::Error::new(
            attr.span,
            format!("`#[vmap]` of a function with a parameter struct batches {what}, which is not supported yet: give each struct parameter `None` in `in_axes` (shared by every example), e.g. `in_axes = (None, 0)`"),
        )
    };
    if results.iter().any(|s| matches!(s, Slot::Tree(..))) {
        return Err(refuse("a struct result"));
    }
    let each: Vec<Option<usize>> = match &attr.in_axes {
        None => return Err(refuse("every parameter by default")),
        Some((InAxes::All(a), _)) => vec![*a; params.len()],
        // A count mismatch is reported against the flat function below.
        Some((InAxes::Each(v), _)) if v.len() != params.len() => return Ok(attr.in_axes.clone()),
        Some((InAxes::Each(v), _)) => v.clone(),
    };
    let mut flat = Vec::new();
    for ((_, _, slot), axis) in params.iter().zip(&each) {
        match slot {
            Slot::Plain => flat.push(*axis),
            Slot::Tree(_, def) if axis.is_none() => flat.extend(def.leaves().iter().map(|_| None)),
            Slot::Tree(..) => return Err(refuse("a struct parameter")),
        }
    }
    let span = attr.in_axes.as_ref().map(|(_, s)| *s).unwrap_or(attr.span);
    Ok(Some((InAxes::Each(flat), span)))
}

/// A helper's item, flattened when it takes parameter structs (its structs
/// resolved in `table`, the helper's own); as written otherwise.
pub(crate) fn flatten_helper(item: &syn::ItemFn, table: &HelperTable) -> Option<syn::ItemFn> {
    let outer = helpers::swap_current(table.clone());
    let out = match flatten_fn(item, &[]) {
        Flattened::Flat(f, _) => Some(f.item),
        _ => None,
    };
    helpers::swap_current(outer);
    out
}

/// The body's rewriting: field paths to leaf parameters.
struct Rewrite {
    /// The names bound to structs: the parameters, and `let` bindings of
    /// a field path (`let l = &p.layer;`), latest last.
    params: Vec<Bound>,
    results: Vec<Slot>,
    result_tuple: bool,
    errors: Errors,
}

/// A name bound to a struct: a parameter, or a `let` naming a field path
/// into one.
struct Bound {
    name: String,
    /// The parameter it is a part of, and the path of fields to it.
    param: syn::Ident,
    prefix: Vec<Step>,
    pos: Field,
}

/// The name a `let` binds, when it is a plain one.
fn let_name(pat: &syn::Pat) -> Option<String> {
    match pat {
        syn::Pat::Ident(i) if i.subpat.is_none() => Some(ident_name(&i.ident)),
        syn::Pat::Type(t) => let_name(&t.pat),
        _ => None,
    }
}

/// What a path into a struct parameter names.
enum Named {
    Leaf(syn::Ident),
    /// A struct or an array of them: what it is, the parameter it is a part
    /// of and the path to it.
    Sub {
        pos: Field,
        param: syn::Ident,
        path: Vec<Step>,
    },
}

impl Rewrite {
    /// `Some` when `e` is a struct parameter or a path of fields and
    /// literal indices into one.
    fn named(&mut self, e: &Expr) -> Option<Result<Named, ()>> {
        let mut steps: Vec<(Step, Span)> = Vec::new();
        let mut cur = e;
        loop {
            match cur {
                Expr::Field(f) => {
                    let step = match &f.member {
                        syn::Member::Named(n) => (Step::Name(ident_name(n)), n.span()),
                        syn::Member::Unnamed(i) => (Step::Name(i.index.to_string()), i.span),
                    };
                    steps.push(step);
                    cur = &f.base;
                }
                Expr::Index(ix) => match literal_index(&ix.index) {
                    Some(i) => {
                        steps.push((Step::Index(i), ix.index.span()));
                        cur = &ix.expr;
                    }
                    None => break,
                },
                Expr::Paren(p) => cur = &p.expr,
                Expr::Group(g) => cur = &g.expr,
                _ => break,
            }
        }
        let Expr::Path(p) = cur else { return None };
        let name = ident_name(p.path.get_ident()?);
        let bound = self.params.iter().rev().find(|b| b.name == name)?;
        let (param, mut pos, mut path) =
            (bound.param.clone(), bound.pos.clone(), bound.prefix.clone());
        steps.reverse();
        for (step, span) in &steps {
            let shown = show_path(&param, &path);
            let next = match (&pos, step) {
                (Field::Tree(def), Step::Name(n)) => {
                    match def.fields.iter().find(|(f, _)| ident_name(f) == *n) {
                        Some((_, f)) => f.clone(),
                        None => {
                            self.errors.at(
                                *span,
                                format!(
                                    "`{}` has no field `{n}`: its fields are {}",
                                    def.name,
                                    def.field_names()
                                ),
                            );
                            return Some(Err(()));
                        }
                    }
                }
                (Field::Array(elem, len), Step::Index(k)) if k < len => (**elem).clone(),
                (Field::Array(_, len), Step::Index(k)) => {
                    self.errors.at(
                        *span,
                        format!("index {k} is out of range: `{shown}` has {len} elements"),
                    );
                    return Some(Err(()));
                }
                // An element of an array leaf: lowered as indexing.
                (Field::Leaf(_), Step::Index(_)) => return None,
                (Field::Leaf(_), Step::Name(n)) => {
                    self.errors.at(
                        *span,
                        format!("`{shown}` is an array or a scalar, not a struct: it has no field `{n}`"),
                    );
                    return Some(Err(()));
                }
                (Field::Tree(def), Step::Index(_)) => {
                    self.errors.at(
                        *span,
                        format!(
                            "`{shown}` is a `{}` struct, not an array: its fields are {}",
                            def.name,
                            def.field_names()
                        ),
                    );
                    return Some(Err(()));
                }
                (Field::Array(_, len), Step::Name(n)) => {
                    self.errors.at(
                        *span,
                        format!("`{shown}` is an array of {len} elements, which have the field `{n}`: index it with a literal, `{shown}[0].{n}`"),
                    );
                    return Some(Err(()));
                }
            };
            path.push(step.clone());
            pos = next;
        }
        Some(Ok(match pos {
            Field::Leaf(_) => Named::Leaf(leaf_ident(&param, &path, e.span())),
            pos => Named::Sub { pos, param, path },
        }))
    }

    /// A result expression: a struct result becomes its leaves.
    fn result(&mut self, e: &mut Expr) {
        if !self.results.iter().any(|s| matches!(s, Slot::Tree(..))) {
            return;
        }
        let results = self.results.clone();
        let mut out: Vec<Expr> = Vec::new();
        if self.result_tuple {
            let Expr::Tuple(t) = strip_paren(e) else {
                self.errors.spanned(
                    &*e,
                    "this function returns a tuple: write the result as a tuple `(…, …)`",
                );
                return;
            };
            if t.elems.len() != results.len() {
                return; // the lowering reports the count
            }
            for (el, slot) in t.elems.iter().zip(&results) {
                match slot {
                    Slot::Plain => out.push(el.clone()),
                    Slot::Tree(_, def) => out.extend(self.leaves_of(el, &Field::Tree(def.clone()))),
                }
            }
        } else if let Some(Slot::Tree(_, def)) = results.first() {
            out = self.leaves_of(e, &Field::Tree(def.clone()));
        }
        *e = if out.len() == 1 {
            out.pop().expect("one leaf")
        } else {
            syn::parse_quote_spanned!(e.span()=> (#(#out),*))
        };
    }

    /// The leaves of an expression whose value is `field`: a struct literal
    /// (an array literal for an array of structs), or a struct parameter or
    /// a part of one.
    fn leaves_of(&mut self, e: &Expr, field: &Field) -> Vec<Expr> {
        let e = strip_paren(e);
        match (field, e) {
            (Field::Leaf(_), _) => vec![e.clone()],
            (Field::Tree(def), Expr::Struct(s)) => {
                let shown = s
                    .path
                    .segments
                    .last()
                    .map(|s| s.ident.to_string())
                    .unwrap_or_default();
                if shown != def.name {
                    self.errors.spanned(
                        &s.path,
                        format!("expected a `{}`, found a `{shown}`", def.name),
                    );
                    return Vec::new();
                }
                if let Some(rest) = &s.rest {
                    self.errors.spanned(
                        rest,
                        "`..` in a struct result is not supported: write every field",
                    );
                }
                for fv in &s.fields {
                    let known = matches!(&fv.member, syn::Member::Named(n) if def.fields.iter().any(|(d, _)| d == n));
                    if !known {
                        self.errors.spanned(
                            &fv.member,
                            format!(
                                "`{}` has no field `{}`: its fields are {}",
                                def.name,
                                fv.member.to_token_stream(),
                                def.field_names()
                            ),
                        );
                    }
                }
                let mut out = Vec::new();
                for (fname, f) in &def.fields {
                    let Some(fv) = s
                        .fields
                        .iter()
                        .find(|fv| matches!(&fv.member, syn::Member::Named(n) if n == fname))
                    else {
                        self.errors.spanned(
                            &s.path,
                            format!("missing field `{fname}` of `{}`", def.name),
                        );
                        continue;
                    };
                    out.extend(self.leaves_of(&fv.expr, f));
                }
                out
            }
            (Field::Array(elem, n), Expr::Array(a)) if a.elems.len() == *n => a
                .elems
                .iter()
                .flat_map(|el| self.leaves_of(el, elem))
                .collect::<Vec<_>>(),
            (_, other) => {
                let want = field.leaves().len();
                match self.named(other) {
                    Some(Ok(Named::Sub { pos, param, path })) if same_kind(&pos, field) => {
                        sub_leaves(&pos, &param, &path, other.span())
                            .into_iter()
                            .map(|id| syn::parse_quote!(#id))
                            .collect::<Vec<_>>()
                            .into_iter()
                            .take(want)
                            .collect()
                    }
                    Some(Err(())) => Vec::new(),
                    _ => {
                        let what = match field {
                            Field::Tree(def) => format!("a `{0}` is a struct literal `{0} {{ … }}` or a parameter of that type", def.name),
                            _ => format!("an array of {} elements is an array literal `[…]` or a parameter's field of that type", field_len(field)),
                        };
                        self.errors.spanned(
                            other,
                            format!("this result does not match its type: {what}"),
                        );
                        Vec::new()
                    }
                }
            }
        }
    }
}

fn field_len(f: &Field) -> usize {
    match f {
        Field::Array(_, n) => *n,
        _ => 1,
    }
}

/// Whether two parts of structs have the same type (by struct name and
/// array length).
fn same_kind(a: &Field, b: &Field) -> bool {
    match (a, b) {
        (Field::Tree(x), Field::Tree(y)) => x.name == y.name,
        (Field::Array(x, n), Field::Array(y, m)) => n == m && same_kind(x, y),
        (Field::Leaf(x), Field::Leaf(y)) => x == y,
        _ => false,
    }
}

/// The leaf parameters of the part `pos` of `param` at `path`.
fn sub_leaves(pos: &Field, param: &syn::Ident, path: &[Step], span: Span) -> Vec<syn::Ident> {
    pos.leaves()
        .iter()
        .map(|(p, _)| {
            let full: Vec<Step> = path.iter().chain(p).cloned().collect();
            leaf_ident(param, &full, span)
        })
        .collect()
}

/// `p.layers[0].w`, as the user writes it.
fn show_path(param: &syn::Ident, path: &[Step]) -> String {
    let mut s = ident_name(param);
    for step in path {
        match step {
            Step::Name(n) => {
                s.push('.');
                s.push_str(n);
            }
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// An integer literal index (`[0]`).
fn literal_index(e: &Expr) -> Option<usize> {
    match strip_paren(e) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        _ => None,
    }
}

/// Whether a call of `func` may be a helper's (so a struct argument
/// passes its leaves), not one of oxla's own functions.
fn calls_helper(func: &Expr) -> bool {
    let Expr::Path(p) = func else { return false };
    let vocabulary = p
        .path
        .get_ident()
        .is_some_and(|id| helpers::is_vocabulary_function(&ident_name(id)));
    p.qself.is_none() && helpers::may_be_helper(&p.path) && !vocabulary
}

fn strip_paren(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip_paren(&p.expr),
        Expr::Group(g) => strip_paren(&g.expr),
        e => e,
    }
}

/// The result slots of a call of `path` when it names a function another
/// annotated function's expansion generates and some result is a struct
/// (`loss_grad` of `#[grad(loss_grad, wrt = p)] fn loss(p: &Params, …)`).
fn generated_struct_results(path: &syn::Path) -> Option<Vec<Slot>> {
    let (helper, callees) = helpers::current().get(path)?;
    let name = helper.generated.as_ref()?;
    let mut item = helper.item.clone();
    let stack = crate::parse::attr::take_oxla_attrs(&mut item.attrs, &mut Errors::new());
    let outer = helpers::swap_current(callees);
    let flat = flatten_fn(&item, &stack);
    helpers::swap_current(outer);
    let Flattened::Flat(flat, e) = flat else {
        return None;
    };
    if !e.is_empty() {
        return None;
    }
    let ident = syn::Ident::new(name, Span::call_site());
    let kind = match item.sig.ident == ident {
        true => None,
        false => Some(
            crate::stack::in_order(&stack)
                .iter()
                .find(|a| a.name.as_ref() == Some(&ident))?
                .kind,
        ),
    };
    let slots = flat.result_slots(&ident, kind)?.1?;
    slots
        .iter()
        .any(|s| matches!(s, Slot::Tree(..)))
        .then_some(slots)
}

impl Rewrite {
    /// `let g = loss_grad(&p, x);` (or a tuple pattern) where a result of
    /// the called generated function is a struct: the pattern binds its
    /// leaves (`g__w`, `g__b`), and `g` names them as a part of a struct
    /// does, so `g.w` and `Params { w: &p.w - &g.w, … }` work. Whether
    /// `local` was one.
    fn bind_struct_results(&mut self, local: &mut syn::Local) -> bool {
        let Some(init) = &local.init else {
            return false;
        };
        let Expr::Call(c) = strip_paren(&init.expr) else {
            return false;
        };
        let Expr::Path(p) = &*c.func else {
            return false;
        };
        if !calls_helper(&c.func) {
            return false;
        }
        let Some(slots) = generated_struct_results(&p.path) else {
            return false;
        };
        let pat = match &local.pat {
            syn::Pat::Type(t) => (*t.pat).clone(),
            p => p.clone(),
        };
        let pats: Vec<syn::Pat> = match (&pat, slots.len()) {
            (syn::Pat::Tuple(t), n) if t.elems.len() == n => t.elems.iter().cloned().collect(),
            (p, 1) => vec![p.clone()],
            _ => return false,
        };
        let span = c.func.span();
        let mut leaves: Vec<syn::Pat> = Vec::new();
        let mut bound: Vec<Bound> = Vec::new();
        for (pat, slot) in pats.iter().zip(&slots) {
            match (slot, pat) {
                (Slot::Plain, p) => leaves.push(p.clone()),
                (Slot::Tree(_, def), syn::Pat::Ident(pi)) if pi.subpat.is_none() => {
                    let pos = Field::Tree(def.clone());
                    for id in sub_leaves(&pos, &pi.ident, &[], span) {
                        leaves.push(syn::parse_quote!(#id));
                    }
                    bound.push(Bound {
                        name: ident_name(&pi.ident),
                        param: pi.ident.clone(),
                        prefix: Vec::new(),
                        pos,
                    });
                }
                (Slot::Tree(..), syn::Pat::Wild(w)) => {
                    for _ in 0..slot.leaf_count() {
                        leaves.push(syn::Pat::Wild(w.clone()));
                    }
                }
                _ => return false,
            }
        }
        for b in bound {
            self.params.retain(|old| old.name != b.name);
            self.params.push(b);
        }
        local.pat = match leaves.len() {
            1 => leaves.pop().expect("one"),
            _ => syn::parse_quote!((#(#leaves),*)),
        };
        true
    }

    /// A loop over an array of structs, unrolled as JAX's Python loop over a
    /// list of layers is traced: one copy of the body per element.
    /// `for layer in p.layers.iter()` (also `&p.layers`, `p.layers`) binds
    /// `layer` to each element; `for i in 0..3` with literal bounds whose
    /// body indexes an array of structs by `i` has `i` a literal in each
    /// copy. `None` for any other loop (a loop with `break` or `continue`
    /// is not unrolled: its exits would end the copies).
    fn unroll(&mut self, fl: &syn::ExprForLoop) -> Option<Expr> {
        if fl.label.is_some() || crate::loop_exits::has_exit(&fl.body).is_some() {
            return None;
        }
        let span = fl.for_token.span;
        let stmts = &fl.body.stmts;
        // `for layer in p.layers.iter()`.
        let base = match strip_paren(&fl.expr) {
            Expr::MethodCall(m) if m.method == "iter" && m.args.is_empty() => &*m.receiver,
            Expr::Reference(r) if r.mutability.is_none() => &*r.expr,
            e => e,
        };
        if matches!(base, Expr::Field(_) | Expr::Index(_) | Expr::Path(_)) {
            if let Some(Ok(Named::Sub {
                pos: pos @ Field::Array(..),
                ..
            })) = self.named(base)
            {
                let pat = &fl.pat;
                let copies = (0..field_len(&pos)).map(|k| {
                    let k = syn::LitInt::new(&k.to_string(), span);
                    quote::quote_spanned!(span=> { let #pat = &#base[#k]; #(#stmts)* })
                });
                return Some(syn::parse_quote_spanned!(span=> { #(#copies)* }));
            }
        }
        // `for i in 0..3 { … p.layers[i] … }`.
        let Expr::Range(r) = strip_paren(&fl.expr) else {
            return None;
        };
        let syn::Pat::Ident(var) = &*fl.pat else {
            return None;
        };
        let lit = |e: &Option<Box<Expr>>| match e.as_deref().map(strip_paren) {
            Some(Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            })) => i.base10_parse::<usize>().ok(),
            _ => None,
        };
        let (lo, hi) = (lit(&r.start)?, lit(&r.end)?);
        let hi = match r.limits {
            syn::RangeLimits::HalfOpen(_) => hi,
            syn::RangeLimits::Closed(_) => hi + 1,
        };
        let mut indexed = IndexedBy(&var.ident, Vec::new());
        syn::visit::Visit::visit_block(&mut indexed, &fl.body);
        let by_var = indexed.1.into_iter().any(|base| {
            matches!(
                self.named(&base),
                Some(Ok(Named::Sub {
                    pos: Field::Array(..),
                    ..
                }))
            )
        });
        if !by_var {
            return None;
        }
        let copies = (lo..hi).map(|k| {
            let mut body = fl.body.clone();
            let k = syn::LitInt::new(&k.to_string(), span);
            LoopVar(&var.ident, syn::parse_quote_spanned!(span=> #k)).visit_block_mut(&mut body);
            body
        });
        Some(syn::parse_quote_spanned!(span=> { #(#copies)* }))
    }
}

/// The bases of the index expressions `base[var]` in a body.
struct IndexedBy<'a>(&'a syn::Ident, Vec<Expr>);

impl<'ast> syn::visit::Visit<'ast> for IndexedBy<'_> {
    fn visit_expr_index(&mut self, ix: &'ast syn::ExprIndex) {
        if matches!(strip_paren(&ix.index), Expr::Path(p) if p.path.is_ident(self.0)) {
            self.1.push((*ix.expr).clone());
        }
        syn::visit::visit_expr_index(self, ix);
    }
}

/// Every use of the loop variable replaced by its value in one copy.
struct LoopVar<'a>(&'a syn::Ident, Expr);

impl VisitMut for LoopVar<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if matches!(e, Expr::Path(p) if p.path.is_ident(self.0)) {
            *e = self.1.clone();
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

impl VisitMut for Rewrite {
    /// `let l = &p.layer;` names a part of a struct: the binding is
    /// recorded, not lowered. Any other `let` of a name shadows it.
    fn visit_block_mut(&mut self, block: &mut syn::Block) {
        let stmts = std::mem::take(&mut block.stmts);
        for mut stmt in stmts {
            if let syn::Stmt::Local(local) = &mut stmt {
                if self.bind_struct_results(local) {
                    self.visit_local_mut(local);
                    block.stmts.push(stmt);
                    continue;
                }
                let name = let_name(&local.pat);
                let sub = local.init.as_ref().and_then(|init| {
                    let e = match &*init.expr {
                        Expr::Reference(r) if r.mutability.is_none() => &*r.expr,
                        e => e,
                    };
                    match self.named(e) {
                        Some(Ok(Named::Sub { pos, param, path })) => Some((pos, param, path)),
                        _ => None,
                    }
                });
                if let (Some(name), Some((pos, param, prefix))) = (&name, sub) {
                    self.params.push(Bound {
                        name: name.clone(),
                        param,
                        prefix,
                        pos,
                    });
                    continue;
                }
                self.visit_local_mut(local);
                if let Some(name) = name {
                    self.params.retain(|b| b.name != name);
                }
                block.stmts.push(stmt);
                continue;
            }
            self.visit_stmt_mut(&mut stmt);
            block.stmts.push(stmt);
        }
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::ForLoop(fl) = e {
            if let Some(unrolled) = self.unroll(fl) {
                *e = unrolled;
                self.visit_expr_mut(e);
                return;
            }
        }
        match self.named(e) {
            Some(Ok(Named::Leaf(id))) => {
                *e = syn::parse_quote!(#id);
                return;
            }
            Some(Ok(Named::Sub { pos, .. })) => {
                let msg = match &pos {
                    Field::Tree(def) => format!("this is a `{}` struct: use its fields ({}) or pass it to an `#[oxla::func]` helper", def.name, def.field_names()),
                    _ => format!("this is an array of {} parts of a struct: index it with a literal (`[0]`), or loop over it (`for layer in p.layers.iter()`, or `for i in 0..N` with literal bounds), which is unrolled", field_len(&pos)),
                };
                self.errors.spanned(&*e, msg);
                return;
            }
            Some(Err(())) => return,
            None => {}
        }
        match e {
            // A struct argument of a call passes its leaves.
            Expr::Call(c) if calls_helper(&c.func) => {
                self.visit_expr_mut(&mut c.func);
                let args = std::mem::take(&mut c.args);
                for mut a in args {
                    let inner = match &a {
                        Expr::Reference(r) if r.mutability.is_none() => &*r.expr,
                        a => a,
                    };
                    match self.named(inner) {
                        Some(Ok(Named::Sub { pos, param, path })) => {
                            for id in sub_leaves(&pos, &param, &path, inner.span()) {
                                c.args.push(syn::parse_quote!(#id));
                            }
                        }
                        Some(Err(())) => {}
                        _ => {
                            self.visit_expr_mut(&mut a);
                            c.args.push(a);
                        }
                    }
                }
            }
            Expr::Return(r) => {
                if let Some(v) = &mut r.expr {
                    self.result(v);
                    self.visit_expr_mut(v);
                }
            }
            // A closure's body is lowered where it is called.
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
}

// ---------------------------------------------------------------------------
// Code generation: a wrapper with the user's types around each function.

/// One parameter of a wrapper: its name, type, and the arguments of the
/// flat function it stands for.
struct WrapParam {
    name: syn::Ident,
    ty: TokenStream,
    /// The struct type of a struct parameter.
    ty_tree: Option<syn::Type>,
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
    let cfgs: Vec<&syn::Attribute> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
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

    // Which transform made `g`, and with respect to what.
    let kind = match &g.origin {
        Origin::Original => None,
        Origin::Transform { kind, .. } => Some(*kind),
    };
    let (wrt_slots, slots) = flat
        .result_slots(&g.name, kind)
        .ok_or_else(|| internal("no attribute generates this function"))?;

    // Parameters: primals, then tangents (jvp) or cotangents (vjp).
    let mut k = 0;
    let mut params: Vec<WrapParam> = Vec::new();
    let mut push = |name: syn::Ident, slot: &Slot, params: &mut Vec<WrapParam>| match slot {
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
                ty_tree: Some((**ty).clone()),
            });
        }
    };
    for (name, _, slot) in &flat.params {
        push(name.clone(), slot, &mut params);
    }
    match kind {
        Some(TransformKind::Jvp) => {
            for &i in &wrt_slots {
                let (name, _, slot) = &flat.params[i];
                push(format_ident!("t_{}", ident_name(name)), slot, &mut params);
            }
        }
        Some(TransformKind::Vjp) => {
            let n = flat.results.len();
            for (i, slot) in flat.results.iter().enumerate() {
                let name = if n == 1 {
                    format_ident!("ct")
                } else {
                    format_ident!("ct{}", i)
                };
                push(name, slot, &mut params);
            }
        }
        _ => {}
    }
    if k != f.params.len() {
        return Err(internal("parameter count"));
    }

    // Results.
    let Some(slots) = slots else {
        return Err(internal("unsupported transform"));
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
                            _ => quote!(::oxla::ndarray::arr0(#v).into_dyn()),
                        }
                    })
                    .collect::<Vec<_>>();
                ret_tys.push(quote!(#ty));
                ret_vals.push(quote!(<#ty as ::oxla::Tree>::__from_leaves(&mut ::std::vec![#(#leaves),*].into_iter())));
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
            quote! {
                #(#cfgs)*
                #[doc = #doc]
                #[allow(unused_variables, non_snake_case)]
                #[track_caller]
                #vis fn #name #generics(#(#ps),*) -> #ret_ty { #body }
            }
        }
    };
    let _ = ret_ty.span();
    Ok(quote!(#ir_const #function))
}
