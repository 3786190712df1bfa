//! Flattening a function: each leaf of a struct parameter becomes a
//! parameter of its own and a struct result the tuple of its leaves, so that
//! the flat function goes through the usual pipeline.

use super::def::resolve;
use super::def::tree_path;
use super::def::Field;
use super::def::Step;
use super::def::TreeDef;
use super::rewrite::Bound;
use super::rewrite::Rewrite;
use crate::errors::Errors;
use crate::lower::ident_name;
use crate::parse::attr::{InAxes, Input, TransformAttr, TransformKind};
use crate::parse::types::{param_ty, result_ty, strip_group, RustTy};
use crate::resolve::helpers::{self, HelperTable};
use crate::stack::GeneratedFn;
use proc_macro2::Span;
use quote::format_ident;
use std::rc::Rc;
use syn::visit_mut::VisitMut;

/// What a parameter or result of the user's function is.
#[derive(Clone, Debug)]
pub(crate) enum Slot {
    Plain,
    /// A parameter struct: the type as written (without `&`), its definition.
    Tree(Box<syn::Type>, Rc<TreeDef>),
}

impl Slot {
    pub(super) fn leaf_count(&self) -> usize {
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
    pub(super) params: Vec<(syn::Ident, bool, Slot)>,
    pub(super) results: Vec<Slot>,
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
pub(super) fn leaf_ident(param: &syn::Ident, path: &[Step], span: Span) -> syn::Ident {
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
            let nd = crate::codegen::paths::ndarray();
            syn::parse_quote!(&#nd::#arr<#f>)
        }
        _ => syn::parse_quote!(#f),
    }
}

fn leaf_result_type(t: &RustTy) -> syn::Type {
    let f = crate::codegen::paths::float(t.dtype());
    match t {
        RustTy::NdArray(_, r) => {
            let arr = format_ident!("Array{}", r);
            let nd = crate::codegen::paths::ndarray();
            syn::parse_quote!(#nd::#arr<#f>)
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
