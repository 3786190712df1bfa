//! What the build helper compiles ahead of time: the same stack, run over
//! every annotated function of a file.

use super::generated::GeneratedFn;
use crate::errors::Errors;
use crate::parse::attr::take_oxla_attrs;

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
                    out.extend(gens);
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
