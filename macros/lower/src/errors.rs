//! The error context: every stage records spanned errors here and carries on,
//! so one expansion reports every problem at once (like serde_derive's `Ctxt`).

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use std::fmt::Display;

/// A list of spanned errors gathered during parsing, lowering and transforms.
#[derive(Debug, Default)]
pub struct Errors {
    errors: Vec<syn::Error>,
    /// Errors were dropped because another expansion reports them (a
    /// helper's own): this one failed, with nothing more to say.
    elsewhere: bool,
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
        self.elsewhere |= other.elsewhere;
    }

    /// Keep, of the errors recorded after the first `n`, those `keep`
    /// accepts; the others are reported by another expansion (the list
    /// stays failed, `is_empty` false, with nothing more to print).
    pub fn retain_after(&mut self, n: usize, keep: impl Fn(&syn::Error) -> bool) {
        let n = n.min(self.errors.len());
        let later = self.errors.split_off(n);
        let before = later.len();
        self.errors.extend(later.into_iter().filter(|e| keep(e)));
        self.elsewhere |= self.errors.len() < n + before;
    }

    /// Nothing failed (no error here, none reported elsewhere).
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty() && !self.elsewhere
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
        if self.is_empty() {
            Ok(())
        } else {
            Err(self)
        }
    }

    /// One `compile_error!` per error, each at its span; an error found
    /// twice (the same message at the same place: a helper's body lowered
    /// for itself and inlined, a type checked as a parameter and as a
    /// result) is reported once.
    pub fn to_compile_errors(&self) -> TokenStream {
        let mut seen = std::collections::HashSet::new();
        self.errors
            .iter()
            .filter(|e| seen.insert((e.to_string(), place(e.span()))))
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

/// Where a span points in the source, without its expansion context (the
/// same tokens reached through two expansions have two contexts).
fn place(span: Span) -> String {
    let text = format!("{span:?}");
    match text.find("bytes(") {
        Some(at) => text[at..].to_string(),
        None => text,
    }
}
