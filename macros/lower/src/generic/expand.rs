//! Both instances through the pipeline (lowering, the transform stack), then
//! one generic wrapper per generated function; for the build script too.

use super::instantiate::float_param;
use super::instantiate::instantiate;
use super::instantiate::FORM;
use super::instantiate::INSTANCES;
use super::wrap::wrapper;
use crate::codegen::CodegenOptions;
use crate::errors::Errors;
use crate::lower::ident_name;
use crate::parse::attr::TransformAttr;
use crate::stack::GeneratedFn;
use crate::tree;
use oxla_core::DType;
use proc_macro2::TokenStream;
use quote::ToTokens;

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
            tree::Flattened::None => crate::stack::expand_stack(&inst, stack).and_then(|gens| {
                crate::no_free_axes(
                    item,
                    &gens,
                    "a function generic over its float type",
                    "write it for `f32` or `f64`",
                )
                .map(|()| gens)
            }),
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
    let cfgs = crate::parse::attr::cfg_attrs(item);
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
    let cfgs = crate::parse::attr::cfg_attrs(item);
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
