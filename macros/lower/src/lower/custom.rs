//! A call of a helper with a custom derivative rule (`parse::custom`): the
//! helper's body and its rule functions, each lowered into a function of
//! its own with params typed as the call's arguments, carried by a
//! `custom_jvp_call` or `custom_vjp_call` op (`oxla_core::ops::control::
//! Custom`), so that every transform of the caller uses the rule.

use crate::lower::{ident_name, Lowerer};
use crate::parse::custom::{rule_marker, CustomRule, RuleKind};
use crate::resolve::helpers::HelperTable;
use oxla_core::ops::control;
use oxla_core::{Function, Type, Var};

/// The call being lowered: its syntax, the helper's name as written and as
/// an identifier, its item (at the caller's float type) and the helpers
/// its body and its rule may call.
pub(crate) struct CustomCall<'a> {
    pub(crate) call: &'a syn::ExprCall,
    pub(crate) shown: &'a str,
    pub(crate) name: &'a str,
    pub(crate) item: &'a syn::ItemFn,
    pub(crate) callees: &'a HelperTable,
}

impl Lowerer<'_> {
    /// The custom op for `call` on `args`: its results (`None` after an
    /// error, reported).
    pub(crate) fn lower_custom_call(
        &mut self,
        call: &CustomCall,
        rule: &CustomRule,
        args: &[Var],
    ) -> Option<Vec<Var>> {
        let arg_types: Vec<Type> = args.iter().map(|a| self.f.ty(*a).clone()).collect();
        let primal =
            self.lower_as_function(call, call.name, call.item, call.callees, &arg_types)?;
        let float_in: Vec<Type> = arg_types
            .iter()
            .filter(|t| t.dtype.is_float())
            .cloned()
            .collect();
        let float_out: Vec<Type> = primal
            .outs
            .iter()
            .map(|o| primal.ty(*o).clone())
            .filter(|t| t.dtype.is_float())
            .collect();
        self.inlining.push(rule_marker(call.name));
        let pushed = match rule.kind {
            RuleKind::Jvp => {
                let types = [arg_types.clone(), float_in].concat();
                let jvp = self.lower_rule(call, &rule.paths[0], &types);
                jvp.map(|jvp| control::push_custom_jvp(&mut self.f, args, primal, jvp))
            }
            RuleKind::Vjp => self
                .lower_rule(call, &rule.paths[0], &arg_types)
                .and_then(|fwd| {
                    let n = primal.outs.len();
                    let res: Vec<Type> = fwd.outs[n.min(fwd.outs.len())..]
                        .iter()
                        .map(|o| fwd.ty(*o).clone())
                        .collect();
                    let types = [res, float_out].concat();
                    let bwd = self.lower_rule(call, &rule.paths[1], &types)?;
                    Some(control::push_custom_vjp(
                        &mut self.f,
                        args,
                        primal,
                        fwd,
                        bwd,
                    ))
                }),
        };
        self.inlining.pop();
        match pushed? {
            Ok(outs) => Some(outs),
            Err(e) => {
                self.errors.spanned(
                    call.call,
                    format!(
                        "the custom rule of `{}` does not fit the function at this call: {e}",
                        call.shown
                    ),
                );
                None
            }
        }
    }

    /// The rule function at `path` (a helper `call`'s body may call)
    /// lowered with params of `types`.
    fn lower_rule(
        &mut self,
        call: &CustomCall,
        path: &syn::Path,
        types: &[Type],
    ) -> Option<Function> {
        let Some((helper, callees)) = call.callees.get(path) else {
            // The helper's own expansion resolved its rule; a table without
            // it (the build script's view of another crate) cannot call it.
            self.errors.spanned(
                call.call,
                format!(
                    "the custom rule `{}` of `{}` is not known here",
                    quote::ToTokens::to_token_stream(path)
                        .to_string()
                        .replace(' ', ""),
                    call.shown
                ),
            );
            return None;
        };
        let instance = crate::generic::instantiate_helper(&helper.item, self.dtype);
        let item = instance.as_ref().unwrap_or(&helper.item);
        let name = ident_name(&item.sig.ident);
        self.lower_as_function(call, &name, item, &callees, types)
    }

    /// The body of `item` lowered into a function of its own named `name`,
    /// its params of `types` (its results those of the body).
    fn lower_as_function(
        &mut self,
        call: &CustomCall,
        name: &str,
        item: &syn::ItemFn,
        callees: &HelperTable,
        types: &[Type],
    ) -> Option<Function> {
        let params: Vec<String> = item
            .sig
            .inputs
            .iter()
            .filter_map(|a| match a {
                syn::FnArg::Typed(t) => match &*t.pat {
                    syn::Pat::Ident(pi) => Some(ident_name(&pi.ident)),
                    _ => None,
                },
                syn::FnArg::Receiver(_) => None,
            })
            .collect();
        if params.len() != types.len() {
            self.errors.spanned(
                call.call,
                format!(
                    "`{name}` takes {} parameters, but as the custom rule of `{}` at this call it must take {}",
                    params.len(),
                    call.shown,
                    types.len()
                ),
            );
            return None;
        }
        let outer = std::mem::replace(&mut self.f, Function::new(name));
        let bound: Vec<(String, Var)> = params
            .into_iter()
            .zip(types)
            .map(|(p, t)| {
                let v = self.f.add_param(&p, t.clone());
                (p, v)
            })
            .collect();
        let outs = self.lower_bound_body(
            item,
            callees,
            name.to_string(),
            bound,
            call.call,
            call.shown,
        );
        let mut g = std::mem::replace(&mut self.f, outer);
        g.outs = outs?;
        Some(oxla_core::transforms::simplify(&g))
    }
}
