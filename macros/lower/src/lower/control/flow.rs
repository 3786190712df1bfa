//! Control flow: blocks, `let mut` and assignment (SSA rebinding in the
//! scope that owns the variable), `if`/`else` and `match` whose branches
//! give values or assign variables (an `if` on a scalar becomes a cond,
//! `cond.rs`; an `if` on an array and a `match` are merged after the
//! branch by `merge_branches`), and early `return` inside `if` (rewritten
//! on the syntax, `if c { return a; } rest` → `if c { a } else { rest }`).

use crate::lower::{
    early_return, ident_name, is_compound_assign, strip_parens, BindKind, Lowerer, Scope,
};
use oxla_core::ops::elementwise::{BinaryOp, CmpOp};
use oxla_core::{DType, Op, Var};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Stmt};

/// What a block (or branch) must give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    /// Nothing: a statement (`if c { x += 1.0; }`).
    Unit,
    /// One value (an expression).
    One,
    /// The function's results: one value or a tuple.
    Many,
}

/// One side of a branch: the values it gives (`None` when they had
/// errors) and the bindings as they stand at its end.
#[derive(Clone)]
pub(crate) struct Branch {
    values: Option<Vec<Var>>,
    state: Vec<Scope>,
}

// ---- early return -------------------------------------------------------------

/// The statements of a function (or helper) body with each `return` at its
/// top level, or inside `if`/`else` branches that are statements of it,
/// turned into the value of the branch: `if c { return a; } rest` becomes
/// `if c { a } else { rest }` (the rest is copied into each branch that
/// falls through). Other `return`s are left for the lowering to report.
/// Without an early return, the statements themselves (copying a body
/// copied every expression in it, recursing once per level of nesting).
pub(crate) fn rewrite_returns(stmts: &[Stmt]) -> std::borrow::Cow<'_, [Stmt]> {
    for (i, s) in stmts.iter().enumerate() {
        match s {
            Stmt::Expr(Expr::Return(r), _) => {
                let mut out = stmts[..i].to_vec();
                match &r.expr {
                    Some(e) => out.push(Stmt::Expr((**e).clone(), None)),
                    // Reported as a `return` without a value.
                    None => out.push(Stmt::Expr(Expr::Return(r.clone()), None)),
                }
                return out.into();
            }
            Stmt::Expr(e @ Expr::If(x), _) if early_return(e).is_some() => {
                let mut out = stmts[..i].to_vec();
                out.push(Stmt::Expr(Expr::If(rewrite_if(x, &stmts[i + 1..])), None));
                return out.into();
            }
            Stmt::Expr(e @ (Expr::ForLoop(_) | Expr::While(_)), _) => {
                if let Some(out) =
                    crate::lower::control::loop_exits::rewrite_loop_returns(e, i, stmts)
                {
                    return out.into();
                }
            }
            _ => {}
        }
    }
    stmts.into()
}

/// `if` with the statements after it appended to each branch.
fn rewrite_if(x: &syn::ExprIf, rest: &[Stmt]) -> syn::ExprIf {
    let mut out = x.clone();
    out.then_branch = rewrite_branch(&x.then_branch.stmts, rest, x.then_branch.brace_token);
    let (else_token, other) = match &x.else_branch {
        Some((t, e)) => match &**e {
            Expr::Block(b) if b.label.is_none() => (
                *t,
                rewrite_branch(&b.block.stmts, rest, b.block.brace_token),
            ),
            e => (
                *t,
                rewrite_branch(&[Stmt::Expr(e.clone(), None)], rest, Default::default()),
            ),
        },
        None => (
            Default::default(),
            rewrite_branch(&[], rest, Default::default()),
        ),
    };
    out.else_branch = Some((
        else_token,
        Box::new(Expr::Block(syn::ExprBlock {
            attrs: Vec::new(),
            label: None,
            block: other,
        })),
    ));
    out
}

fn rewrite_branch(stmts: &[Stmt], rest: &[Stmt], brace: syn::token::Brace) -> syn::Block {
    let mut all = stmts.to_vec();
    if !rest.is_empty() {
        // A tail without `;` (a unit expression) becomes a statement.
        if let Some(Stmt::Expr(e, semi @ None)) = all.last_mut() {
            if !matches!(e, Expr::Return(_)) {
                *semi = Some(Default::default());
            }
        }
    }
    all.extend(rest.iter().cloned());
    syn::Block {
        brace_token: brace,
        stmts: rewrite_returns(&all).into_owned(),
    }
}

impl Lowerer<'_> {
    // ---- blocks ---------------------------------------------------------------

    /// A block in a scope of its own, giving what `want` asks.
    pub(crate) fn lower_block_as(&mut self, block: &syn::Block, want: Want) -> Option<Vec<Var>> {
        self.scopes.push(Vec::new());
        let n = block.stmts.len();
        let mut result = None;
        for (i, stmt) in block.stmts.iter().enumerate() {
            match stmt {
                Stmt::Expr(e, None) if i + 1 == n && want != Want::Unit => {
                    result = Some(self.lower_value(e, want))
                }
                s => self.lower_stmt(s),
            }
        }
        self.scopes.pop();
        if want == Want::Unit {
            return Some(Vec::new());
        }
        match result {
            Some(r) => r,
            None => {
                self.errors.at(
                    block.brace_token.span.close(),
                    "this block needs a value: end it with an expression (without `;`)",
                );
                None
            }
        }
    }

    /// An expression giving what `want` asks (`Unit`: as a statement).
    fn lower_value(&mut self, e: &Expr, want: Want) -> Option<Vec<Var>> {
        match want {
            Want::Unit => {
                self.lower_expr_stmt(e);
                Some(Vec::new())
            }
            Want::One => self.lower_expr(e).map(|v| vec![v]),
            Want::Many => self.lower_results(e).map(|(v, _)| v),
        }
    }

    // ---- if / else ------------------------------------------------------------

    /// `if`/`else` (and `else if` chains). On a scalar condition, a cond
    /// (`lower_cond`). On an array condition each branch is lowered from
    /// the bindings as they stand before the `if`, then the values and
    /// every variable assigned in either branch are merged
    /// (`merge_branches`). An `if` without `else` gives no value but may
    /// assign.
    pub(crate) fn lower_if_as(&mut self, i: &syn::ExprIf, want: Want) -> Option<Vec<Var>> {
        let pred = self.lower_condition(&i.cond);
        // A scalar condition: only the taken branch runs (`cond`).
        if let Some(p) = pred.filter(|p| self.f.shape(*p).is_scalar()) {
            return self.lower_cond(p, i, want);
        }
        let before = self.scopes.clone();
        let then = self.lower_block_as(&i.then_branch, want);
        let then = self.branch_end(then, &before);
        let other = self.lower_else(i, want);
        let other = self.branch_end(other, &before);
        let span = crate::lower::if_span(i);
        let merged = self.merge_branches(pred, then, other, span);
        self.scopes = merged.state;
        merged.values
    }

    /// The else branch of `i` (an `else if` chain, a block, or nothing).
    pub(crate) fn lower_else(&mut self, i: &syn::ExprIf, want: Want) -> Option<Vec<Var>> {
        match &i.else_branch {
            Some((_, e)) => match &**e {
                Expr::Block(b) if b.label.is_none() => self.lower_block_as(&b.block, want),
                Expr::If(x) => self.lower_if_as(x, want),
                e => self.lower_value(e, want),
            },
            None if want == Want::Unit => Some(Vec::new()),
            None => {
                self.errors.spanned(
                    i.if_token,
                    "`if` without `else` gives no value: write both branches (`if c { a } else { b }`), or assign in it (`if c { x = a; }`)",
                );
                None
            }
        }
    }

    /// The branch just lowered, with the bindings reset to `before`.
    fn branch_end(&mut self, values: Option<Vec<Var>>, before: &[Scope]) -> Branch {
        let state = std::mem::replace(&mut self.scopes, before.to_vec());
        Branch { values, state }
    }

    /// An `if` condition: a comparison or a bool value (scalar, or an array
    /// whose elements pick elementwise).
    fn lower_condition(&mut self, cond: &Expr) -> Option<Var> {
        let c = self.lower_expr(cond)?;
        if self.f.dtype(c) != DType::Bool {
            let ty = self.f.ty(c).to_string();
            self.errors.spanned(
                cond,
                format!("an `if` condition is a comparison (`<`, `<=`, `>`, `>=`, `==`, `!=`) or a bool, not {ty}"),
            );
            return None;
        }
        Some(c)
    }

    /// Where control flow joins after an `if` on an array condition or a
    /// `match` arm: `pred ? then : other` for the branches' values and for
    /// every variable whose value differs between them. Both sides are
    /// evaluated and a `select` picks (elementwise when `pred` is an
    /// array); `pred` is `None` when the condition had errors. (An `if` on
    /// a scalar is a cond instead, which runs only the taken side: see
    /// `cond.rs`.)
    pub(crate) fn merge_branches(
        &mut self,
        pred: Option<Var>,
        then: Branch,
        other: Branch,
        span: Span,
    ) -> Branch {
        let values = match (pred, then.values, other.values) {
            (Some(p), Some(a), Some(b)) if a.len() == b.len() => a
                .iter()
                .zip(&b)
                .map(|(a, b)| self.select(p, *a, *b, span))
                .collect(),
            (Some(_), Some(a), Some(b)) => {
                self.errors.at(
                    span,
                    format!(
                        "the branches give {} and {} values: both must give the same",
                        a.len(),
                        b.len()
                    ),
                );
                None
            }
            _ => None,
        };
        let mut state = then.state;
        for (si, scope) in state.iter_mut().enumerate() {
            for (bi, binding) in scope.iter_mut().enumerate() {
                let b = other.state[si][bi].var;
                if binding.var == b {
                    continue;
                }
                let before = self.scopes[si][bi].var;
                binding.var = match (pred, binding.var, b) {
                    (Some(p), Some(a), Some(b)) => self.select(p, a, b, span),
                    _ => None,
                };
                // An array condition picks elementwise: it cannot assign a
                // scalar variable.
                if let (Some(m), Some(v)) = (binding.var, before) {
                    if self.f.shape(m) != self.f.shape(v) {
                        let (name, from, to) = (
                            &binding.name,
                            self.f.ty(v).to_string(),
                            self.f.ty(m).to_string(),
                        );
                        self.errors.at(
                            span,
                            format!("`{name}` is {from}, but this `if` on an array condition picks elementwise, which would make it {to}: assign a whole array, or reduce the condition to one bool"),
                        );
                        binding.var = None;
                    }
                }
            }
        }
        Branch { values, state }
    }

    /// `p ? a : b` (the same value when both are).
    fn select(&mut self, p: Var, a: Var, b: Var, span: Span) -> Option<Var> {
        if a == b {
            return Some(a);
        }
        let mut vs = [p, a, b];
        self.coerce(&mut vs, span)?;
        self.push(Op::Select, &vs, span)
    }

    // ---- assignment -----------------------------------------------------------

    /// `x = e` (`op` is `None`) or `x op= e`: the variable's binding takes
    /// the new value, which must keep its dtype and shape.
    pub(crate) fn lower_assign(&mut self, target: &Expr, op: Option<&BinOp>, rhs: &Expr) {
        let site: &dyn quote::ToTokens = match op {
            Some(op) => op,
            None => target,
        };
        let id = match strip_parens(target) {
            Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
            _ => None,
        };
        if let Expr::Index(ix) = strip_parens(target) {
            self.lower_element_assign(ix, op, rhs);
            return;
        }
        let Some(id) = id else {
            let what = match strip_parens(target) {
                Expr::Unary(_) => {
                    "assigning through `*` is not supported: oxla functions have no references"
                }
                Expr::Field(_) => "assigning to a field is not supported",
                _ => "the left side of an assignment must be a `let mut` variable",
            };
            self.errors.spanned(target, what);
            self.lower_expr(rhs);
            return;
        };
        let name = ident_name(id);
        let Some((si, bi)) = self.assignable(id) else {
            self.lower_expr(rhs);
            return;
        };
        let old = self.scopes[si][bi].var;
        let new = match op {
            None => self.lower_expr(rhs),
            Some(op) => self.compound(id, old, op, rhs),
        };
        let new = match (old, new) {
            (Some(old), Some(new)) => self.keep_type(&name, old, new, site).then_some(new),
            _ => None,
        };
        self.scopes[si][bi].var = new;
    }

    /// Where the `let mut` variable `id` is bound, for an assignment to it
    /// or into it; else the error that says why it cannot be assigned.
    pub(crate) fn assignable(&mut self, id: &syn::Ident) -> Option<(usize, usize)> {
        let name = ident_name(id);
        let Some((si, bi)) = self.binding_at(&name) else {
            self.errors.spanned(
                id,
                format!("cannot find `{name}` in this oxla function: only parameters and `let` variables can be used"),
            );
            return None;
        };
        let refused = match self.scopes[si][bi].kind {
            BindKind::Param => Some(format!("cannot assign to immutable argument `{name}`: parameters are immutable; declare it `let mut {name} = {name};` first")),
            BindKind::Let => Some(format!("cannot assign twice to immutable variable `{name}`: declare it `let mut {name}`")),
            BindKind::Mut if si < self.assign_floor => Some(format!("cannot assign to `{name}` inside a closure: a closure here is a pure function of its arguments; assign outside it")),
            BindKind::Mut => None,
        };
        match refused {
            Some(msg) => {
                self.errors.spanned(id, msg);
                None
            }
            None => Some((si, bi)),
        }
    }

    /// `old op rhs` for `x op= rhs` (`id` is `x`).
    pub(crate) fn compound(
        &mut self,
        id: &syn::Ident,
        old: Option<Var>,
        op: &BinOp,
        rhs: &Expr,
    ) -> Option<Var> {
        // An integer variable: as `x op rhs`, with integer division and
        // remainder (the right side of an integer is never deep).
        if old.is_some_and(|v| {
            self.f.shape(v).is_scalar() && matches!(self.f.dtype(v), DType::I32 | DType::I64)
        }) {
            let span = op.span();
            let plain = match op {
                BinOp::AddAssign(_) => Some(BinOp::Add(syn::Token![+](span))),
                BinOp::SubAssign(_) => Some(BinOp::Sub(syn::Token![-](span))),
                BinOp::MulAssign(_) => Some(BinOp::Mul(syn::Token![*](span))),
                BinOp::DivAssign(_) => Some(BinOp::Div(syn::Token![/](span))),
                BinOp::RemAssign(_) => Some(BinOp::Rem(syn::Token![%](span))),
                _ => None,
            };
            if let Some(plain) = plain {
                let b = syn::ExprBinary {
                    attrs: Vec::new(),
                    left: Box::new(syn::parse_quote_spanned!(span=> #id)),
                    op: plain,
                    right: Box::new(rhs.clone()),
                };
                return self.lower_binary(&b);
            }
        }
        let bin = match op {
            BinOp::AddAssign(_) => Some(BinaryOp::Add),
            BinOp::SubAssign(_) => Some(BinaryOp::Sub),
            BinOp::MulAssign(_) => Some(BinaryOp::Mul),
            BinOp::DivAssign(_) => Some(BinaryOp::Div),
            _ => None,
        };
        let r = self.lower_expr(rhs);
        if let BinOp::RemAssign(_) = op {
            let mut vs = [old?, r?];
            let span = op.span();
            self.coerce(&mut vs, span)?;
            return self.float_rem(vs[0], vs[1], span);
        }
        let Some(bin) = bin else {
            let shown = quote::ToTokens::to_token_stream(op).to_string();
            self.errors.spanned(
                op,
                format!("unsupported compound assignment `{shown}`: supported are `+=`, `-=`, `*=`, `/=` and `%=`"),
            );
            return None;
        };
        debug_assert!(is_compound_assign(op));
        let mut vs = [old?, r?];
        let span = op.span();
        self.coerce(&mut vs, span)?;
        self.push(Op::Binary(bin), &vs, span)
    }

    /// Whether `new` has `old`'s dtype and shape (unifying symbolic sizes);
    /// else an error naming the variable and both types.
    pub(crate) fn keep_type(
        &mut self,
        name: &str,
        old: Var,
        new: Var,
        site: &dyn quote::ToTokens,
    ) -> bool {
        let (a, b) = (self.f.shape(old).clone(), self.f.shape(new).clone());
        let same_dtype = self.f.dtype(old) == self.f.dtype(new);
        let same_shape =
            a.rank() == b.rank() && a.0.iter().zip(&b.0).all(|(x, y)| self.unify(x, y));
        if same_dtype && same_shape {
            return true;
        }
        let (from, to) = (self.f.ty(old).to_string(), self.f.ty(new).to_string());
        self.errors.spanned(
            site,
            format!("mismatched types: `{name}` is {from} but this assigns {to}; an assignment keeps the variable's type (bind a new variable with `let` instead)"),
        );
        false
    }

    // ---- match ----------------------------------------------------------------

    /// `match n { 0 => a, 1 | 2 => b, 3..=9 => c, _ => d }` on an integer
    /// scalar: a chain of selects, the first matching arm winning. Arms are
    /// merged like `if` branches (values and assigned variables).
    pub(crate) fn lower_match(&mut self, m: &syn::ExprMatch, want: Want) -> Option<Vec<Var>> {
        let x = self.lower_expr(&m.expr);
        let (x, int) = match x {
            Some(v)
                if self.f.shape(v).is_scalar()
                    && matches!(self.f.dtype(v), DType::I32 | DType::I64) =>
            {
                let int = self.f.dtype(v);
                (self.as_float(v, m.expr.span()), Some(int))
            }
            Some(v) => {
                let ty = self.f.ty(v).to_string();
                self.errors.spanned(
                    &m.expr,
                    format!("`match` takes an integer scalar (an i32/i64/usize parameter, `x.len()`, `v as i64`), not {ty}; for floats use `if`"),
                );
                (None, None)
            }
            None => (None, None),
        };
        let before = self.scopes.clone();
        let mut arms: Vec<(Option<Intervals>, Branch)> = Vec::new();
        for arm in &m.arms {
            if let Some((if_token, _)) = &arm.guard {
                self.errors.spanned(
                    if_token,
                    "match guards (`pattern if cond =>`) are not supported: use literal patterns, `a | b`, ranges `a..=b` and `_`, and an `if` inside the arm",
                );
            }
            let pats = match &arm.guard {
                Some(_) => None,
                None => self.match_pattern(&arm.pat, int.unwrap_or(DType::I64)),
            };
            self.scopes.push(Vec::new());
            let values = self.lower_value(&arm.body, want);
            self.scopes.pop();
            let branch = self.branch_end(values, &before);
            arms.push((pats, branch));
        }
        let (min, max) = int_range(int.unwrap_or(DType::I64));
        if int.is_some() && arms.iter().all(|(p, _)| p.is_some()) {
            let mut covered: Vec<(i128, i128)> = arms
                .iter()
                .flat_map(|(p, _)| p.clone().unwrap_or_default())
                .collect();
            covered.sort();
            let mut next = min;
            for (lo, hi) in covered {
                if lo > next {
                    break;
                }
                next = next.max(hi.saturating_add(1));
            }
            if next <= max {
                let t = int.map_or("i64", |d| d.name());
                let shown = if next == min {
                    format!("{t}::MIN")
                } else {
                    next.to_string()
                };
                self.errors.at(
                    m.match_token.span,
                    format!("non-exhaustive patterns: `{shown}` (of type {t}) is not covered; add a `_ => …` arm"),
                );
            }
        }
        let Some(last) = arms.pop() else {
            self.errors
                .at(m.match_token.span, "a `match` needs at least one arm");
            return None;
        };
        // The last arm takes whatever no earlier arm matched.
        let mut acc = last.1;
        for (pats, branch) in arms.into_iter().rev() {
            let (Some(x), Some(pats)) = (x, pats) else {
                acc = self.merge_branches(None, branch, acc, m.span());
                continue;
            };
            for (lo, hi) in pats.into_iter().rev() {
                acc = self.merge_interval(x, (lo, hi), (min, max), &branch, acc, m.span());
            }
        }
        self.scopes = acc.state;
        acc.values
    }

    /// `lo <= x <= hi ? branch : other`, leaving out a comparison with a
    /// bound of the integer type.
    fn merge_interval(
        &mut self,
        x: Var,
        (lo, hi): (i128, i128),
        (min, max): (i128, i128),
        branch: &Branch,
        other: Branch,
        span: Span,
    ) -> Branch {
        if lo == hi {
            let p = self.compare(x, CmpOp::Eq, lo, span);
            return self.merge_branches(p, branch.clone(), other, span);
        }
        let inner = if hi < max {
            let p = self.compare(x, CmpOp::Le, hi, span);
            self.merge_branches(p, branch.clone(), other.clone(), span)
        } else {
            branch.clone()
        };
        if lo > min {
            let p = self.compare(x, CmpOp::Ge, lo, span);
            self.merge_branches(p, inner, other, span)
        } else {
            inner
        }
    }

    /// `k < 0` with an integer scalar or array `k` (a parameter, `x.len()`,
    /// labels) and an integer literal: both in the function's float type, as
    /// a `match` compares (the literal must be exact there); two integers:
    /// both in f64 (exact below 2^53).
    pub(crate) fn int_against_literal(
        &mut self,
        b: &syn::ExprBinary,
        l: Var,
        r: Var,
        span: Span,
    ) -> Option<(Var, Var)> {
        // Integer scalars and arrays (labels, `argmax`'s result).
        let int = |lw: &Self, v: Var| matches!(lw.f.dtype(v), DType::I32 | DType::I64);
        let int_lit = |e: &Expr| match strip_parens(e) {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(_),
                ..
            }) => true,
            Expr::Unary(u) => {
                matches!(u.op, syn::UnOp::Neg(_))
                    && matches!(
                        strip_parens(&u.expr),
                        Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Int(_),
                            ..
                        })
                    )
            }
            _ => false,
        };
        if int(self, l) && int(self, r) {
            // Two integers compare exactly in f64 (below 2^53).
            let wide =
                |lw: &mut Self, v: Var| lw.push(Op::Convert { dtype: DType::F64 }, &[v], span);
            return Some((wide(self, l)?, wide(self, r)?));
        }
        if int(self, l) && !int(self, r) && int_lit(&b.right) {
            let d = self.f.dtype(l);
            self.pattern_int(&b.right, d, false)?;
            return Some((self.as_float(l, span)?, r));
        }
        if int(self, r) && !int(self, l) && int_lit(&b.left) {
            let d = self.f.dtype(r);
            self.pattern_int(&b.left, d, false)?;
            return Some((l, self.as_float(r, span)?));
        }
        Some((l, r))
    }

    /// `x op k` on the float form of the scrutinee.
    fn compare(&mut self, x: Var, op: CmpOp, k: i128, span: Span) -> Option<Var> {
        let k = self.literal(k as f64);
        self.push(Op::Cmp(op), &[x, k], span)
    }

    /// The integer `x` in the function's float type, in which a `match`
    /// compares (`x.len()` is a size already held as a float).
    fn as_float(&mut self, x: Var, span: Span) -> Option<Var> {
        if let Some(n) = self.size_source(x) {
            return Some(n);
        }
        self.push(Op::Convert { dtype: self.dtype }, &[x], span)
    }

    /// A pattern as inclusive intervals of the integer type `int` (`_` is
    /// the whole type); `None` after an error.
    fn match_pattern(&mut self, pat: &syn::Pat, int: DType) -> Option<Intervals> {
        let (min, max) = int_range(int);
        match pat {
            syn::Pat::Wild(_) => Some(vec![(min, max)]),
            syn::Pat::Paren(p) => self.match_pattern(&p.pat, int),
            syn::Pat::Or(o) => {
                let mut out = Some(Vec::new());
                for case in &o.cases {
                    let c = self.match_pattern(case, int);
                    out = out.zip(c).map(|(mut a, c)| {
                        a.extend(c);
                        a
                    });
                }
                out
            }
            syn::Pat::Lit(l) => {
                let k = self.pattern_int(&Expr::Lit(l.clone()), int, false)?;
                Some(vec![(k, k)])
            }
            syn::Pat::Range(r) => {
                let lo = match &r.start {
                    Some(e) => self.pattern_int(e, int, true)?,
                    None => min,
                };
                let hi = match (&r.end, &r.limits) {
                    (Some(e), syn::RangeLimits::Closed(_)) => self.pattern_int(e, int, true)?,
                    (Some(e), syn::RangeLimits::HalfOpen(_)) => {
                        self.pattern_int(e, int, false)? - 1
                    }
                    (None, _) => max,
                };
                if lo > hi {
                    self.errors.spanned(pat, "this range pattern is empty");
                    return None;
                }
                Some(vec![(lo, hi)])
            }
            other => {
                self.errors.spanned(
                    other,
                    "unsupported pattern: a `match` arm takes integer literals, `a | b`, ranges `a..=b` and `_`",
                );
                None
            }
        }
    }

    /// An integer literal of a pattern (or `i32::MIN`, `i64::MAX`, …),
    /// which must fit `int` and compare exactly in the function's float
    /// type; a range's bound may be the type's least or greatest value,
    /// which is never compared (`bound`).
    fn pattern_int(&mut self, e: &Expr, int: DType, bound: bool) -> Option<i128> {
        let (neg, lit) = match strip_parens(e) {
            Expr::Unary(syn::ExprUnary {
                op: syn::UnOp::Neg(_),
                expr,
                ..
            }) => (true, strip_parens(expr)),
            e => (false, e),
        };
        let v = match lit {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => i
                .base10_parse::<i128>()
                .ok()
                .map(|v| if neg { -v } else { v }),
            Expr::Path(p) if !neg => {
                let segs = crate::lower::segment_names(&p.path);
                match segs
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .as_slice()
                {
                    ["i32", "MIN"] => Some(i32::MIN as i128),
                    ["i32", "MAX"] => Some(i32::MAX as i128),
                    ["i64", "MIN"] => Some(i64::MIN as i128),
                    ["i64", "MAX"] => Some(i64::MAX as i128),
                    _ => None,
                }
            }
            _ => None,
        };
        let Some(v) = v else {
            self.errors.spanned(
                e,
                "a pattern here is an integer literal, `i32::MIN`, `i64::MAX`, … (or a range of them)",
            );
            return None;
        };
        let (min, max) = int_range(int);
        if v < min || v > max {
            self.errors
                .spanned(e, format!("literal `{v}` out of range for {int}"));
            return None;
        }
        let exact: i128 = 1 << mantissa_bits(self.dtype);
        if v.abs() >= exact && !(bound && (v == min || v == max)) {
            self.errors.spanned(
                e,
                format!(
                    "`{v}` is too large: an integer is compared (in a `match`, or with a literal) in the function's float type {}, exact below {exact} in magnitude",
                    self.dtype
                ),
            );
            return None;
        }
        Some(v)
    }
}

/// Inclusive intervals of integers, what a pattern matches.
type Intervals = Vec<(i128, i128)>;

fn int_range(int: DType) -> (i128, i128) {
    match int {
        DType::I32 => (i32::MIN as i128, i32::MAX as i128),
        _ => (i64::MIN as i128, i64::MAX as i128),
    }
}

/// Bits of precision of a float type (integers below 2^bits are exact).
fn mantissa_bits(d: DType) -> u32 {
    match d {
        DType::F64 => 53,
        DType::F16 => 11,
        DType::BF16 => 8,
        _ => 24,
    }
}

/// The item with pairs of unary minus signs dropped (`- - x` is `x`,
/// exactly, for every value): syn's parser recurses once per sign, so a
/// few thousand of them overflowed the stack a proc macro shares with
/// rustc. A run of `-` keeps its first sign when that one is binary (it
/// follows an operand) and one more when the unary ones are odd in number;
/// a `-` taken for binary that was unary keeps the parity all the same.
pub(crate) fn fold_double_negation(ts: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    folded(ts.clone()).unwrap_or(ts)
}

/// `fold_double_negation`, or `None` when nothing changes (a group is
/// rebuilt only then: a rebuilt group's delimiters take the span of the
/// whole group, and errors point at a closing brace).
fn folded(ts: proc_macro2::TokenStream) -> Option<proc_macro2::TokenStream> {
    use proc_macro2::{Group, Punct, Spacing, TokenTree};
    let toks: Vec<TokenTree> = ts.into_iter().collect();
    // A minus sign (not the start of `->` or `-=`).
    let minus = |k: usize| match &toks[k] {
        TokenTree::Punct(p) if p.as_char() == '-' => {
            let next = toks.get(k + 1);
            !(p.spacing() == Spacing::Joint
                && matches!(next, Some(TokenTree::Punct(q)) if matches!(q.as_char(), '>' | '=')))
        }
        _ => false,
    };
    let mut out: Vec<TokenTree> = Vec::with_capacity(toks.len());
    let mut changed = false;
    let mut i = 0;
    while i < toks.len() {
        if !minus(i) {
            out.push(match &toks[i] {
                TokenTree::Group(g) => match folded(g.stream()) {
                    Some(inner) => {
                        changed = true;
                        let mut n = Group::new(g.delimiter(), inner);
                        n.set_span(g.span());
                        n.into()
                    }
                    None => g.clone().into(),
                },
                t => t.clone(),
            });
            i += 1;
            continue;
        }
        let mut j = i;
        while j < toks.len() && minus(j) {
            j += 1;
        }
        if j - i == 1 {
            out.push(toks[i].clone());
            i = j;
            continue;
        }
        // Unary unless it follows an operand (a name, a literal, a group,
        // `?`).
        let binary = match out.last() {
            None => false,
            Some(TokenTree::Punct(p)) => p.as_char() == '?',
            Some(_) => true,
        };
        let unary = j - i - usize::from(binary);
        let kept = usize::from(binary) + unary % 2;
        changed |= kept < j - i;
        for t in &toks[i..i + kept] {
            let mut p = Punct::new('-', Spacing::Alone);
            p.set_span(t.span());
            out.push(p.into());
        }
        i = j;
    }
    changed.then(|| out.into_iter().collect())
}
