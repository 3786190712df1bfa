//! The lints allowed on generated items: what they flag there is oxla's
//! code, not the user's, and a user running clippy on their crate should see
//! only their own.

use proc_macro2::TokenStream;
use quote::quote;

/// On a function oxla emits, body and signature. The body: constants cast
/// to the float type they may already have (`SCALE as f64`), and literals
/// folded from the user's constants (`ln 2` as `0.6931471805599453`, which
/// clippy reads as an approximate `LN_2`). The signature: one parameter per
/// field of a flattened struct, per `wrt` operand or per destination, and
/// the tuple types of several results. (The annotated function itself is
/// re-emitted too, and clippy reports it at the attribute, where a user's
/// `#[allow]` on the function would not be seen by the generated siblings.)
pub(crate) fn function() -> TokenStream {
    quote! {
        #[allow(
            clippy::unnecessary_cast,
            clippy::approx_constant,
            clippy::excessive_precision,
            clippy::too_many_arguments,
            clippy::type_complexity
        )]
    }
}

/// On the `macro_rules!` carrying an annotated item's source as data: its
/// `crate::` paths are the item's own, resolved where the item is lowered,
/// never as code at the macro's call site.
pub(crate) fn source_carrier() -> TokenStream {
    quote!(#[allow(clippy::crate_in_macro_def)])
}
