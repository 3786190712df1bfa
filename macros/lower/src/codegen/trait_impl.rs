//! An annotated method in `impl Trait for Type`: the block may hold only the
//! trait's own items, so the expansion keeps the method itself (its compiled
//! program lives in its body) and drops the siblings every expansion also
//! defines — `NAME_IR`, `name_into`, `name_device` — which were rustc's
//! E0407/E0438 ("not a member of trait"). A function an attribute generates
//! (`g` of `#[grad(g)]`) cannot be dropped silently: it is an error at its
//! name saying where it can live.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

/// `expansion` (items) reduced to what an `impl Trait for Type` block
/// accepts, for the method `name`.
pub(crate) fn only_the_method(expansion: TokenStream, name: &syn::Ident) -> TokenStream {
    let Ok(file) = syn::parse2::<syn::File>(expansion.clone()) else {
        return expansion;
    };
    let method = crate::lower::ident_name(name);
    let siblings = [
        format!("{method}_into"),
        format!("{method}_device"),
        crate::codegen::ir_const_name(&method),
    ];
    let fns: Vec<String> = file
        .items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Fn(f) => Some(crate::lower::ident_name(&f.sig.ident)),
            _ => None,
        })
        .collect();
    // `g_into` and `g_device` go with `g`: one error, at `g`.
    let companion = |n: &str| {
        ["_into", "_device"].iter().any(|suffix| {
            n.strip_suffix(suffix)
                .is_some_and(|stem| fns.iter().any(|f| f == stem))
        })
    };
    let mut out = TokenStream::new();
    for item in file.items {
        match &item {
            syn::Item::Fn(f) if f.sig.ident == *name => item.to_tokens(&mut out),
            syn::Item::Fn(f) if siblings.contains(&crate::lower::ident_name(&f.sig.ident)) => {}
            syn::Item::Const(_) => {}
            syn::Item::Fn(f) if companion(&crate::lower::ident_name(&f.sig.ident)) => {}
            syn::Item::Fn(f) => {
                let generated = &f.sig.ident;
                let msg = format!(
                    "`{generated}` cannot be defined here: in `impl Trait for Type`, only the trait's items may be written, so an oxla attribute on `{method}` can compile `{method}` itself (`#[jit]`) but not add `{generated}`; put `{method}` in an inherent `impl` block or at module level and call it from the trait method"
                );
                out.extend(syn::Error::new(generated.span(), msg).to_compile_error());
            }
            // `macro_rules!` definitions: none are emitted in an `impl`, but
            // an item that cannot be here is never kept.
            syn::Item::Macro(m) if m.ident.is_some() => {}
            _ => item.to_tokens(&mut out),
        }
    }
    quote!(#out)
}
