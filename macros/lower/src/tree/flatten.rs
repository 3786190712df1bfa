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
    /// A batch of such structs (`oxla::Batched<T>`, what `vmap` makes of
    /// one): each leaf with a leading batch axis.
    Batched(Box<syn::Type>, Rc<TreeDef>),
}

impl Slot {
    pub(super) fn leaf_count(&self) -> usize {
        match self {
            Slot::Plain => 1,
            Slot::Tree(_, def) | Slot::Batched(_, def) => def.leaves().len(),
        }
    }

    fn is_struct(&self) -> bool {
        !matches!(self, Slot::Plain)
    }
}

/// The signature of one function of the expansion in the user's types:
/// what its wrapper takes and returns.
#[derive(Clone, Debug)]
pub(crate) struct Sig {
    /// Each parameter: its name, whether a float (for the default `wrt`),
    /// its slot.
    pub(super) params: Vec<(syn::Ident, bool, Slot)>,
    /// Each result's slot; `None` when every result is an array or a
    /// scalar, as many as the IR has (the Jacobians).
    pub(super) results: Option<Vec<Slot>>,
}

/// A function with parameter structs, flattened.
pub(crate) struct Flat {
    /// The function with one parameter per leaf.
    pub(crate) item: syn::ItemFn,
    /// The attributes, `wrt` naming leaves.
    pub(crate) stack: Vec<TransformAttr>,
    /// The signature of each function the expansion generates, by name
    /// (the annotated function's first).
    sigs: Vec<(syn::Ident, Sig)>,
}

impl Flat {
    /// The signature of the function `name` of the expansion (`None` when
    /// no attribute makes it).
    pub(crate) fn sig(&self, name: &syn::Ident) -> Option<&Sig> {
        self.sigs.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }

    /// The annotated function's signature.
    pub(super) fn original(&self) -> &Sig {
        &self.sigs[0].1
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
            // The user's function takes no batch (a `vmap` makes one).
            Slot::Tree(_, def) | Slot::Batched(_, def) => {
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
                Slot::Tree(_, def) | Slot::Batched(_, def) => {
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
                Slot::Tree(_, def) | Slot::Batched(_, def) => Some(Bound {
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

    // The attributes, in the flat function's terms (`wrt = p` naming p's
    // leaves, `in_axes` one entry per leaf), with the signature of each
    // function they generate.
    let original = Sig {
        params: params.clone(),
        results: Some(results.clone()),
    };
    let mut run = SigRun {
        sigs: vec![(item.sig.ident.clone(), original)],
        below: Some(0),
    };
    let mut new_stack = Vec::new();
    for attr in stack.iter().rev() {
        match run.transform(attr) {
            Ok(Some((flat_attr, _, at))) => {
                new_stack.push(flat_attr);
                if attr.listed {
                    run.below = None;
                } else if let Some(at) = at {
                    run.below = Some(at);
                }
            }
            // The stack reports it (an ambiguous or unknown input).
            Ok(None) => new_stack.push(attr.clone()),
            Err(e) => errors.push(e),
        }
    }
    new_stack.reverse();
    Flattened::Flat(
        Box::new(Flat {
            item: flat,
            stack: new_stack,
            sigs: run.sigs,
        }),
        errors,
    )
}

/// The signatures of the functions generated so far, and which one an
/// attribute without `of` transforms (`None`: ambiguous, the entries of a
/// `#[transforms(…)]`), as `stack::apply_stack` walks the attributes.
struct SigRun {
    sigs: Vec<(syn::Ident, Sig)>,
    below: Option<usize>,
}

impl SigRun {
    /// `attr` in the flat function's terms, the signature of the function
    /// it makes, and that function's index in `sigs` (when it has a name);
    /// `None` when its input is not known here (the stack reports that).
    fn transform(
        &mut self,
        attr: &TransformAttr,
    ) -> Result<Option<(TransformAttr, Sig, Option<usize>)>, syn::Error> {
        let mut flat_attr = attr.clone();
        let input: Sig = match &attr.input {
            Input::Below => match self.below {
                Some(i) => self.sigs[i].1.clone(),
                None if attr.name.is_none() => self.sigs[0].1.clone(),
                None => return Ok(None),
            },
            Input::Original => self.sigs[0].1.clone(),
            Input::Named(id) => {
                let n = ident_name(id);
                match self.sigs.iter().find(|(g, _)| ident_name(g) == n) {
                    Some((_, sig)) => sig.clone(),
                    None => return Ok(None),
                }
            }
            Input::Nested(inner) => {
                let Some((flat_inner, sig, _)) = self.transform(inner)? else {
                    return Ok(None);
                };
                flat_attr.input = Input::Nested(Box::new(flat_inner));
                sig
            }
        };
        let sig = transform_sig(attr, &input, &mut flat_attr)?;
        let at = attr.name.as_ref().map(|name| {
            self.sigs.push((name.clone(), sig.clone()));
            self.sigs.len() - 1
        });
        Ok(Some((flat_attr, sig, at)))
    }
}

/// What `attr` makes of a function with signature `input`; `flat_attr`
/// (a copy of `attr`) gets its `wrt` and `in_axes` in the flat function's
/// terms.
fn transform_sig(
    attr: &TransformAttr,
    input: &Sig,
    flat_attr: &mut TransformAttr,
) -> Result<Sig, syn::Error> {
    let what = attr.kind.name();
    let has_struct = input.params.iter().any(|(_, _, s)| s.is_struct())
        || input.results.iter().flatten().any(Slot::is_struct);
    // `wrt` naming each leaf of a struct.
    let wrt: Vec<usize> = match &attr.wrt {
        Some(ids) => ids
            .iter()
            .filter_map(|id| input.params.iter().position(|(n, _, _)| n == id))
            .collect(),
        None => (0..input.params.len())
            .filter(|&i| input.params[i].1 || input.params[i].2.is_struct())
            .collect(),
    };
    if let Some(ids) = &attr.wrt {
        let mut flat_wrt = Vec::new();
        for id in ids {
            match input.params.iter().find(|(n, _, _)| n == id) {
                Some((n, _, Slot::Tree(_, def) | Slot::Batched(_, def))) => flat_wrt.extend(
                    def.leaves()
                        .iter()
                        .map(|(path, _)| leaf_ident(n, path, id.span())),
                ),
                _ => flat_wrt.push(id.clone()),
            }
        }
        flat_attr.wrt = Some(flat_wrt);
    }
    let wrt_slots = || wrt.iter().map(|&i| input.params[i].2.clone());
    let results = || input.results.clone().unwrap_or_default();
    let sig = match attr.kind {
        TransformKind::Jit => input.clone(),
        TransformKind::Grad => Sig {
            params: input.params.clone(),
            results: Some(wrt_slots().collect()),
        },
        TransformKind::ValueAndGrad | TransformKind::Vjp if input.results.is_none() => {
            return Err(syn::Error::new(attr.span, format!("`#[{what}]` of a Jacobian of a function with a parameter struct is not supported yet: take `{what}` of the function itself")));
        }
        TransformKind::ValueAndGrad => Sig {
            params: input.params.clone(),
            results: Some(results().into_iter().chain(wrt_slots()).collect()),
        },
        TransformKind::Jvp => {
            let Some(rs) = &input.results else {
                return Err(syn::Error::new(attr.span, "`#[jvp]` of a Jacobian of a function with a parameter struct is not supported yet: take `jvp` of the function itself"));
            };
            let tangents = wrt.iter().map(|&i| {
                let (n, f, s) = &input.params[i];
                (format_ident!("t_{}", ident_name(n)), *f, s.clone())
            });
            Sig {
                params: input.params.iter().cloned().chain(tangents).collect(),
                results: Some(rs.iter().chain(rs).cloned().collect()),
            }
        }
        TransformKind::Vjp => {
            let rs = results();
            let n = rs.len();
            let cts = rs.iter().enumerate().map(|(i, s)| {
                let name = match n {
                    1 => format_ident!("ct"),
                    _ => format_ident!("ct{}", i),
                };
                (name, true, s.clone())
            });
            Sig {
                params: input.params.iter().cloned().chain(cts).collect(),
                results: Some(results().into_iter().chain(wrt_slots()).collect()),
            }
        }
        TransformKind::Vmap => vmap_sig(attr, input, flat_attr)?,
        TransformKind::Jacfwd | TransformKind::Jacrev | TransformKind::Hessian => {
            // With respect to one array or scalar: the Jacobian's shape is
            // that of a plain function's; a struct's leaves would each need
            // a block of their own (JAX's pytree of pytrees).
            let target = match (&attr.wrt, wrt.as_slice()) {
                (Some(_), [i]) => Some(*i),
                (None, _) => (!input.params.is_empty()).then_some(0),
                _ => None,
            };
            let target_struct = target.is_some_and(|i| input.params[i].2.is_struct());
            if target_struct {
                let (n, _, _) = &input.params[target.unwrap_or(0)];
                return Err(syn::Error::new(
                    attr.span,
                    format!(
                        "`#[{what}]` with respect to the parameter struct `{}` is not supported yet (its result would hold a block per leaf of the struct, JAX's pytree of arrays): name an array or scalar parameter in `wrt` (`wrt = x`), or use `grad`/`jvp` with respect to the struct (a Hessian-vector product is `jvp` of `grad`)",
                        ident_name(n)
                    ),
                ));
            }
            if input.results.iter().flatten().any(Slot::is_struct) {
                return Err(syn::Error::new(
                    attr.span,
                    format!("`#[{what}]` of a function returning a parameter struct is not supported yet: return its leaves as arrays, or use `jvp`/`vjp`"),
                ));
            }
            Sig {
                params: input.params.clone(),
                results: None,
            }
        }
        TransformKind::Pmap if has_struct => {
            return Err(syn::Error::new(
                attr.span,
                "`#[pmap]` of a function with a parameter struct is not supported yet: such a function supports `jit`, `grad`, `value_and_grad`, `jvp`, `vjp`, `vmap`, and `jacfwd`, `jacrev`, `hessian` with respect to an array or scalar",
            ));
        }
        TransformKind::Pmap => Sig {
            params: input.params.clone(),
            results: None,
        },
    };
    Ok(sig)
}

/// `#[vmap]`'s signature: a struct with `in_axes` 0 is batched (every leaf
/// along its leading axis: `&Batched<T>`), one with `None` shared by every
/// example; each struct result becomes a `Batched<T>` (`out_axes` 0).
/// `flat_attr` gets one `in_axes` (and `out_axes`) entry per leaf.
fn vmap_sig(
    attr: &TransformAttr,
    input: &Sig,
    flat_attr: &mut TransformAttr,
) -> Result<Sig, syn::Error> {
    let refuse = |span: Span, what: String| {
        syn::Error::new(
            span,
            format!("`#[vmap]` of a function with a parameter struct: {what}"),
        )
    };
    let axes_span = attr.in_axes.as_ref().map_or(attr.span, |(_, s)| *s);
    let each: Vec<Option<usize>> = match &attr.in_axes {
        None => vec![Some(0); input.params.len()],
        Some((InAxes::All(a), _)) => vec![*a; input.params.len()],
        // A count mismatch is reported against the flat function.
        Some((InAxes::Each(v), _)) if v.len() != input.params.len() => {
            return Ok(Sig {
                params: input.params.clone(),
                results: input.results.clone(),
            })
        }
        Some((InAxes::Each(v), _)) => v.clone(),
    };
    let mut flat_in = Vec::new();
    let mut params = Vec::new();
    for ((name, float, slot), axis) in input.params.iter().zip(&each) {
        let n = ident_name(name);
        let slot = match (slot, axis) {
            (Slot::Plain, _) => {
                flat_in.push(*axis);
                Slot::Plain
            }
            (s, None) => {
                flat_in.extend((0..s.leaf_count()).map(|_| None));
                s.clone()
            }
            (Slot::Tree(ty, def), Some(0)) => {
                if let Some((path, _)) = def.leaves().iter().find(|(_, t)| t.rank() >= 6) {
                    return Err(refuse(axes_span, format!("batching `{n}` gives its leaf `{}` a seventh axis; arrays have at most 6", path_name(path))));
                }
                flat_in.extend((0..def.leaves().len()).map(|_| Some(0)));
                Slot::Batched(ty.clone(), def.clone())
            }
            (Slot::Tree(..), Some(k)) => {
                return Err(refuse(axes_span, format!("a struct is batched along the leading axis of every leaf: give `{n}` `in_axes` 0 (a `&oxla::Batched<…>`) or `None` (shared by every example), not {k}")));
            }
            (Slot::Batched(..), Some(_)) => {
                return Err(refuse(axes_span, format!("`{n}` is already a batch of structs (`oxla::Batched`); batching it again is not supported: give it `None`")));
            }
        };
        params.push((name.clone(), *float, slot));
    }
    if attr.in_axes.is_some() || input.params.iter().any(|(_, _, s)| s.is_struct()) {
        flat_attr.in_axes = Some((InAxes::Each(flat_in), axes_span));
    }
    let Some(rs) = &input.results else {
        return Ok(Sig {
            params,
            results: None,
        });
    };
    let out_span = attr.out_axes.as_ref().map_or(attr.span, |(_, s)| *s);
    let outs: Vec<Option<usize>> = match &attr.out_axes {
        None => vec![Some(0); rs.len()],
        Some((InAxes::All(a), _)) => vec![*a; rs.len()],
        Some((InAxes::Each(v), _)) if v.len() != rs.len() => {
            return Ok(Sig {
                params,
                results: Some(rs.clone()),
            })
        }
        Some((InAxes::Each(v), _)) => v.clone(),
    };
    let mut flat_out = Vec::new();
    let mut results = Vec::new();
    for (slot, axis) in rs.iter().zip(&outs) {
        let slot = match (slot, axis) {
            (Slot::Plain, _) => {
                flat_out.push(*axis);
                Slot::Plain
            }
            (Slot::Tree(ty, def), Some(0)) => {
                if def.leaves().iter().any(|(_, t)| t.rank() >= 6) {
                    return Err(refuse(attr.span, "a struct result with a leaf of rank 6 cannot gain a batch axis (arrays have at most 6)".to_string()));
                }
                flat_out.extend((0..def.leaves().len()).map(|_| Some(0)));
                Slot::Batched(ty.clone(), def.clone())
            }
            (Slot::Tree(..), _) => {
                return Err(refuse(out_span, "a struct result is batched along the leading axis of every leaf: its `out_axes` entry must be 0".to_string()));
            }
            (Slot::Batched(..), _) => {
                return Err(refuse(attr.span, "its input already returns a batch of structs (`oxla::Batched`); batching it again is not supported".to_string()));
            }
        };
        results.push(slot);
    }
    if attr.out_axes.is_some() {
        flat_attr.out_axes = Some((InAxes::Each(flat_out), out_span));
    }
    Ok(Sig {
        params,
        results: Some(results),
    })
}

/// A leaf's path as written: `layer.w`, `layers[0].w`.
fn path_name(path: &[Step]) -> String {
    let mut out = String::new();
    for p in path {
        match p {
            Step::Name(n) if out.is_empty() => out.push_str(n),
            Step::Name(n) => {
                out.push('.');
                out.push_str(n);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
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
