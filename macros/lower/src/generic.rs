//! Functions generic over their float type: `fn f<T: oxla::Float>(x: T) -> T`.
//!
//! The IR is monomorphic, so the function is lowered once per float type:
//! `instantiate` writes the item with `T` replaced by `f32` (then `f64`) —
//! in types, in `T::…` paths, and `T::zero()`/`T::one()`/`T::from(v)` as
//! literals or casts — and the transform stack runs on each instance as on
//! any function. For each generated function `name` the expansion emits one
//! public generic `name<T: oxla::Float>` whose body holds both instances as
//! items of their own block and calls the one `T` is, moving arguments and
//! results between `T` and the concrete type with `oxla::Float`'s identity
//! conversions (see the facade's `float.rs`): no copy, nothing per element.
//! Both instances lower from the same item, so the build script, which
//! collects them the same way, compiles the kernels of both.

use crate::codegen::paths;
use crate::codegen::{self, CodegenOptions};
use crate::errors::Errors;
use crate::lower::{ident_name, return_tys};
use crate::parse::attr::TransformAttr;
use crate::parse::types::{strip_group, RustTy};
use crate::stack::{GeneratedFn, Origin};
use crate::tree;
use oxla_core::DType;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::visit_mut::VisitMut;

/// The float types a generic function is instantiated at, in order.
const INSTANCES: [DType; 2] = [DType::F32, DType::F64];

/// How the supported form reads, for errors.
const FORM: &str = "an oxla function may be generic over its one float type only: `fn f<T: oxla::Float>(x: T) -> T` (T is f32 or f64)";

/// Whether `item` declares type or const parameters (or a `where` clause):
/// the generic path handles (or reports) it.
pub(crate) fn is_generic(item: &syn::ItemFn) -> bool {
    let g = &item.sig.generics;
    g.where_clause.is_some()
        || g.params
            .iter()
            .any(|p| !matches!(p, syn::GenericParam::Lifetime(_)))
}

/// The float type parameter of `item`, after checking the generics are
/// `<T: oxla::Float>` (lifetimes besides), the bound maybe in a `where`
/// clause, and that no parameter or result names a concrete float type.
pub(crate) fn float_param(item: &syn::ItemFn, errors: &mut Errors) -> Option<syn::Ident> {
    let generics = &item.sig.generics;
    let mut found: Option<syn::Ident> = None;
    let mut bounded = false;
    let before = errors.len();
    for p in &generics.params {
        match p {
            syn::GenericParam::Lifetime(_) => {}
            syn::GenericParam::Const(c) => errors.spanned(
                c,
                format!("const generic parameters are not supported: {FORM}"),
            ),
            syn::GenericParam::Type(t) => {
                if let Some(first) = &found {
                    errors.spanned(
                        &t.ident,
                        format!("a second type parameter is not supported (`{first}` is the float type): {FORM}"),
                    );
                    continue;
                }
                if let Some(d) = &t.default {
                    errors.spanned(d, format!("a default type is not supported: {FORM}"));
                }
                bounded |= check_bounds(&t.ident, &t.bounds, errors);
                found = Some(t.ident.clone());
            }
        }
    }
    if let Some(w) = &generics.where_clause {
        for pred in &w.predicates {
            match (pred, &found) {
                (syn::WherePredicate::Type(pt), Some(t)) if is_ident_type(&pt.bounded_ty, t) => {
                    if let Some(l) = &pt.lifetimes {
                        errors.spanned(l, format!("`for<…>` bounds are not supported: {FORM}"));
                    }
                    bounded |= check_bounds(t, &pt.bounds, errors);
                }
                _ => errors.spanned(
                    pred,
                    format!("this `where` clause is not supported: the only bound is `T: oxla::Float` on the float type; {FORM}"),
                ),
            }
        }
    }
    let Some(t) = found else {
        if errors.len() == before {
            errors.spanned(generics, FORM);
        }
        return None;
    };
    if !bounded && errors.len() == before {
        errors.spanned(
            &t,
            format!("`{t}` needs the bound `oxla::Float` (`{t}: oxla::Float`): {FORM}"),
        );
    }
    // One float type per function: `T`, not `T` and `f64`.
    let mut concrete = ConcreteFloats(Vec::new());
    for input in &item.sig.inputs {
        if let syn::FnArg::Typed(pt) = input {
            syn::visit::Visit::visit_type(&mut concrete, &pt.ty);
        }
    }
    if let syn::ReturnType::Type(_, ty) = &item.sig.output {
        syn::visit::Visit::visit_type(&mut concrete, ty);
    }
    for id in concrete.0 {
        errors.spanned(
            &id,
            format!("mixed float types: this function is generic over `{t}`, its one float type; write `{t}` instead of `{id}`"),
        );
    }
    (errors.len() == before).then_some(t)
}

/// Check `T`'s bounds; whether one is `Float`.
fn check_bounds(
    t: &syn::Ident,
    bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, syn::Token![+]>,
    errors: &mut Errors,
) -> bool {
    let mut float = false;
    for b in bounds {
        match b {
            syn::TypeParamBound::Trait(tb) if is_float_bound(&tb.path) && tb.lifetimes.is_none() => {
                float = true
            }
            other => errors.spanned(
                other,
                format!("`{t}: {}`: the float type parameter's bound is `oxla::Float` (f32 or f64) and nothing else",
                    other.to_token_stream().to_string().replace(' ', "")),
            ),
        }
    }
    float
}

/// `Float`, `oxla::Float` or `::oxla::Float`.
fn is_float_bound(p: &syn::Path) -> bool {
    let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
    p.segments.iter().all(|s| s.arguments.is_none())
        && matches!(
            segs.iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .as_slice(),
            ["Float"] | ["oxla", "Float"]
        )
}

fn is_ident_type(ty: &syn::Type, t: &syn::Ident) -> bool {
    matches!(strip_group(ty), syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident(t))
}

/// The concrete float types a signature names.
struct ConcreteFloats(Vec<syn::Ident>);

impl<'ast> syn::visit::Visit<'ast> for ConcreteFloats {
    fn visit_type_path(&mut self, p: &'ast syn::TypePath) {
        if let Some(last) = p.path.segments.last() {
            if ["f32", "f64", "f16", "bf16"].contains(&last.ident.to_string().as_str()) {
                self.0.push(last.ident.clone());
            }
        }
        syn::visit::visit_type_path(self, p);
    }
}

/// `item` with its float type parameter `t` replaced by `dtype` (and
/// removed from its generics).
pub(crate) fn instantiate(item: &syn::ItemFn, t: &syn::Ident, dtype: DType) -> syn::ItemFn {
    let mut out = item.clone();
    let g = &mut out.sig.generics;
    g.params = std::mem::take(&mut g.params)
        .into_iter()
        .filter(|p| !matches!(p, syn::GenericParam::Type(tp) if tp.ident == *t))
        .collect();
    if let Some(w) = &mut g.where_clause {
        w.predicates = std::mem::take(&mut w.predicates)
            .into_iter()
            .filter(
                |p| !matches!(p, syn::WherePredicate::Type(pt) if is_ident_type(&pt.bounded_ty, t)),
            )
            .collect();
        if w.predicates.is_empty() {
            g.where_clause = None;
        }
    }
    if g.params.is_empty() {
        g.lt_token = None;
        g.gt_token = None;
    }
    let mut s = Substitute {
        t: t.clone(),
        ty: syn::Ident::new(dtype_name(dtype), Span::call_site()),
    };
    s.visit_signature_mut(&mut out.sig);
    s.visit_block_mut(&mut out.block);
    out
}

/// A generic helper (`#[oxla::func] fn h<T: oxla::Float>`) at its caller's
/// float type; `None` when `item` is not generic (or not as supported:
/// its own expansion reports that).
pub(crate) fn instantiate_helper(item: &syn::ItemFn, dtype: DType) -> Option<syn::ItemFn> {
    if !is_generic(item) {
        return None;
    }
    let t = float_param(item, &mut Errors::new())?;
    Some(instantiate(item, &t, dtype))
}

fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::F64 => "f64",
        DType::F16 => "f16",
        DType::BF16 => "bf16",
        _ => "f32",
    }
}

/// Replaces `T` by the concrete type `ty` (its span kept).
struct Substitute {
    t: syn::Ident,
    ty: syn::Ident,
}

impl Substitute {
    fn concrete(&self, span: Span) -> syn::Ident {
        syn::Ident::new(&self.ty.to_string(), span)
    }

    /// `T::name` (one segment after `T`): the name and its span.
    fn t_path<'a>(&self, p: &'a syn::ExprPath) -> Option<&'a syn::Ident> {
        let segs: Vec<&syn::PathSegment> = p.path.segments.iter().collect();
        match segs.as_slice() {
            [t, name] if p.qself.is_none() && t.ident == self.t && t.arguments.is_none() => {
                Some(&name.ident)
            }
            _ => None,
        }
    }

    /// A float literal of `text` at `span`.
    fn float_lit(text: &str, span: Span) -> syn::Expr {
        let lit = syn::LitFloat::new(text, span);
        syn::Expr::Lit(syn::ExprLit {
            attrs: Vec::new(),
            lit: syn::Lit::Float(lit),
        })
    }

    /// `T::zero()`, `T::one()`, `T::from(v)`, `T::from_f64(v)`, `T::PI()`…
    fn rewrite_call(&self, c: &syn::ExprCall) -> Option<syn::Expr> {
        let syn::Expr::Path(p) = &*c.func else {
            return None;
        };
        let name = self.t_path(p)?;
        let span = name.span();
        let n = name.to_string();
        match (n.as_str(), c.args.len()) {
            ("zero", 0) => Some(Self::float_lit("0.0", span)),
            ("one", 0) => Some(Self::float_lit("1.0", span)),
            ("from" | "from_f64" | "from_f32", 1) => {
                let arg = &c.args[0];
                match crate::lower::strip_parens(arg) {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Float(f),
                        ..
                    }) => {
                        let digits = f.base10_digits();
                        Some(Self::float_lit(digits, f.span()))
                    }
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(i),
                        ..
                    }) => Some(Self::float_lit(
                        &format!("{}.0", i.base10_digits()),
                        i.span(),
                    )),
                    // `T::from(std::f64::consts::LN_2)`: the instance's constant.
                    syn::Expr::Path(p)
                        if crate::lower::inline::float_constant(&p.path).is_some() =>
                    {
                        let ty = self.concrete(span);
                        let c = &p.path.segments.last()?.ident;
                        Some(syn::parse_quote_spanned!(span=> #ty::consts::#c))
                    }
                    _ => {
                        let ty = self.concrete(span);
                        Some(syn::parse_quote_spanned!(span=> ((#arg) as #ty)))
                    }
                }
            }
            // num-traits' `FloatConst`: `T::PI()` is `f32::consts::PI`.
            (_, 0)
                if crate::lower::inline::float_constant(&syn::parse_quote!(f64::consts::#name))
                    .is_some() =>
            {
                let ty = self.concrete(span);
                Some(syn::parse_quote_spanned!(span=> #ty::consts::#name))
            }
            _ => None,
        }
    }
}

impl VisitMut for Substitute {
    fn visit_type_mut(&mut self, ty: &mut syn::Type) {
        if let syn::Type::Path(p) = ty {
            if p.qself.is_none() && p.path.is_ident(&self.t) {
                let id = self.concrete(p.path.segments[0].ident.span());
                *ty = syn::parse_quote!(#id);
                return;
            }
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }

    fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
        // `T::one()` before its path becomes `f32::one`: the arguments only.
        if let syn::Expr::Call(c) = e {
            let t_call = matches!(&*c.func, syn::Expr::Path(p) if self.t_path(p).is_some());
            if t_call {
                for a in c.args.iter_mut() {
                    self.visit_expr_mut(a);
                }
                if let Some(r) = self.rewrite_call(c) {
                    *e = r;
                    return;
                }
                // `T::exp(x)` is `f32::exp(x)`; an unknown `T::name(x)` stays,
                // so that its error names `T`.
                let known = matches!(&*c.func, syn::Expr::Path(p) if self.t_path(p)
                    .is_some_and(|n| crate::lower::FLOAT_PATH_METHODS.contains(&n.to_string().as_str())));
                if !known {
                    return;
                }
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
        let replaced = match &*e {
            // num-traits' `T::from(v).unwrap()`: the value.
            syn::Expr::MethodCall(m)
                if m.method == "unwrap" && m.args.is_empty() && self.was_from(&m.receiver) =>
            {
                Some((*m.receiver).clone())
            }
            _ => None,
        };
        if let Some(r) = replaced {
            *e = r;
        }
    }

    fn visit_path_mut(&mut self, p: &mut syn::Path) {
        // `T::EPSILON`, `T::exp(x)`: the concrete type's.
        if p.segments.len() > 1 && p.leading_colon.is_none() {
            let first = &mut p.segments[0];
            if first.ident == self.t && first.arguments.is_none() {
                first.ident = self.concrete(first.ident.span());
            }
        }
        syn::visit_mut::visit_path_mut(self, p);
    }
}

impl Substitute {
    /// Whether `e` is what `T::from(v)` became (a literal or a cast to the
    /// concrete type), so that a following `.unwrap()` is dropped.
    fn was_from(&self, e: &syn::Expr) -> bool {
        match crate::lower::strip_parens(e) {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Float(_),
                ..
            }) => true,
            syn::Expr::Cast(c) => is_ident_type(&c.ty, &self.ty),
            _ => false,
        }
    }
}

/// Lower both instances of `item` and apply `stack` to each.
fn expand_instances(
    item: &syn::ItemFn,
    t: &syn::Ident,
    stack: &[TransformAttr],
) -> Result<Vec<(syn::ItemFn, Vec<GeneratedFn>)>, Errors> {
    // The instances are items inside the generic function, where `Self`
    // (of an `impl` block) is out of reach.
    struct SelfPaths(Vec<syn::Path>);
    impl<'ast> syn::visit::Visit<'ast> for SelfPaths {
        fn visit_path(&mut self, p: &'ast syn::Path) {
            if p.segments.first().is_some_and(|s| s.ident == "Self") {
                self.0.push(p.clone());
            }
            syn::visit::visit_path(self, p);
        }
    }
    let mut self_paths = SelfPaths(Vec::new());
    syn::visit::Visit::visit_block(&mut self_paths, &item.block);
    if !self_paths.0.is_empty() {
        let mut e = Errors::new();
        for p in &self_paths.0 {
            let shown = p.to_token_stream().to_string().replace(' ', "");
            e.spanned(p, format!("`{shown}` in a generic function is not supported: its f32 and f64 instances are items inside it, where `Self` is out of reach; name the type (`Model::K`)"));
        }
        return Err(e);
    }
    let mut out = Vec::new();
    let mut first_errors: Option<Errors> = None;
    for dtype in INSTANCES {
        let inst = instantiate(item, t, dtype);
        let result = match tree::flatten_fn(&inst, stack) {
            tree::Flattened::None => crate::stack::expand_stack(&inst, stack),
            tree::Flattened::Unknown => Err(Errors::new()),
            _ => {
                let mut e = Errors::new();
                e.spanned(
                    &item.sig.inputs,
                    format!("parameter structs are not supported in a generic function: a struct's fields have one concrete float type; {FORM}"),
                );
                Err(e)
            }
        };
        match result {
            Ok(gens) => out.push((inst, gens)),
            // The instances share their source: report one's errors.
            Err(e) => {
                if first_errors.is_none() {
                    first_errors = Some(e);
                }
            }
        }
    }
    match first_errors {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Every function the instances of a generic `item` generate (the build
/// script's view: both instances' kernels are compiled).
pub(crate) fn collect(
    item: &syn::ItemFn,
    stack: &[TransformAttr],
) -> Result<Vec<GeneratedFn>, Errors> {
    let mut errors = Errors::new();
    let Some(t) = float_param(item, &mut errors) else {
        return Err(errors);
    };
    expand_instances(item, &t, stack).map(|v| v.into_iter().flat_map(|(_, g)| g).collect())
}

/// The expansion of a generic `item` with its transform `stack`: for each
/// generated function, its IR constants (`NAME_IR` of the f64 instance,
/// `NAME_F32_IR`) and one generic function (and `name_into`). `prelude` goes at the start of the annotated function's body.
pub(crate) fn expand(
    item: &syn::ItemFn,
    stack: &[TransformAttr],
    opts: &CodegenOptions,
    prelude: &TokenStream,
) -> Result<TokenStream, Errors> {
    let mut errors = Errors::new();
    let Some(t) = float_param(item, &mut errors) else {
        return Err(errors);
    };
    let instances = expand_instances(item, &t, stack)?;
    let [(item32, gens32), (item64, gens64)] = instances.as_slice() else {
        return Err(errors);
    };
    let cfgs: Vec<&syn::Attribute> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    let mut out = TokenStream::new();
    for (g32, g64) in gens32.iter().zip(gens64) {
        match wrapper(
            item,
            &t,
            (item32, g32),
            (item64, g64),
            opts,
            &cfgs,
            prelude,
            false,
        ) {
            Ok(ts) => out.extend(ts),
            Err(e) => errors.push(e),
        }
    }
    errors.check().map(|()| out)
}

/// After an error: every function the expansion would define, generic as
/// it would be, with a body that only panics (see `placeholder`). `None`
/// when the generics themselves are wrong or the signature says too little.
pub(crate) fn stubs(
    item: &syn::ItemFn,
    stack: &[TransformAttr],
    prelude: &TokenStream,
) -> Option<TokenStream> {
    let t = float_param(item, &mut Errors::new())?;
    let inst = instantiate(item, &t, DType::F64);
    let f = crate::lower::placeholder::signature_ir(&inst)?;
    let gens = crate::stack::apply_stack(&inst, stack, f, Vec::new(), Vec::new()).0;
    let cfgs: Vec<&syn::Attribute> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    // A name the errors say is taken twice is emitted once.
    let mut defined = std::collections::BTreeSet::new();
    let mut out = TokenStream::new();
    for g in &gens {
        if !defined.insert(ident_name(&g.name)) {
            continue;
        }
        let pair = (&inst, g);
        let opts = CodegenOptions::default();
        out.extend(wrapper(item, &t, pair, pair, &opts, &cfgs, prelude, true).ok()?);
    }
    Some(out)
}

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
    let g = quote!(::oxla::__private::generic);
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
fn wrapper(
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
    let private = quote!(::oxla::__private::generic);

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
            let span = name.span();
            let bound = quote_spanned!(span=> ::oxla::Float);
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
                let span = name.span();
                let bound = quote_spanned!(span=> ::oxla::Float);
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
