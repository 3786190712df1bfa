//! The error context: every stage records spanned errors here and carries on,
//! so one expansion reports every problem at once (like serde_derive's `Ctxt`).

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use std::fmt::Display;

/// A list of spanned errors gathered during parsing, lowering and transforms.
#[derive(Debug, Default)]
pub struct Errors {
    errors: Vec<syn::Error>,
}

impl Errors {
    pub fn new() -> Errors {
        Errors::default()
    }

    /// An error spanning all of `tokens`.
    pub fn spanned(&mut self, tokens: impl ToTokens, msg: impl Display) {
        self.errors.push(syn::Error::new_spanned(tokens, msg));
    }

    /// An error at `span`.
    pub fn at(&mut self, span: Span, msg: impl Display) {
        self.errors.push(syn::Error::new(span, msg));
    }

    pub fn push(&mut self, e: syn::Error) {
        // A combined `syn::Error` holds several; keep them apart.
        self.errors.extend(e);
    }

    pub fn extend(&mut self, other: Errors) {
        self.errors.extend(other.errors);
    }

    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    pub fn len(&self) -> usize {
        self.errors.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &syn::Error> {
        self.errors.iter()
    }

    /// Each error's message, in the order they were found.
    pub fn messages(&self) -> Vec<String> {
        self.errors.iter().map(|e| e.to_string()).collect()
    }

    /// `Ok(())` when nothing was recorded.
    pub fn check(self) -> Result<(), Errors> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(self)
        }
    }

    /// One `compile_error!` per error, each at its span.
    pub fn to_compile_errors(&self) -> TokenStream {
        self.errors
            .iter()
            .map(syn::Error::to_compile_error)
            .collect()
    }
}

impl From<syn::Error> for Errors {
    fn from(e: syn::Error) -> Errors {
        let mut errors = Errors::new();
        errors.push(e);
        errors
    }
}

impl Display for Errors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.messages().join("\n"))
    }
}
