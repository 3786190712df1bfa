//! What the build helper compiles ahead of time: the same stack, run over
//! every annotated function of its files (and every `#[oxla::func]` helper,
//! as `#[jit]` would compile it). Like the entry points in `lib.rs`, this
//! drives the whole pipeline, the generic and tree wrappers included.

use crate::errors::Errors;
use crate::parse::attr::take_oxla_attrs;
use crate::resolve::helpers::{derives_tree, is_func_attr, with_helpers, HelperTable};
use crate::stack::{has_free_axes, GeneratedFn};
use proc_macro2::{Span, TokenStream};

/// Every function annotated with an oxla attribute in `file` (also inside
/// inline modules), with the functions its attributes generate, after the
/// transforms: what the build helper compiles ahead of time. Functions with
/// errors are skipped silently (the macro reports them when it expands).
pub fn collect_from_file(file: &syn::File) -> Vec<GeneratedFn> {
    let mut out = Vec::new();
    collect_items(&file.items, &mut out);
    out
}

fn collect_items(items: &[syn::Item], out: &mut Vec<GeneratedFn>) {
    for item in items {
        match item {
            syn::Item::Fn(f) => {
                let mut f = f.clone();
                let mut errors = Errors::new();
                let stack = take_oxla_attrs(&mut f.attrs, &mut errors);
                if stack.is_empty() || !errors.is_empty() {
                    continue;
                }
                let gens = if crate::generic::is_generic(&f) {
                    crate::generic::collect(&f, &stack)
                } else {
                    crate::tree::expand_stack_flat(&f, &stack)
                };
                if let Ok(gens) = gens {
                    // One whose collectives leave an axis free is not
                    // emitted as a function (see `stack::has_free_axes`).
                    out.extend(gens.into_iter().filter(|g| !has_free_axes(g)));
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    collect_items(items, out);
                }
            }
            // Associated functions (without `self`) of an `impl` block.
            syn::Item::Impl(i) => {
                let fns: Vec<syn::Item> = i
                    .items
                    .iter()
                    .filter_map(|it| match it {
                        syn::ImplItem::Fn(f) => Some(syn::Item::Fn(syn::ItemFn {
                            attrs: f.attrs.clone(),
                            vis: f.vis.clone(),
                            sig: f.sig.clone(),
                            block: Box::new(f.block.clone()),
                        })),
                        _ => None,
                    })
                    .collect();
                collect_items(&fns, out);
            }
            _ => {}
        }
    }
}

/// What annotated functions of the build script's files may call.
#[derive(Default)]
struct Callables {
    /// `#[oxla::func]` helpers.
    helpers: Vec<syn::ItemFn>,
    /// `#[derive(oxla::Tree)]` structs.
    trees: Vec<syn::ItemStruct>,
    /// The functions annotated functions generate, by name, each with its
    /// annotated item (as its callable macro carries it).
    generated: Vec<(String, syn::ItemFn)>,
}

/// The callables of `items` (also in inline modules; not in `impl` blocks,
/// which define no callable macros).
fn gather_helpers(items: &[syn::Item], out: &mut Callables) {
    for item in items {
        match item {
            syn::Item::Struct(s) if s.attrs.iter().any(derives_tree) => {
                let mut s = s.clone();
                s.attrs.clear();
                out.trees.push(s);
            }
            syn::Item::Fn(f) if f.attrs.iter().any(is_func_attr) => {
                let mut f = f.clone();
                f.attrs.retain(|a| !is_func_attr(a));
                out.helpers.push(f);
            }
            syn::Item::Fn(f) => {
                let mut attrs = f.attrs.clone();
                let stack = crate::parse::attr::take_oxla_attrs(&mut attrs, &mut Errors::new());
                if !stack.is_empty() {
                    let named = crate::parse::attr::in_order(&stack);
                    let names = std::iter::once(&f.sig.ident)
                        .chain(named.iter().filter_map(|a| a.name.as_ref()));
                    out.generated
                        .extend(names.map(|n| (n.to_string(), f.clone())));
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    gather_helpers(items, out);
                }
            }
            _ => {}
        }
    }
}

/// Every function annotated with an oxla attribute in `files`, with the
/// functions its attributes generate, after the transforms, and every
/// `#[oxla::func]` helper compiled as `#[jit]` would: what the build helper
/// compiles ahead of time. A call is resolved to the helper or generated
/// function of the same name in any of `files` (the build script has no
/// name resolution); a
/// function calling a helper of another crate is skipped, as are functions
/// with errors (the macro reports them when it expands).
pub fn collect_from_files(files: &[syn::File]) -> Vec<GeneratedFn> {
    let mut found = Callables::default();
    for file in files {
        gather_helpers(&file.items, &mut found);
    }
    let helpers = found.helpers;
    let table = HelperTable::by_name(helpers.clone())
        .with_trees(found.trees)
        .with_generated(found.generated);
    let mut out = Vec::new();
    for file in files {
        out.extend(with_helpers(&table, || collect_from_file(file)).0);
    }
    let mut errors = Errors::new();
    let jit: Vec<_> = crate::parse::attr::parse_args(
        crate::parse::attr::TransformKind::Jit,
        TokenStream::new(),
        Span::call_site(),
        &mut errors,
    )
    .into_iter()
    .collect();
    for h in &helpers {
        let (gens, _) = with_helpers(&table, || {
            crate::stack::as_helper(|| match crate::generic::is_generic(h) {
                true => crate::generic::collect(h, &jit),
                false => crate::tree::expand_stack_flat(h, &jit),
            })
        });
        if let Ok(gens) = gens {
            out.extend(gens.into_iter().filter(|g| !has_free_axes(g)));
        }
    }
    out
}
