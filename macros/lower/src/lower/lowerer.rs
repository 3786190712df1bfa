//! The `Lowerer`: the function being built, the scopes of the names bound so
//! far, and the lowering of statements and expressions, which dispatches to
//! the operators, the calls and the vocabulary.

use super::function::ident_name;
use super::function::SUPPORTED_EXPRS;
use super::function::SUPPORTED_STMTS;
use super::syntax::early_return;
use super::syntax::expr_key;
use super::syntax::first_operand;
use super::syntax::fits;
use super::syntax::is_bare_call;
use super::syntax::is_compound_assign;
use super::syntax::last_operand;
use super::syntax::leading_span;
use super::syntax::out_of_range;
use super::syntax::path_name;
use super::syntax::spine_child;
use super::syntax::strip_parens;
use super::syntax::substitute;
use super::syntax::unsupported_expr;
use super::syntax::EARLY_RETURN;
use super::syntax::SPINE_MIN;
use crate::errors::Errors;
use crate::lower::consts::ConstParam;
use crate::lower::control::flow::Want;
use crate::parse::types::{elem_of, vec_of};
use oxla_core::ops::elementwise::{CmpOp, UnaryOp};
use oxla_core::{DType, Dim, Function, Op, Var};
use proc_macro2::Span;
use quote::ToTokens;
use syn::{Expr, Stmt};

pub(crate) struct Lowerer<'e> {
    pub(crate) f: Function,
    pub(crate) dtype: DType,
    /// Innermost last; each scope lists its bindings in order (later shadow
    /// earlier). An assignment to a `let mut` variable replaces its value
    /// in the scope that owns it (SSA underneath).
    pub(crate) scopes: Vec<Scope>,
    /// Scopes below this index belong outside the closure being inlined:
    /// its body may read them but not assign to them.
    pub(crate) assign_floor: usize,
    /// The helpers being inlined, outermost first (against recursion).
    pub(crate) inlining: Vec<String>,
    /// The closures bound by `let` so far, each with the bindings it
    /// captured (inlined at each call; see `inline.rs`).
    pub(crate) closures: Vec<crate::lower::inline::Closure>,
    pub(crate) errors: &'e mut Errors,
    /// Each `take`/`select`: the index array, the array picked from and
    /// the axis (see `IndexCheck`).
    pub(crate) takes: Vec<(Var, Var, usize)>,
    /// The constants read so far (see `consts`).
    pub(crate) consts: Vec<ConstParam>,
    /// The loops whose bodies are being lowered, outermost first (see `loops`).
    pub(crate) frames: Vec<crate::lower::control::loops::LoopFrame>,
    /// The span of each binary expression lowered so far, by address, built
    /// from its operands' (`Spanned::span` re-reads the whole subtree, which
    /// made a long sum quadratic).
    pub(super) spans: std::collections::HashMap<(usize, bool), Span>,
    /// The values of the nodes of a long spine lowered ahead of their
    /// parents, by address (see `lower_expr`).
    pub(super) prelowered: std::collections::HashMap<usize, Option<Var>>,
    /// While a scalar `if` is lowered: the `let mut` names each `if`
    /// inside it assigns, by address (see `cond::assigned_in`).
    pub(crate) assigned_in_ifs: Option<std::collections::HashMap<usize, Vec<String>>>,
    /// Each axis name a collective uses (`psum(x, i)`), with where it is
    /// first written: an axis no attribute binds is an error there (see
    /// `stack::check_bound_axes`).
    pub(crate) axis_spans: Vec<(String, Span)>,
}

/// The tuple result of a block: its values and the span of the expression.
pub(crate) type Results = (Vec<Var>, Span);

/// What a name is bound to: its current value (`None` when the value had
/// errors: its uses are not reported again) and how it was bound.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Binding {
    pub(crate) name: String,
    pub(crate) var: Option<Var>,
    pub(crate) kind: BindKind,
}

/// How a name was bound, which decides whether it may be assigned to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BindKind {
    /// A parameter (of the function, a helper or a closure).
    Param,
    /// `let x = …`.
    Let,
    /// `let mut x = …`.
    Mut,
}

pub(crate) type Scope = Vec<Binding>;

impl Lowerer<'_> {
    pub(crate) fn bind_as(&mut self, name: String, var: Option<Var>, kind: BindKind) {
        if let Some(s) = self.scopes.last_mut() {
            s.push(Binding { name, var, kind });
        }
    }

    /// `None` if unbound, `Some(None)` if bound to a value that had errors.
    fn lookup(&self, name: &str) -> Option<Option<Var>> {
        self.binding_at(name).map(|(s, b)| self.scopes[s][b].var)
    }

    /// Where `name` is bound: its scope's index and its index there.
    pub(crate) fn binding_at(&self, name: &str) -> Option<(usize, usize)> {
        self.scopes
            .iter()
            .enumerate()
            .rev()
            .find_map(|(si, s)| s.iter().rposition(|b| b.name == name).map(|bi| (si, bi)))
    }

    /// The function body: statements, then the result (a tail expression or
    /// a final `return e;`), which may be a tuple.
    pub(crate) fn lower_body(&mut self, block: &syn::Block) -> Option<Results> {
        // `if c { return a; } rest` becomes `if c { a } else { rest }`.
        let stmts = crate::lower::control::flow::rewrite_returns(&block.stmts);
        let n = stmts.len();
        let mut result = None;
        for (i, stmt) in stmts.iter().enumerate() {
            let last = i + 1 == n;
            match stmt {
                Stmt::Expr(Expr::Return(r), _) if last => match &r.expr {
                    Some(e) => result = Some(self.lower_results(e)),
                    None => self
                        .errors
                        .spanned(r, "`return` needs a value: the function's result"),
                },
                Stmt::Expr(e, None) if last => result = Some(self.lower_results(e)),
                s => self.lower_stmt(s),
            }
        }
        match result {
            Some(r) => r,
            None => {
                let span = block.brace_token.span.close();
                self.errors.at(
                    span,
                    "an oxla function must end with its result: a final expression (without `;`) or `return e;`",
                );
                None
            }
        }
    }

    pub(crate) fn lower_results(&mut self, e: &Expr) -> Option<Results> {
        match e {
            Expr::Tuple(t) => {
                let vs: Vec<Option<Var>> = t.elems.iter().map(|e| self.lower_expr(e)).collect();
                let vs = vs.into_iter().collect::<Option<Vec<_>>>();
                vs.map(|v| (v, self.span_of(e)))
            }
            Expr::Paren(p) => self.lower_results(&p.expr),
            Expr::Call(c) if is_bare_call(c, "meshgrid") => {
                let vs = self.meshgrid(c);
                vs.map(|v| (v, self.span_of(e)))
            }
            Expr::Call(c) if is_bare_call(c, "top_k") => {
                let vs = self.top_k(c);
                vs.map(|v| (v, self.span_of(e)))
            }
            Expr::Call(c) if is_bare_call(c, "slogdet") => {
                let vs = self.slogdet(c);
                vs.map(|v| (v, self.span_of(e)))
            }
            // A helper may return a tuple.
            Expr::Call(c) if self.is_known_helper_call(c) => {
                let vs = self.lower_helper_values(c).flatten();
                vs.map(|v| (v, self.span_of(e)))
            }
            // Branches (and blocks) may give the tuple of results.
            Expr::If(i) => {
                let vs = self.lower_if_as(i, Want::Many);
                vs.map(|v| (v, self.span_of(e)))
            }
            Expr::Match(m) => {
                let vs = self.lower_match(m, Want::Many);
                vs.map(|v| (v, self.span_of(e)))
            }
            Expr::Block(b) if b.label.is_none() => {
                let vs = self.lower_block_as(&b.block, Want::Many);
                vs.map(|v| (v, self.span_of(e)))
            }
            e => {
                let v = self.lower_expr(e);
                v.map(|v| (vec![v], self.span_of(e)))
            }
        }
    }

    pub(crate) fn lower_stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Local(local) => self.lower_let(local),
            Stmt::Macro(m) => self.errors.spanned(
                &m.mac,
                format!("macros are not supported in oxla functions: they must be pure (`{}!` is a macro)", path_name(&m.mac.path)),
            ),
            Stmt::Item(item) => self.errors.spanned(
                item,
                format!("unsupported statement: items cannot be declared inside an oxla function; {SUPPORTED_STMTS}"),
            ),
            Stmt::Expr(e, _) => self.lower_expr_stmt(e),
        }
    }

    /// An expression statement: an assignment, an `if` or `match` that
    /// assigns, a block; anything else is an error.
    pub(crate) fn lower_expr_stmt(&mut self, e: &Expr) {
        match e {
            Expr::Assign(a) => self.lower_assign(&a.left, None, &a.right),
            Expr::Binary(b) if is_compound_assign(&b.op) => {
                self.lower_assign(&b.left, Some(&b.op), &b.right)
            }
            Expr::If(i) => {
                self.lower_if_as(i, Want::Unit);
            }
            Expr::Match(m) => {
                self.lower_match(m, Want::Unit);
            }
            Expr::Block(b) if b.label.is_none() => {
                self.lower_block_as(&b.block, Want::Unit);
            }
            Expr::Paren(p) => self.lower_expr_stmt(&p.expr),
            Expr::MethodCall(m) if crate::lower::slice_assign_target(m).is_some() => {
                self.lower_slice_assign(m)
            }
            Expr::ForLoop(fl) => self.lower_for(fl),
            Expr::While(w) => self.lower_while(w),
            Expr::Return(r) => self.errors.spanned(r.return_token, EARLY_RETURN),
            e if early_return(e).is_some() => {
                let r = early_return(e).map(|r| r.return_token);
                self.errors.spanned(r, EARLY_RETURN);
            }
            Expr::Macro(_) => {
                // Reported by `lower_expr` with the macro's name.
                self.lower_expr(e);
            }
            e => {
                let what = match e {
                    Expr::Loop(_) => "`loop` is not supported: write `while cond { … }` (a loop ends through its condition)",
                    _ => "this expression's value is unused",
                };
                let msg = format!("unsupported statement: {what}; {SUPPORTED_STMTS}");
                self.error_at(e, msg);
            }
        }
    }

    fn lower_let(&mut self, local: &syn::Local) {
        if self.bind_closure(local) {
            return;
        }
        if let syn::Pat::Tuple(t) = &local.pat {
            return self.lower_let_tuple(t, local);
        }
        let (pat, ann) = match &local.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            p => (p, None),
        };
        let name = match pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                Some((ident_name(&pi.ident), pi.mutability.is_some()))
            }
            other => {
                self.errors.spanned(
                    other,
                    "unsupported `let` pattern: a plain name (`let y = …;`, `let mut y = …;`) or a tuple of them (`let (a, b) = f(x);`)",
                );
                None
            }
        };
        let Some(init) = &local.init else {
            self.errors.spanned(
                local,
                "`let` without a value is not supported: write `let y = …;`",
            );
            return;
        };
        if let Some((else_tok, _)) = &init.diverge {
            self.errors.spanned(
                else_tok,
                "`let … else` is not supported: write `let y = …;`",
            );
        }
        let v = self.lower_expr(&init.expr);
        if let (Some(v), Some(ann)) = (v, ann) {
            let shape_ok = match (elem_of(ann), vec_of(ann)) {
                (Some(d), _) => Some((d, false)),
                (None, Some(d)) => Some((d, true)),
                _ => None,
            };
            match shape_ok {
                None => self.errors.spanned(
                    ann,
                    "unsupported type annotation: write f32 or f64 (or i32, i64, bool) for a number, Vec<f32> or Vec<f64> for an array",
                ),
                Some((d, array)) => {
                    let actual = self.f.dtype(v);
                    if d.is_float() && d != self.dtype {
                        self.errors.spanned(ann, format!("mixed float types: this is {d} but the function uses {}", self.dtype));
                    } else if d != actual {
                        self.errors.spanned(ann, format!("type annotation does not match: the value holds {actual}, not {d}"));
                    } else if array != (self.f.shape(v).rank() > 0) {
                        let what = if array { "a scalar" } else { "an array" };
                        self.errors.spanned(ann, format!("type annotation does not match: the value is {what}"));
                    }
                }
            }
        }
        if let Some((name, mutable)) = name {
            self.closures.retain(|c| c.name != name);
            let kind = if mutable {
                BindKind::Mut
            } else {
                BindKind::Let
            };
            self.bind_as(name, v, kind);
        }
    }

    /// `let (a, mut b, _) = e;` where `e` gives that many values: a helper
    /// returning a tuple, a tuple, or branches giving tuples.
    fn lower_let_tuple(&mut self, t: &syn::PatTuple, local: &syn::Local) {
        let mut names = Vec::new();
        for p in &t.elems {
            match p {
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    let kind = match pi.mutability {
                        Some(_) => BindKind::Mut,
                        None => BindKind::Let,
                    };
                    names.push(Some((ident_name(&pi.ident), kind)));
                }
                syn::Pat::Wild(_) => names.push(None),
                other => {
                    self.errors.spanned(
                        other,
                        "unsupported pattern in a tuple `let`: each element is a name, `mut name` or `_`",
                    );
                    return;
                }
            }
        }
        let Some(init) = &local.init else {
            self.errors
                .spanned(local, "`let` without a value is not supported");
            return;
        };
        let values = self.lower_results(&init.expr);
        if let Some((vs, span)) = &values {
            if vs.len() != names.len() {
                self.errors.at(
                    *span,
                    format!(
                        "this gives {} values but the pattern binds {}",
                        vs.len(),
                        names.len()
                    ),
                );
            }
        }
        let values = values.filter(|(vs, _)| vs.len() == names.len());
        for (i, n) in names.into_iter().enumerate() {
            if let Some((name, kind)) = n {
                self.closures.retain(|c| c.name != name);
                let v = values.as_ref().map(|(vs, _)| vs[i]);
                self.bind_as(name, v, kind);
            }
        }
    }

    /// An error at `e`'s leading keyword (`for`, `unsafe`, …) if it has one,
    /// else spanning all of `e`.
    pub(crate) fn error_at(&mut self, e: &Expr, msg: String) {
        match leading_span(e) {
            Some(span) => self.errors.at(span, msg),
            None => self.errors.spanned(e, msg),
        }
    }

    pub(crate) fn push(&mut self, op: Op, ins: &[Var], span: Span) -> Option<Var> {
        match self.f.push(op, ins) {
            Ok(v) => Some(v),
            Err(e) => {
                let int = ins
                    .iter()
                    .any(|v| matches!(self.f.dtype(*v), DType::I32 | DType::I64));
                let hint = if int {
                    "; integer arrays are labels and indices: pick with them (`take_along_axis`), they do not take part in arithmetic"
                } else {
                    ""
                };
                self.errors.at(span, format!("type error: {e}{hint}"));
                None
            }
        }
    }

    pub(crate) fn literal(&mut self, value: f64) -> Var {
        self.f.literal(value, self.dtype)
    }

    pub(crate) fn lower_expr(&mut self, e: &Expr) -> Option<Var> {
        if let Some(v) = self.prelowered.remove(&expr_key(e)) {
            return v;
        }
        // A long spine (a sum of thousands of terms, nested parentheses,
        // a chain of `-` or of `.sin()`): lowered from its deepest node up,
        // each node finding its spine operand lowered already, so the
        // recursion stays shallow. A proc macro runs on rustc's thread and
        // stack: recursing once per term overflowed it.
        let mut spine = Vec::new();
        let mut at = e;
        while let Some(c) = spine_child(at) {
            if self.prelowered.contains_key(&expr_key(c)) {
                break;
            }
            spine.push(c);
            at = c;
        }
        if spine.len() < SPINE_MIN {
            return self.lower_expr_node(e);
        }
        for node in spine.iter().rev() {
            let v = self.lower_expr_node(node);
            self.prelowered.insert(expr_key(node), v);
        }
        let v = self.lower_expr_node(e);
        // Every node's value was taken by its parent; none stays behind.
        for node in &spine {
            self.prelowered.remove(&expr_key(node));
        }
        v
    }

    fn lower_expr_node(&mut self, e: &Expr) -> Option<Var> {
        match e {
            Expr::Lit(l) => self.lower_lit(&l.lit, false),
            Expr::Array(a) => self.lower_array_literal(a),
            Expr::Paren(p) => self.lower_expr(&p.expr),
            Expr::Group(g) => self.lower_expr(&g.expr),
            Expr::Path(p) => {
                if let Some((ty, value)) = crate::lower::inline::float_constant(&p.path) {
                    if ty != self.dtype.name() {
                        self.errors.spanned(p, format!("mixed float types: a `{ty}` constant in a function whose float type is {}", self.dtype));
                        return None;
                    }
                    return Some(self.literal(value));
                }
                let local = p.path.get_ident().filter(|_| p.qself.is_none());
                let bound = local.is_some_and(|id| self.lookup(&ident_name(id)).is_some());
                if !bound && crate::lower::consts::looks_like_const(p) {
                    return self.const_param(p);
                }
                let Some(id) = local else {
                    let shown = p.path.to_token_stream().to_string().replace(' ', "");
                    self.errors.spanned(p, format!("unsupported path `{shown}`: only parameters and `let` variables can be used; {SUPPORTED_EXPRS}"));
                    return None;
                };
                let name = ident_name(id);
                match self.lookup(&name) {
                    Some(v) => v,
                    None => {
                        self.errors.spanned(id, format!("cannot find `{name}` in this oxla function: only parameters and `let` variables can be used"));
                        None
                    }
                }
            }
            Expr::Unary(u) => match u.op {
                syn::UnOp::Neg(_) => {
                    // Fold `-literal` into the literal.
                    if let Expr::Lit(l) = strip_parens(&u.expr) {
                        return self.lower_lit(&l.lit, true);
                    }
                    let x = self.lower_expr(&u.expr)?;
                    let span = self.span_of(e);
                    self.push(Op::Unary(UnaryOp::Neg), &[x], span)
                }
                syn::UnOp::Not(_) => {
                    let x = self.lower_expr(&u.expr)?;
                    let span = self.span_of(e);
                    self.bool_operand(x, &u.expr)?;
                    // `!b`: `b` as 0 or 1, equal to 0.
                    self.logic(&[x], CmpOp::Lt, 0.5, span)
                }
                syn::UnOp::Deref(t) => {
                    self.errors.spanned(
                        t,
                        format!("dereferencing with `*` is not supported; {SUPPORTED_EXPRS}"),
                    );
                    None
                }
                _ => {
                    self.errors
                        .spanned(e, format!("unsupported operator; {SUPPORTED_EXPRS}"));
                    None
                }
            },
            Expr::Binary(b) => self.lower_binary(b),
            Expr::Cast(c) => {
                let x = self.lower_expr(&c.expr);
                if let Some(x) = x.filter(|x| !self.f.shape(*x).is_scalar()) {
                    let shape = self.f.shape(x).clone();
                    self.errors.spanned(
                        c,
                        format!("`as` casts a number, but this is an array of shape {shape}: cast its elements with `x.mapv(|v| v as T)`"),
                    );
                    return None;
                }
                let span = self.edge_span(e, true);
                self.lower_cast(x, &c.ty, c, span)
            }
            Expr::If(i) => self.lower_if_as(i, Want::One).map(|v| v[0]),
            Expr::Match(m) => self.lower_match(m, Want::One).map(|v| v[0]),
            Expr::Block(b) if b.label.is_none() => {
                self.lower_block_as(&b.block, Want::One).map(|v| v[0])
            }
            Expr::MethodCall(m) => self.lower_method(m),
            // `&x` (as in `x.dot(&w)`): values are immutable, so a shared
            // reference is the value itself.
            Expr::Reference(r) if r.mutability.is_none() => self.lower_expr(&r.expr),
            Expr::Call(c) => self.lower_call(c),
            Expr::Index(i) => match self.lower_shape_index(i) {
                Some(v) => v,
                None => self.lower_index(i),
            },
            Expr::Macro(m) => {
                if let Some(v) = self.lower_slicing_macro(m) {
                    return v;
                }
                self.errors.spanned(
                    &m.mac,
                    format!("macros are not supported in oxla functions: they must be pure (`{}!` is a macro)", path_name(&m.mac.path)),
                );
                None
            }
            Expr::Tuple(t) => {
                self.errors.spanned(
                    t,
                    "a tuple is only supported as the function's result (its final expression)",
                );
                None
            }
            other => {
                self.error_at(other, unsupported_expr(other));
                None
            }
        }
    }

    fn lower_lit(&mut self, lit: &syn::Lit, negate: bool) -> Option<Var> {
        let sign = if negate { -1.0 } else { 1.0 };
        match lit {
            // A bool constant: a comparison of two constants.
            syn::Lit::Bool(b) if !negate => {
                let (zero, one) = (self.literal(0.0), self.literal(1.0));
                let op = if b.value { CmpOp::Lt } else { CmpOp::Gt };
                self.push(Op::Cmp(op), &[zero, one], b.span)
            }
            syn::Lit::Float(f) => {
                let suffix = f.suffix();
                if !suffix.is_empty() {
                    let want = self.dtype.name();
                    if suffix != want {
                        self.errors.spanned(f, format!("literal suffix `{suffix}` does not match the function's float type {want}"));
                        return None;
                    }
                }
                match f.base10_parse::<f64>() {
                    Ok(v) if !fits(v, self.dtype) => {
                        self.errors
                            .spanned(f, out_of_range(f.base10_digits(), self.dtype));
                        None
                    }
                    Ok(v) => Some(self.literal(sign * v)),
                    Err(err) => {
                        self.errors.push(err);
                        None
                    }
                }
            }
            syn::Lit::Int(i) => {
                let suffix = i.suffix();
                if !suffix.is_empty() && suffix != self.dtype.name() {
                    self.errors.spanned(
                        i,
                        format!("integer literal suffix `{suffix}` is not supported: integer literals become {} (write `{}`)", self.dtype, i.base10_digits()),
                    );
                    return None;
                }
                // Through f64, which every integer literal's digits parse as.
                match i.base10_digits().parse::<f64>() {
                    Ok(v) if !fits(v, self.dtype) => {
                        self.errors
                            .spanned(i, out_of_range(i.base10_digits(), self.dtype));
                        None
                    }
                    Ok(v) => Some(self.literal(sign * v)),
                    Err(err) => {
                        self.errors
                            .spanned(i, format!("bad integer literal: {err}"));
                        None
                    }
                }
            }
            other => {
                self.errors.spanned(
                    other,
                    "unsupported literal: float, integer and bool literals are supported",
                );
                None
            }
        }
    }

    /// `e.span()` (its first token joined with its last, where the compiler
    /// can join spans), in time linear in the size of the whole expression
    /// and without recursion: `Spanned::span` prints the expression to
    /// tokens (a long sum, a chain of methods or nested `if`s became
    /// quadratic) and recurses once per level.
    pub(crate) fn span_of(&mut self, e: &Expr) -> Span {
        let first = self.edge_span(e, true);
        let last = self.edge_span(e, false);
        first.join(last).unwrap_or(first)
    }

    /// The span of the first (or last) token of `e`, walking down the
    /// leftmost (rightmost) operands; remembered for every node walked.
    pub(super) fn edge_span(&mut self, e: &Expr, first: bool) -> Span {
        let mut walked = Vec::new();
        let mut at = e;
        let span = loop {
            let key = (expr_key(at), first);
            if let Some(s) = self.spans.get(&key) {
                break *s;
            }
            walked.push(key);
            let next = if first {
                first_operand(at)
            } else {
                last_operand(at)
            };
            match next {
                Ok(n) => at = n,
                Err(s) => break s,
            }
        };
        for k in walked {
            self.spans.insert(k, span);
        }
        span
    }

    /// The span of a method call, as `span_of` gives it.
    pub(crate) fn method_span(&mut self, m: &syn::ExprMethodCall) -> Span {
        let first = self.edge_span(&m.receiver, true);
        first.join(m.paren_token.span.close()).unwrap_or(first)
    }

    /// Bring `vs` to one shape, broadcasting as numpy does (see
    /// `vocab::broadcast_all`).
    pub(crate) fn coerce(&mut self, vs: &mut [Var], span: Span) -> Option<()> {
        self.broadcast_all(vs, span)
    }

    /// Make two dimensions equal by substituting a symbol everywhere in the
    /// function; `false` when both are different constants.
    pub(crate) fn unify(&mut self, a: &Dim, b: &Dim) -> bool {
        self.unify_sub(a, b).is_some()
    }

    /// `unify`, returning the substitution it made (`Some(None)`: none was
    /// needed; `None`: the dimensions cannot be made equal).
    pub(crate) fn unify_sub(&mut self, a: &Dim, b: &Dim) -> Option<Option<(String, Dim)>> {
        if a == b {
            return Some(None);
        }
        let derived =
            |d: &Dim| matches!(d, Dim::Sym(s) if oxla_core::shape::derived::is_derived(s));
        let (from, to) = match (a, b) {
            // A derived size (a slice's length, a concatenation's) is never
            // replaced: its definition checks the bounds at the call. A base
            // symbol is replaced by it, so the call checks that argument
            // against it; two different derived sizes, or a derived one and
            // a constant, cannot be unified statically.
            _ if derived(a) && derived(b) => return None,
            (Dim::Const(_), _) | (_, Dim::Const(_)) if derived(a) || derived(b) => return None,
            (Dim::Sym(_), Dim::Sym(y)) if derived(a) => (y.clone(), a.clone()),
            (Dim::Sym(x), Dim::Sym(_)) if derived(b) => (x.clone(), b.clone()),
            // Keep the symbol of the earlier parameter.
            (Dim::Sym(x), Dim::Sym(y)) if self.symbol_rank(x) < self.symbol_rank(y) => {
                (y.clone(), a.clone())
            }
            (Dim::Sym(x), Dim::Sym(_)) => (x.clone(), b.clone()),
            (_, Dim::Sym(s)) => (s.clone(), a.clone()),
            (Dim::Sym(s), _) => (s.clone(), b.clone()),
            _ => return None,
        };
        substitute(&mut self.f, &from, &to);
        self.substitute_in_frames(&from, &to);
        Some(Some((from, to)))
    }

    /// The index of the first parameter whose shape names `sym`.
    fn symbol_rank(&self, sym: &str) -> usize {
        let f = &self.f;
        f.params
            .iter()
            .position(|p| f.shape(*p).symbols().any(|s| s == sym))
            .unwrap_or(usize::MAX)
    }
}
