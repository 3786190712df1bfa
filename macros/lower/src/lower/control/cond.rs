//! `if` on a scalar condition, lowered to the IR's cond op
//! (`oxla_core::ops::control::Cond`, JAX's `lax.cond`): only the taken
//! branch runs, so a side that would be NaN or infinite where it is not
//! taken (`x.ln()` for `x <= 0`) reaches neither the value nor the
//! derivatives. An `if` on an array condition picks elementwise and stays a
//! `select` of both sides (`control::merge_branches`).
//!
//! Each branch is lowered into a function of its own inside a `LoopFrame`,
//! as a loop body is: every binding visible at the `if` is captured as a
//! constant param up front (the ones neither branch reads are dropped), the
//! then branch is lowered first and the else branch into a second function
//! with params for the same constants (as a `while` loop's condition and
//! body are). The cond's results are the branches' values, then the
//! `let mut` variables either branch assigns (found on the syntax), which
//! hold those results after the `if`.

use crate::lower::control::flow::Want;
use crate::lower::{BindKind, Lowerer};
use oxla_core::ops::control;
use oxla_core::{Shape, Var};
use proc_macro2::Span;
use syn::Expr;

impl Lowerer<'_> {
    /// `if pred { … } else { … }` with a scalar `pred`, as a cond.
    pub(crate) fn lower_cond(
        &mut self,
        pred: Var,
        i: &syn::ExprIf,
        want: Want,
    ) -> Option<Vec<Var>> {
        // The names every `if` inside this one assigns, found in one walk
        // (walking each nested `if` again at every level above it was
        // quadratic in the depth). The syntax is borrowed until the
        // outermost `if` is lowered, so its addresses stay unique.
        let outermost = self.assigned_in_ifs.is_none();
        if outermost {
            self.assigned_in_ifs = Some(assigned_in(i));
        }
        let r = self.lower_cond_inner(pred, i, want);
        if outermost {
            self.assigned_in_ifs = None;
        }
        r
    }

    fn lower_cond_inner(&mut self, pred: Var, i: &syn::ExprIf, want: Want) -> Option<Vec<Var>> {
        let span = crate::lower::if_span(i);
        // The variables either branch may assign: `let mut` bindings
        // visible here that the `if` assigns (outside closures).
        let mut assigned: Vec<(usize, usize)> = Vec::new();
        let names = self
            .assigned_in_ifs
            .as_ref()
            .and_then(|m| m.get(&(i as *const syn::ExprIf as usize)).cloned())
            .unwrap_or_else(|| crate::lower::control::loops::assigned_names_in_if(i));
        for name in names {
            if let Some((si, bi)) = self.binding_at(&name) {
                let b = &self.scopes[si][bi];
                if b.kind == BindKind::Mut && si >= self.assign_floor && b.var.is_some() {
                    assigned.push((si, bi));
                }
            }
        }
        let floor = self.assign_floor;
        self.enter_frame("cond_then", &[], None);
        // A branch may assign what the `if` may (not a closure's captures).
        self.assign_floor = floor;
        let then = self.lower_block_as(&i.then_branch, want);
        let then = self.branch_results(then, &assigned);
        self.switch_to_body(then.clone().unwrap_or_default(), &[], "cond_else");
        self.assign_floor = floor;
        let other = self.lower_else(i, want);
        let other = self.branch_results(other, &assigned);
        let n_values = match (&then, &other) {
            (Some(t), Some(e)) if t.len() == e.len() => Some(t.len() - assigned.len()),
            (Some(t), Some(e)) => {
                self.errors.at(
                    span,
                    format!(
                        "the branches give {} and {} values: both must give the same",
                        t.len() - assigned.len(),
                        e.len() - assigned.len()
                    ),
                );
                None
            }
            _ => None,
        };
        let other = match (n_values, then, other) {
            (Some(n), Some(t), Some(e)) => self.agree(&t[..n], e, span),
            _ => None,
        };
        let frame = self.exit_frame();
        let (Some(n), Some(other)) = (n_values, other) else {
            for (si, bi) in &assigned {
                self.scopes[*si][*bi].var = None;
            }
            return None;
        };
        let (else_fn, then_fn, consts) = frame.finish(other);
        let then_fn = then_fn.expect("a then branch");
        let results = match control::push_cond(&mut self.f, pred, &consts, then_fn, else_fn) {
            Ok(r) => r,
            Err(e) => {
                self.errors.at(
                    span,
                    format!("internal error in oxla: building a cond: {e}"),
                );
                for (si, bi) in &assigned {
                    self.scopes[*si][*bi].var = None;
                }
                return None;
            }
        };
        for ((si, bi), r) in assigned.iter().zip(&results[n..]) {
            self.scopes[*si][*bi].var = Some(*r);
        }
        Some(results[..n].to_vec())
    }

    /// A branch's values followed by the values of the `assigned` variables
    /// at its end (`None` after an error).
    fn branch_results(
        &self,
        values: Option<Vec<Var>>,
        assigned: &[(usize, usize)],
    ) -> Option<Vec<Var>> {
        let mut out = values?;
        for (si, bi) in assigned {
            out.push(self.scopes[*si][*bi].var?);
        }
        Some(out)
    }

    /// Make the else branch's results `other` (in `self.f`) agree in type
    /// with the then branch's values `then` (in the frame's first function):
    /// sizes unify, and a scalar value meeting an array is broadcast in its
    /// own branch (as `select` broadcasts). The assigned variables keep
    /// their types in both branches already. Returns `other`, updated.
    fn agree(&mut self, then: &[Var], mut other: Vec<Var>, span: Span) -> Option<Vec<Var>> {
        for (k, t) in then.iter().enumerate() {
            let t_ty = first(self).ty(*t).clone();
            let e_ty = self.f.ty(other[k]).clone();
            let mismatch = |lw: &mut Self, t: &oxla_core::Type, e: &oxla_core::Type| {
                lw.errors.at(
                    span,
                    format!("the branches give {t} and {e}: both must give the same type (a scalar may meet an array, which it broadcasts to)"),
                );
            };
            if t_ty.dtype != e_ty.dtype {
                mismatch(self, &t_ty, &e_ty);
                return None;
            }
            let (ts, es) = (t_ty.shape.clone(), e_ty.shape.clone());
            if ts.rank() == es.rank() {
                if !ts.0.iter().zip(&es.0).all(|(a, b)| self.unify(a, b)) {
                    mismatch(self, &t_ty, &e_ty);
                    return None;
                }
            } else if es.is_scalar() {
                // Re-read: a unification may have renamed a symbol.
                let shape: Shape = first(self).shape(*t).clone();
                other[k] = self.f.broadcast(other[k], shape, vec![]);
            } else if ts.is_scalar() {
                let shape = es.clone();
                let f = first(self);
                let b = f.broadcast(*t, shape, vec![]);
                let pos = f.outs.iter().position(|o| o == t).expect("a result");
                f.outs[pos] = b;
            } else {
                mismatch(self, &t_ty, &e_ty);
                return None;
            }
        }
        Some(other)
    }
}

/// The then branch being joined: the innermost frame's first function.
fn first<'a>(lw: &'a mut Lowerer<'_>) -> &'a mut oxla_core::Function {
    lw.frames
        .last_mut()
        .and_then(|fr| fr.first_mut())
        .expect("a then branch")
}

/// `loops::assigned_names_in_if` of `i` and of every `if` inside it (not
/// inside a closure), by address, in one walk.
fn assigned_in(i: &syn::ExprIf) -> std::collections::HashMap<usize, Vec<String>> {
    use syn::visit::Visit;
    struct Walk {
        open: Vec<Vec<String>>,
        done: std::collections::HashMap<usize, Vec<String>>,
    }
    impl Walk {
        fn assigned(&mut self, left: &Expr) {
            if let Some(id) = crate::lower::written_variable(left) {
                let name = crate::lower::ident_name(id);
                let top = self.open.last_mut().expect("inside an if");
                if !top.contains(&name) {
                    top.push(name);
                }
            }
        }
    }
    impl<'a> Visit<'a> for Walk {
        fn visit_expr_if(&mut self, i: &'a syn::ExprIf) {
            self.open.push(Vec::new());
            syn::visit::visit_expr_if(self, i);
            let names = self.open.pop().expect("pushed");
            if let Some(up) = self.open.last_mut() {
                for n in &names {
                    if !up.contains(n) {
                        up.push(n.clone());
                    }
                }
            }
            self.done.insert(i as *const syn::ExprIf as usize, names);
        }
        fn visit_expr_assign(&mut self, a: &'a syn::ExprAssign) {
            self.assigned(&a.left);
            syn::visit::visit_expr_assign(self, a);
        }
        fn visit_expr_binary(&mut self, b: &'a syn::ExprBinary) {
            if crate::lower::is_compound_assign(&b.op) {
                self.assigned(&b.left);
            }
            syn::visit::visit_expr_binary(self, b);
        }
        fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
            if let Some((x, _)) = crate::lower::slice_assign_target(m) {
                self.assigned(x);
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut w = Walk {
        open: Vec::new(),
        done: std::collections::HashMap::new(),
    };
    w.visit_expr_if(i);
    w.done
}
