//! Crate `const`s and `static`s used as values (`A`, `consts::G`,
//! `Self::K`): each becomes a hidden scalar parameter of the IR function,
//! named `__oxla_const_<i>`, whose value the generated Rust passes at every
//! call as `(PATH) as T` (T the function's float type), so that rustc
//! checks that the path exists and is numeric. Hidden parameters are never
//! differentiated (`wrt` leaves them out), never batched (`vmap` gives them
//! no axis), and never appear in a generated signature.

use crate::lower::Lowerer;
use oxla_core::{DType, Function, Type, Var};
use quote::ToTokens;

/// The prefix of a hidden constant parameter's name.
pub const CONST_PARAM_PREFIX: &str = "__oxla_const_";

/// A constant the function reads: its hidden parameter and the path the
/// generated code evaluates.
#[derive(Clone, Debug)]
pub struct ConstParam {
    pub param: String,
    pub path: syn::ExprPath,
}

/// Whether the parameter named `name` is a hidden constant.
pub fn is_const_param(name: &str) -> bool {
    name.starts_with(CONST_PARAM_PREFIX)
}

/// The indices of `f`'s parameters the user declared (not constants).
pub fn visible_params(f: &Function) -> Vec<usize> {
    (0..f.params.len())
        .filter(|i| !is_const_param(&f.param_names[*i]))
        .collect()
}

/// Whether `p` reads like a constant: its last segment is SCREAMING_CASE
/// (`A`, `MAX_ITER`, `consts::G`, `Self::K`, `f64::EPSILON`).
pub(crate) fn looks_like_const(p: &syn::ExprPath) -> bool {
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    let name = last.ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name);
    // `f64::consts::X` is a float constant oxla knows or reports itself.
    let segs = crate::lower::segment_names(&p.path);
    let float_consts =
        matches!(segs.as_slice(), [.., t, c, _] if (t == "f32" || t == "f64") && c == "consts");
    !float_consts
        && p.qself.is_none()
        && p.path.segments.iter().all(|s| s.arguments.is_none())
        && name.starts_with(|c: char| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The span by which a constant's place in its file is found: its last
/// segment's.
pub(crate) fn path_span(p: &syn::ExprPath) -> proc_macro2::Span {
    p.path
        .segments
        .last()
        .map_or_else(proc_macro2::Span::call_site, |s| s.ident.span())
}

impl Lowerer<'_> {
    /// The hidden parameter of the constant `p` (one per distinct path).
    pub(crate) fn const_param(&mut self, p: &syn::ExprPath) -> Option<Var> {
        if !self.frames.is_empty() {
            return self.const_in_loop(p);
        }
        let shown = p.to_token_stream().to_string().replace(' ', "");
        // Inlined into a caller, `shown` is read at the caller's call: the
        // same constant when the helper is in the caller's module.
        if !self.inlining.is_empty() && !crate::resolve::site::in_callers_module(path_span(p)) {
            self.errors.spanned(
                p,
                format!("a constant (`{shown}`) inside a helper of another module is not supported: a helper is inlined into its caller, where `{shown}` may name something else; pass it to the helper as an argument (a helper in its caller's module reads it)"),
            );
            return None;
        }
        if matches!(self.dtype, DType::F16 | DType::BF16) {
            self.errors.spanned(
                p,
                format!("a constant (`{shown}`) in a {} function is not supported: constants are read in f32 or f64 functions; write the value as a literal", self.dtype),
            );
            return None;
        }
        if let Some(c) = self
            .consts
            .iter()
            .find(|c| c.path.to_token_stream().to_string() == p.to_token_stream().to_string())
        {
            let i = self.f.param_names.iter().position(|n| *n == c.param)?;
            return Some(self.f.params[i]);
        }
        let param = format!("{CONST_PARAM_PREFIX}{}", self.consts.len());
        let v = self.f.add_param(&param, Type::scalar(self.dtype));
        self.consts.push(ConstParam {
            param,
            path: p.clone(),
        });
        Some(v)
    }
}
