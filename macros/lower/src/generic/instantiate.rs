//! Which functions are generic over their float type, and their instances:
//! the item with `T` replaced by a concrete float type.

use crate::errors::Errors;
use crate::parse::types::strip_group;
use oxla_core::DType;
use proc_macro2::Span;
use quote::ToTokens;
use syn::visit_mut::VisitMut;

/// The float types a generic function is instantiated at, in order.
pub(super) const INSTANCES: [DType; 2] = [DType::F32, DType::F64];

/// How the supported form reads, for errors.
pub(super) const FORM: &str = "an oxla function may be generic over its one float type only: `fn f<T: oxla::Float>(x: T) -> T` (T is f32 or f64)";

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
