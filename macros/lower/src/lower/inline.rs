//! A call of an `#[oxla::func]` helper, lowered inline: the helper's body,
//! its parameters bound to the argument values, in a scope of its own.

use crate::lower::{ident_name, return_tys, BindKind, Lowerer, Scope};
use crate::parse::types::param_ty;
use crate::resolve::helpers::{self, may_be_helper};
use oxla_core::Var;
use quote::ToTokens;
use syn::Expr;

impl Lowerer<'_> {
    /// `Some` when `c` calls a path that may name a helper: its value when
    /// the helper is known, else `None` after noting the call (the expansion
    /// then asks the helper's macro for it) and reporting it as unknown.
    pub(crate) fn lower_helper_call(&mut self, c: &syn::ExprCall) -> Option<Option<Var>> {
        let outs = self.lower_helper_values(c)?;
        let Some(outs) = outs else {
            return Some(None);
        };
        if outs.len() != 1 {
            let shown = c.func.to_token_stream().to_string().replace(' ', "");
            self.errors.spanned(
                c,
                format!(
                    "`{shown}` returns {} values: bind them with `let (a, b) = {shown}(…);`, or return them as the function's result",
                    outs.len()
                ),
            );
            return Some(None);
        }
        Some(Some(outs[0]))
    }

    /// Whether `c` calls a helper known now (its results can be bound by a
    /// tuple pattern).
    pub(crate) fn is_known_helper_call(&self, c: &syn::ExprCall) -> bool {
        matches!(&*c.func, Expr::Path(p) if p.qself.is_none()
            && may_be_helper(&p.path)
            && helpers::current().get(&p.path).is_some())
    }

    /// A helper call's results (one per element of a tuple result), as
    /// `lower_helper_call`.
    pub(crate) fn lower_helper_values(&mut self, c: &syn::ExprCall) -> Option<Option<Vec<Var>>> {
        let Expr::Path(p) = &*c.func else { return None };
        if p.qself.is_some() || !may_be_helper(&p.path) {
            return None;
        }
        let Some((helper, callees)) = helpers::current().get(&p.path) else {
            helpers::note_unknown(&p.path);
            return None;
        };
        if let Some(generated) = helper.generated.clone() {
            return self.lower_generated_call(c, &helper, callees, &generated);
        }
        // A generic helper at this function's float type.
        let instance = crate::generic::instantiate_helper(&helper.item, self.dtype);
        let helper_item = instance.as_ref().unwrap_or(&helper.item);
        // A helper taking parameter structs takes their leaves (the call's
        // struct arguments were flattened alike).
        let flat = crate::tree::flatten_helper(helper_item, &callees);
        let item = flat.as_ref().unwrap_or(helper_item);
        let name = ident_name(&item.sig.ident);
        let shown = p.path.to_token_stream().to_string().replace(' ', "");
        let args: Vec<Option<Var>> = c.args.iter().map(|a| self.lower_expr(a)).collect();
        if self.inlining.contains(&name) {
            let chain = [self.inlining.as_slice(), std::slice::from_ref(&name)]
                .concat()
                .join(" → ");
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
        // A failed argument or body is reported where it failed; `None`
        // here would mean "not a helper".
        let Some(args) = args.into_iter().collect::<Option<Vec<Var>>>() else {
            return Some(None);
        };
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
            // An integer literal passed for an integer parameter (`f(x, 2)`).
            let int_literal = match crate::lower::strip_parens(expr) {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(i),
                    ..
                }) => i.base10_parse::<i64>().ok(),
                _ => None,
            };
            let arg = &match int_literal {
                Some(k) if !ty.dtype().is_float() && ty.rank() == 0 => {
                    self.f.literal(k as f64, ty.dtype())
                }
                _ => *arg,
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
        // A helper with a custom derivative rule is an op carrying its
        // body and its rule, except inside its own rule (a rule calling
        // its function means the function itself, inlined).
        if let Some(rule) = crate::parse::custom::rule_of(&helper.item) {
            if !self
                .inlining
                .contains(&crate::parse::custom::rule_marker(&name))
            {
                let args: Vec<Var> = bound.iter().map(|b| b.1).collect();
                let call = crate::lower::custom::CustomCall {
                    call: c,
                    shown: &shown,
                    name: &name,
                    item,
                    callees: &callees,
                };
                return Some(self.lower_custom_call(&call, &rule, &args));
            }
        }
        Some(self.lower_bound_body(item, &callees, name, bound, c, &shown))
    }

    /// A helper's body lowered where it is called, its parameters bound by
    /// `bound` (name, value): its results (`None` after an error).
    pub(crate) fn lower_bound_body(
        &mut self,
        item: &syn::ItemFn,
        callees: &crate::resolve::helpers::HelperTable,
        name: String,
        bound: Vec<(String, Var)>,
        c: &syn::ExprCall,
        shown: &str,
    ) -> Option<Vec<Var>> {
        // The helper's body sees its parameters only, and its own helpers.
        let scopes = std::mem::replace(&mut self.scopes, vec![Vec::new()]);
        let floor = std::mem::replace(&mut self.assign_floor, 0);
        for (n, v) in bound {
            self.bind_as(n, Some(v), BindKind::Param);
        }
        let outer = helpers::swap_current(callees.clone());
        let closures = std::mem::take(&mut self.closures);
        self.inlining.push(name);
        let reported = self.errors.len();
        let results = self.lower_body(&item.block);
        self.inlining.pop();
        if self.errors.len() > reported {
            // What the helper's own expansion reports (its body lowered for
            // itself) is not said again for its inlined copy.
            if let Err(own) = crate::lower::lower_fn(item) {
                let own = own.messages();
                self.errors
                    .retain_after(reported, |e| !own.contains(&e.to_string()));
            }
        }
        self.closures = closures;
        helpers::swap_current(outer);
        self.scopes = scopes;
        self.assign_floor = floor;
        let (outs, _) = results?;
        let declared = match &item.sig.output {
            syn::ReturnType::Type(_, ty) => return_tys(ty).ok().map(|(r, _)| r.len()),
            syn::ReturnType::Default => None,
        };
        if declared != Some(outs.len()) {
            self.errors.spanned(
                c,
                format!(
                    "`{shown}` gives {} values but declares {} results",
                    outs.len(),
                    declared.unwrap_or(0)
                ),
            );
            return None;
        }
        Some(outs)
    }
}

/// A closure bound by `let sq = |v| v * v;`: its parameters' names, its body
/// and the bindings in scope where it was written (what it captures).
#[derive(Clone)]
pub(crate) struct Closure {
    pub(crate) name: String,
    params: Vec<String>,
    body: Expr,
    captured: Vec<Scope>,
}

impl Closure {
    /// Replace each value the closure captured by `f(value, name)` (a loop
    /// body sees the enclosing function's values through its params).
    pub(crate) fn map_captured(&mut self, mut f: impl FnMut(Var, &str) -> Var) {
        for s in self.captured.iter_mut() {
            for b in s.iter_mut() {
                if let Some(v) = b.var {
                    b.var = Some(f(v, &b.name));
                }
            }
        }
    }
}

impl Lowerer<'_> {
    /// `let name = |params| body;`: recorded, not lowered (each call lowers
    /// the body). `false` when `local` binds something else.
    pub(crate) fn bind_closure(&mut self, local: &syn::Local) -> bool {
        let (syn::Pat::Ident(pi), Some(init)) = (&local.pat, &local.init) else {
            return false;
        };
        let Expr::Closure(c) = &*init.expr else {
            return false;
        };
        let mut params = Vec::new();
        for p in &c.inputs {
            let pat = match p {
                syn::Pat::Type(t) => &*t.pat,
                p => p,
            };
            match pat {
                syn::Pat::Ident(i)
                    if i.by_ref.is_none() && i.subpat.is_none() && i.mutability.is_none() =>
                {
                    params.push(ident_name(&i.ident))
                }
                other => {
                    self.errors.spanned(other, "unsupported closure parameter: parameters must be plain names, like `|v| v * v`");
                    return true;
                }
            }
        }
        if let Some(a) = &c.asyncness {
            self.errors.spanned(a, "`async` closures are not supported");
            return true;
        }
        let name = ident_name(&pi.ident);
        self.closures.retain(|k| k.name != name);
        self.closures.push(Closure {
            name,
            params,
            body: (*c.body).clone(),
            captured: self.scopes.clone(),
        });
        true
    }

    /// A call of a closure bound by `let`: its body, inlined with its
    /// parameters bound to the arguments, seeing what it captured.
    pub(crate) fn lower_closure_call(&mut self, c: &syn::ExprCall) -> Option<Option<Var>> {
        let Expr::Path(p) = &*c.func else { return None };
        let id = p.path.get_ident()?;
        let name = ident_name(id);
        let closure = self.closures.iter().rev().find(|k| k.name == name)?.clone();
        let args: Vec<Option<Var>> = c.args.iter().map(|a| self.lower_expr(a)).collect();
        if args.len() != closure.params.len() {
            self.errors.at(
                c.paren_token.span.join(),
                format!(
                    "the closure `{name}` takes {} argument{} but {} {} given",
                    closure.params.len(),
                    if closure.params.len() == 1 { "" } else { "s" },
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" },
                ),
            );
            return Some(None);
        }
        let args: Vec<Var> = args.into_iter().collect::<Option<_>>()?;
        let scopes = std::mem::replace(&mut self.scopes, closure.captured.clone());
        // The body may not assign to what it captured.
        let floor = std::mem::replace(&mut self.assign_floor, self.scopes.len());
        self.scopes.push(Vec::new());
        for (n, v) in closure.params.iter().zip(args) {
            self.bind_as(n.clone(), Some(v), BindKind::Param);
        }
        // Closures bound after this one are not visible in its body.
        let position = self
            .closures
            .iter()
            .rposition(|k| k.name == name)
            .unwrap_or(0);
        let later = self.closures.split_off(position);
        let v = self.lower_expr(&closure.body);
        self.closures.extend(later);
        self.scopes = scopes;
        self.assign_floor = floor;
        Some(v)
    }
}

/// `std::f64::consts::PI` (also `core::…`, `f32::…`, or `f64::consts::PI`
/// after `use std::f64;`): the float type and the value.
pub(crate) fn float_constant(path: &syn::Path) -> Option<(&'static str, f64)> {
    use std::f64::consts as c;
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let (prefix, [ty, consts, name]) = segs.split_at(segs.len().checked_sub(3)?) else {
        return None;
    };
    let prefix_ok = matches!(prefix, []) || matches!(prefix, [p] if p == "std" || p == "core");
    if !prefix_ok || consts != "consts" || path.segments.iter().any(|s| !s.arguments.is_none()) {
        return None;
    }
    let ty: &'static str = match ty.as_str() {
        "f64" => "f64",
        "f32" => "f32",
        _ => return None,
    };
    let value = match name.as_str() {
        "PI" => c::PI,
        "TAU" => c::TAU,
        "E" => c::E,
        "SQRT_2" => c::SQRT_2,
        "LN_2" => c::LN_2,
        "LN_10" => c::LN_10,
        "LOG2_E" => c::LOG2_E,
        "LOG10_E" => c::LOG10_E,
        "LOG2_10" => c::LOG2_10,
        "LOG10_2" => c::LOG10_2,
        "FRAC_PI_2" => c::FRAC_PI_2,
        "FRAC_PI_3" => c::FRAC_PI_3,
        "FRAC_PI_4" => c::FRAC_PI_4,
        "FRAC_PI_6" => c::FRAC_PI_6,
        "FRAC_PI_8" => c::FRAC_PI_8,
        "FRAC_1_PI" => c::FRAC_1_PI,
        "FRAC_2_PI" => c::FRAC_2_PI,
        "FRAC_2_SQRT_PI" => c::FRAC_2_SQRT_PI,
        "FRAC_1_SQRT_2" => c::FRAC_1_SQRT_2,
        _ => return None,
    };
    Some((ty, value))
}
