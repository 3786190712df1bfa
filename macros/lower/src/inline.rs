//! A call of an `#[oxla::func]` helper, lowered inline: the helper's body,
//! its parameters bound to the argument values, in a scope of its own.

use crate::helpers::{self, may_be_helper};
use crate::lower::{ident_name, return_tys, Lowerer};
use crate::types::param_ty;
use oxla_core::Var;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::Expr;

impl Lowerer<'_> {
    /// `Some` when `c` calls a path that may name a helper: its value when
    /// the helper is known, else `None` after noting the call (the expansion
    /// then asks the helper's macro for it) and reporting it as unknown.
    pub(crate) fn lower_helper_call(&mut self, c: &syn::ExprCall) -> Option<Option<Var>> {
        let Expr::Path(p) = &*c.func else { return None };
        if p.qself.is_some() || !may_be_helper(&p.path) {
            return None;
        }
        let Some((helper, callees)) = helpers::current().get(&p.path) else {
            helpers::note_unknown(&p.path);
            return None;
        };
        let item = &helper.item;
        let name = ident_name(&item.sig.ident);
        let shown = p.path.to_token_stream().to_string().replace(' ', "");
        let args: Vec<Option<Var>> = c.args.iter().map(|a| self.lower_expr(a)).collect();
        if self.inlining.contains(&name) {
            let chain = [self.inlining.as_slice(), &[name.clone()]].concat().join(" → ");
            self.errors.spanned(
                &c.func,
                format!("recursive helpers ({chain}): helpers are inlined at each call, so recursion is not supported"),
            );
            return Some(None);
        }
        let params: Vec<&syn::PatType> = item
            .sig
            .inputs
            .iter()
            .filter_map(|a| match a {
                syn::FnArg::Typed(t) => Some(t),
                syn::FnArg::Receiver(_) => None,
            })
            .collect();
        if params.len() != args.len() {
            let names: Vec<String> = params
                .iter()
                .map(|p| p.pat.to_token_stream().to_string())
                .collect();
            self.errors.at(
                c.paren_token.span.join(),
                format!(
                    "`{shown}` takes {} argument{} ({}) but {} {} given",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    names.join(", "),
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" },
                ),
            );
            return Some(None);
        }
        let args: Vec<Var> = args.into_iter().collect::<Option<_>>()?;
        let mut bound = Vec::new();
        for ((param, arg), expr) in params.iter().zip(&args).zip(&c.args) {
            let syn::Pat::Ident(pi) = &*param.pat else {
                // The helper's own expansion reports its parameter patterns.
                return Some(None);
            };
            let pname = ident_name(&pi.ident);
            let Ok(ty) = param_ty(&param.ty) else {
                return Some(None);
            };
            let (dtype, rank) = (self.f.dtype(*arg), self.f.shape(*arg).rank());
            let float_ok = !ty.dtype().is_float() || !dtype.is_float() || ty.dtype() == self.dtype;
            if !float_ok {
                self.errors.spanned(
                    expr,
                    format!(
                        "mixed float types: `{shown}` takes `{pname}` as {} but this function computes in {}",
                        ty.dtype(),
                        self.dtype
                    ),
                );
                return Some(None);
            }
            if ty.rank() != rank || ty.dtype().is_float() != dtype.is_float() {
                let pty = param.ty.to_token_stream().to_string().replace(' ', "");
                self.errors.spanned(
                    expr,
                    format!(
                        "`{shown}` takes `{pname}: {pty}` (rank {}), but this argument is {} of shape {}",
                        ty.rank(),
                        dtype,
                        self.f.shape(*arg)
                    ),
                );
                return Some(None);
            }
            bound.push((pname, *arg));
        }
        // The helper's body sees its parameters only, and its own helpers.
        let scopes = std::mem::replace(&mut self.scopes, vec![Vec::new()]);
        for (n, v) in bound {
            self.bind(n, Some(v));
        }
        let outer = helpers::swap_current(callees);
        self.inlining.push(name);
        let results = self.lower_body(&item.block);
        self.inlining.pop();
        helpers::swap_current(outer);
        self.scopes = scopes;
        let (outs, _) = results?;
        let declared = match &item.sig.output {
            syn::ReturnType::Type(_, ty) => return_tys(ty).ok().map(|(r, _)| r.len()),
            syn::ReturnType::Default => None,
        };
        if outs.len() != 1 || declared != Some(1) {
            self.errors.spanned(
                c,
                format!("`{shown}` returns {} values: a helper used in an expression returns one value", outs.len()),
            );
            return Some(None);
        }
        let _ = c.span();
        Some(Some(outs[0]))
    }
}
