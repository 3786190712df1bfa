//! A call of a function that another annotated function's expansion
//! generates — `loss_grad` of `#[grad(loss_grad)] fn loss`, a `#[vmap]`'d
//! kernel, a `#[jit]` function — inside an annotated function, as JAX's
//! `grad(loss)(params, batch)` inside a jit'd step.
//!
//! The callee's macro carries its whole item (attributes included) and the
//! helpers it calls; here its expansion's IR pipeline runs again (lower,
//! transform, simplify), and the generated function's IR is copied into the
//! caller: its size symbols renamed to fresh ones, then bound to the
//! arguments' dimensions (unifying the caller's where the callee fixes a
//! relation, as a helper's parameters would). The caller's transforms then
//! see one function: `grad` of a function that calls a gradient is a
//! Hessian-vector product, a loop calling `update` is one loop op.

use crate::lower::{IndexCheck, Lowerer};
use crate::resolve::helpers::{self, Helper, HelperTable};
use oxla_core::{Dim, Function, Var};
use quote::ToTokens;
use syn::spanned::Spanned;

impl Lowerer<'_> {
    /// The results of `c`, a call of the generated function `generated`
    /// whose item `helper` carries (as `lower_helper_values`).
    pub(crate) fn lower_generated_call(
        &mut self,
        c: &syn::ExprCall,
        helper: &Helper,
        callees: HelperTable,
        generated: &str,
    ) -> Option<Option<Vec<Var>>> {
        let shown = c.func.to_token_stream().to_string().replace(' ', "");
        if self.inlining.iter().any(|n| n == generated) {
            let chain = [self.inlining.as_slice(), &[generated.to_string()]]
                .concat()
                .join(" → ");
            self.errors.spanned(
                &c.func,
                format!("recursive calls ({chain}): a called function is inlined at each call, so recursion is not supported"),
            );
            return Some(None);
        }
        let (g, checks, consts) = match self.generated_ir(helper, callees, generated, &shown) {
            Ok(g) => g,
            Err(msg) => {
                self.errors.spanned(&c.func, msg);
                return Some(None);
            }
        };
        let args: Vec<Option<Var>> = c.args.iter().map(|a| self.lower_expr(a)).collect();
        // The constants the callee reads are its last parameters.
        let visible = g.params.len() - consts.len();
        if visible != args.len() {
            self.errors.at(
                c.paren_token.span.join(),
                format!(
                    "`{shown}` takes {} argument{} ({}) but {} {} given",
                    visible,
                    if visible == 1 { "" } else { "s" },
                    g.param_names[..visible].join(", "),
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" },
                ),
            );
            return Some(None);
        }
        let mut args = args.into_iter().collect::<Option<Vec<Var>>>()?;
        for name in &g.param_names[visible..] {
            let k = consts.iter().find(|k| k.param == *name)?;
            args.push(self.const_param(&k.path)?);
        }
        // The callee's collectives over axes it leaves free come along: an
        // axis no attribute of the caller binds is an error at the call.
        let func_span = crate::lower::vocab::arrays::strip(&c.func).span();
        for axis in crate::stack::unbound_axes(&g) {
            if !self.axis_spans.iter().any(|(n, _)| *n == axis) {
                self.axis_spans.push((axis, func_span));
            }
        }
        self.inlining.push(generated.to_string());
        let outs = self.inline_ir(c, &shown, g, &args, &checks);
        self.inlining.pop();
        Some(outs)
    }

    /// The IR of the generated function `generated` (the callee's expansion
    /// run again), with the index checks it makes of its parameters.
    fn generated_ir(
        &mut self,
        helper: &Helper,
        callees: HelperTable,
        generated: &str,
        shown: &str,
    ) -> Result<
        (
            Function,
            Vec<IndexCheck>,
            Vec<crate::lower::consts::ConstParam>,
        ),
        String,
    > {
        let mut item = helper.item.clone();
        let mut errors = crate::errors::Errors::new();
        let stack = crate::parse::attr::take_oxla_attrs(&mut item.attrs, &mut errors);
        let defined = item.sig.ident.to_string();
        let broken = || {
            format!("`{shown}` cannot be called: the definition of `{defined}` has errors (reported there)")
        };
        if !errors.is_empty() {
            return Err(broken());
        }
        // A function generic over its float type, at the caller's.
        if let Some(instance) = crate::generic::instantiate_helper(&item, self.dtype) {
            item = instance;
        }
        // A callee with parameter structs is flattened (its structs resolved
        // where it is defined): the call passes their leaves (the caller's
        // own flattening did) and binds its struct results by leaves (see
        // `tree::bind_struct_results`).
        let outer = helpers::swap_current(callees);
        let gens = match crate::tree::flatten_fn(&item, &stack) {
            crate::tree::Flattened::None => crate::stack::expand_stack(&item, &stack),
            crate::tree::Flattened::Flat(flat, e) if e.is_empty() => {
                crate::stack::expand_stack(&flat.item, &flat.stack)
            }
            _ => Err(crate::errors::Errors::new()),
        };
        helpers::swap_current(outer);
        let gens = gens.map_err(|_| broken())?;
        let gen = gens
            .into_iter()
            .find(|g| g.name == generated)
            .ok_or_else(broken)?;
        // A constant is read here when its path means the same thing here:
        // the callee is in this function's module of the same file.
        if let Some(k) = gen.consts.iter().find(|k| {
            !crate::resolve::site::in_callers_module(crate::lower::consts::path_span(&k.path))
        }) {
            let path = k.path.to_token_stream().to_string().replace(' ', "");
            return Err(format!(
                "`{shown}` reads the constant `{path}`, which means `{defined}`'s `{path}` where it is defined, in another module: a called function reads constants of its caller's module only; pass it as an argument"
            ));
        }
        let f = gen.function;
        let floats = f
            .params
            .iter()
            .chain(&f.outs)
            .map(|v| f.dtype(*v))
            .find(|d| d.is_float());
        if let Some(d) = floats.filter(|d| *d != self.dtype) {
            return Err(format!(
                "mixed float types: `{shown}` computes in {d} but this function computes in {}; make `{defined}` generic over its float type (`fn {defined}<T: oxla::Float>`) or use one type",
                self.dtype
            ));
        }
        Ok((f, gen.index_checks, gen.consts))
    }

    /// Copy `g` into the function being lowered, its parameters bound to
    /// `args`; its results.
    fn inline_ir(
        &mut self,
        c: &syn::ExprCall,
        shown: &str,
        mut g: Function,
        args: &[Var],
        checks: &[IndexCheck],
    ) -> Option<Vec<Var>> {
        // Fresh names first: the callee's `x_0` is not the caller's.
        let mut renames: Vec<(String, Dim)> = Vec::new();
        let mut fresh: Vec<String> = Vec::new();
        let tag = self.f.types.len();
        let mut base = Vec::new();
        for p in &g.params {
            for d in &g.shape(*p).0 {
                oxla_core::shape::derived::base_symbols(d, &mut base);
            }
        }
        base.sort();
        base.dedup();
        for s in base {
            let to = format!("{s}__at{tag}");
            crate::lower::substitute(&mut g, &s, &Dim::Sym(to.clone()));
            renames.push((s, Dim::Sym(to.clone())));
            fresh.push(to);
        }
        for (i, (p, a)) in g.params.clone().into_iter().zip(args).enumerate() {
            let pname = g.param_names[i].clone();
            // A constant: a scalar of this function's float type.
            let Some(expr) = c.args.iter().nth(i) else {
                continue;
            };
            // An integer literal passed for an integer scalar (`f(x, 2)`).
            let a = &match crate::lower::strip_parens(expr) {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(k),
                    ..
                }) if !g.dtype(p).is_float() && g.shape(p).is_scalar() => {
                    let Ok(k) = k.base10_parse::<i64>() else {
                        self.errors
                            .spanned(expr, format!("`{k}` does not fit in an i64"));
                        return None;
                    };
                    self.f.literal(k as f64, g.dtype(p))
                }
                _ => *a,
            };
            let (want, have) = (g.ty(p).clone(), self.f.ty(*a).clone());
            if want.dtype != have.dtype || want.shape.rank() != have.shape.rank() {
                self.errors.spanned(
                    expr,
                    format!("`{shown}` takes `{pname}` as {want}, but this argument is {have}"),
                );
                return None;
            }
            for axis in 0..want.shape.rank() {
                let dc = g.shape(p).0[axis].clone();
                let da = self.f.shape(*a).0[axis].clone();
                match &dc {
                    Dim::Sym(s) if fresh.contains(s) => {
                        crate::lower::substitute(&mut g, s, &da);
                        renames.push((s.clone(), da));
                        fresh.retain(|f| f != s);
                    }
                    _ => match self.unify_sub(&dc, &da) {
                        Some(Some((from, to))) => {
                            crate::lower::substitute(&mut g, &from, &to);
                            renames.push((from, to));
                        }
                        Some(None) => {}
                        None => {
                            self.errors.spanned(
                                expr,
                                format!(
                                    "`{shown}` takes `{pname}` as {}, but this argument is {}: axis {axis} is {dc} there and {da} here",
                                    g.ty(p),
                                    self.f.ty(*a)
                                ),
                            );
                            return None;
                        }
                    },
                }
            }
        }
        let mut map: Vec<Option<Var>> = vec![None; g.types.len()];
        for (p, a) in g.params.iter().zip(args) {
            map[p.index()] = Some(*a);
        }
        for e in g.eqns.iter() {
            let ins: Vec<Var> = e
                .ins
                .iter()
                .map(|v| map[v.index()].expect("operand defined before use"))
                .collect();
            match self.f.push_all(e.op.clone(), &ins) {
                Ok(outs) => {
                    for (o, n) in e.outs.iter().zip(outs) {
                        map[o.index()] = Some(n);
                    }
                }
                Err(err) => {
                    self.errors.spanned(
                        c,
                        format!(
                            "internal error in oxla: inlining `{shown}`: {} failed: {err}",
                            e.op
                        ),
                    );
                    return None;
                }
            }
        }
        // An index parameter of the callee checked at the call is checked at
        // this function's call when the argument is one of its parameters.
        for check in checks {
            let Some(i) = g.param_names.iter().position(|n| *n == check.param) else {
                continue;
            };
            let bound = renames.iter().fold(check.bound.clone(), |d, (from, to)| {
                oxla_core::shape::derived::rename(&d, from, to)
            });
            let picked = args.iter().find_map(|a| {
                let axis = self.f.shape(*a).0.iter().position(|d| *d == bound)?;
                Some((*a, axis))
            });
            if let Some((x, axis)) = picked {
                self.takes.push((args[i], x, axis));
            }
        }
        Some(
            g.outs
                .iter()
                .map(|o| map[o.index()].expect("result defined"))
                .collect(),
        )
    }
}
