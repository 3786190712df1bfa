//! Lowering: a plain Rust function (syn) → an oxla IR `Function`.
//!
//! Every unsupported construct is reported as a spanned error that says what
//! is supported instead; lowering carries on past errors (a failed expression
//! lowers to `None`) so that one expansion reports all of them.

use crate::consts::ConstParam;
use crate::control::Want;
use crate::errors::Errors;
use crate::parse::types::{elem_of, param_ty, result_ty, strip_group, vec_of, RustTy};
pub(crate) use crate::parse::types::{PURE, SUPPORTED_PARAMS, SUPPORTED_RETURNS};
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, Rounding, UnaryOp};
use oxla_core::{DType, Dim, Function, Op, Shape, Type, Var};
use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Stmt};

pub(crate) const SUPPORTED_METHODS: &str =
    "supported methods are exp, ln, sin, cos, tanh, sqrt, powi(<integer literal>), powf(e), max(e), \
     min(e), exp_m1, floor, ceil, round, round_ties_even, trunc, signum";
pub(crate) const SUPPORTED_STMTS: &str = "supported statements are `let` and `let mut` bindings, assignments (`x = e`, `x += e`, …), `if` and `match` that assign, `for i in a..b` and `while cond` loops, `return` inside `if`, and a final expression";
pub(crate) const SUPPORTED_EXPRS: &str = "supported expressions are float, integer and bool literals, parameters, \
     `let` variables and constants, `+ - * /`, unary `-`, comparisons, `!`, `&&`, `||`, parentheses, `if a < b { … } else { … }`, `match` on an integer, `x.len()`, the methods exp, ln, sin, \
     cos, tanh, sqrt, powi, powf, max, min, exp_m1, floor, ceil, round, round_ties_even, trunc, signum, the functions `sum(x)` and `dot(x, y)`, and a tuple as the result";

/// The declared results: their types, and whether they form a tuple.
pub(crate) fn return_tys(ty: &syn::Type) -> Result<(Vec<(RustTy, Span)>, bool), syn::Error> {
    if let syn::Type::Tuple(t) = strip_group(ty) {
        if t.elems.is_empty() {
            return Err(syn::Error::new_spanned(
                ty,
                format!("an oxla function must return a value: {SUPPORTED_RETURNS}"),
            ));
        }
        let mut out = Vec::new();
        for e in &t.elems {
            match result_ty(e) {
                Ok(r) => out.push((r, e.span())),
                Err(msg) => return Err(syn::Error::new_spanned(e, msg)),
            }
        }
        return Ok((out, true));
    }
    match result_ty(ty) {
        Ok(r) => Ok((vec![(r, ty.span())], false)),
        Err(msg) => Err(syn::Error::new_spanned(ty, msg)),
    }
}

/// The length symbol of slice parameter `name`.
pub fn length_symbol(name: &str) -> String {
    format!("n_{name}")
}

/// The symbol of axis `axis` of parameter `name`, of rank `rank`: `n_x` for
/// a vector (its length), `x_0`, `x_1`, … otherwise.
pub fn dim_symbol(name: &str, axis: usize, rank: usize) -> String {
    if rank == 1 {
        length_symbol(name)
    } else {
        format!("{name}_{axis}")
    }
}

/// The IR type of a parameter of Rust type `t` named `name`.
pub(crate) fn param_ir_type(name: &str, t: &RustTy, dtype: DType) -> Type {
    let dims = match t {
        RustTy::Fixed { dims, .. } => dims.iter().map(|d| Dim::Const(*d)).collect(),
        t => {
            let r = t.rank();
            (0..r).map(|a| Dim::sym(&dim_symbol(name, a, r))).collect()
        }
    };
    // Integer parameters keep their type; floats take the function's.
    let dtype = if t.dtype().is_float() {
        dtype
    } else {
        t.dtype()
    };
    Type::new(dtype, Shape(dims))
}

/// Lower `item` to an IR function named after it. All problems are reported
/// together, each at its span.
pub fn lower_fn(item: &syn::ItemFn) -> Result<Function, Errors> {
    lower_fn_checked(item).map(|(f, _)| f)
}

/// An integer parameter whose elements index an axis of size `bound`
/// (`take`, `select`): every compiled call checks each element against it
/// before any kernel runs, and fails naming the parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexCheck {
    pub param: String,
    pub bound: Dim,
}

/// `lower_fn`, with the index checks the call must make.
pub fn lower_fn_checked(item: &syn::ItemFn) -> Result<(Function, Vec<IndexCheck>), Errors> {
    lower_fn_full(item).map(|(f, checks, _)| (f, checks))
}

/// `lower_fn_checked`, with the constants the function reads (its hidden
/// parameters, see `consts`).
pub fn lower_fn_full(
    item: &syn::ItemFn,
) -> Result<(Function, Vec<IndexCheck>, Vec<ConstParam>), Errors> {
    let mut errors = Errors::new();
    let mut checks = Vec::new();
    let mut consts = Vec::new();
    let f = lower_into(item, &mut errors, &mut checks, &mut consts);
    match (f, errors.is_empty()) {
        (Some(f), true) => Ok((f, checks, consts)),
        _ => {
            if errors.is_empty() {
                errors.spanned(
                    &item.sig.ident,
                    "internal error: lowering failed without an error",
                );
            }
            Err(errors)
        }
    }
}

pub(crate) fn ident_name(id: &syn::Ident) -> String {
    let s = id.to_string();
    s.strip_prefix("r#").map(str::to_string).unwrap_or(s)
}

fn lower_into(
    item: &syn::ItemFn,
    errors: &mut Errors,
    checks: &mut Vec<IndexCheck>,
    consts: &mut Vec<ConstParam>,
) -> Option<Function> {
    let sig = &item.sig;
    if let Some(c) = &sig.constness {
        errors.spanned(
            c,
            "`const fn` is not supported: oxla functions are plain `fn`s",
        );
    }
    if let Some(a) = &sig.asyncness {
        errors.spanned(
            a,
            "`async fn` is not supported: oxla functions are plain `fn`s",
        );
    }
    if let Some(u) = &sig.unsafety {
        errors.spanned(u, format!("`unsafe fn` is not supported: {PURE}"));
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(
            abi,
            "`extern` functions are not supported: oxla functions are plain `fn`s",
        );
    }
    // Lifetimes (of views) are fine; type and const generics are not.
    let only_lifetimes = sig
        .generics
        .params
        .iter()
        .all(|p| matches!(p, syn::GenericParam::Lifetime(_)));
    if !only_lifetimes || sig.generics.where_clause.is_some() {
        errors.spanned(
            &sig.generics,
            "generic functions are supported over one float type only: `fn f<T: oxla::Float>(x: T) -> T` (T is f32 or f64), or use one concrete float type (f32, f64, f16 or bf16)",
        );
    }
    if let Some(v) = &sig.variadic {
        errors.spanned(
            v,
            format!("variadic functions are not supported; {SUPPORTED_PARAMS}"),
        );
    }

    // Parameter and result types, and the one float type.
    let mut floats: Vec<(DType, Span, String)> = Vec::new();
    let mut params: Vec<(String, RustTy, Span)> = Vec::new();
    let mut unbound: Vec<String> = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => errors.spanned(
                r,
                "methods are not supported: oxla functions are free functions (no `self`)",
            ),
            syn::FnArg::Typed(pt) => {
                let name = match &*pt.pat {
                    syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                        if let Some(m) = &pi.mutability {
                            errors.spanned(m, "`mut` parameters are not supported: declare a mutable copy in the body, `let mut x = x;`");
                        }
                        Some(ident_name(&pi.ident))
                    }
                    other => {
                        errors.spanned(other, "unsupported parameter pattern: parameters must be plain names, like `x: f32`");
                        None
                    }
                };
                match param_ty(&pt.ty) {
                    Ok(t) => {
                        if let Some(name) = name {
                            if t.dtype().is_float() {
                                floats.push((
                                    t.dtype(),
                                    pt.ty.span(),
                                    format!("parameter `{name}`"),
                                ));
                            }
                            params.push((name, t, pt.ty.span()));
                        }
                    }
                    Err(msg) if name.is_some() => {
                        errors.spanned(&pt.ty, msg);
                        // Uses of the parameter are not reported again.
                        unbound.push(name.unwrap_or_default());
                    }
                    Err(msg) => errors.spanned(&pt.ty, msg),
                }
            }
        }
    }
    let mut returns = None;
    match &sig.output {
        syn::ReturnType::Default => errors.spanned(
            &sig.ident,
            format!("an oxla function must return a value: {SUPPORTED_RETURNS}"),
        ),
        syn::ReturnType::Type(_, ty) => match return_tys(ty) {
            Ok((rs, tuple)) => {
                for (r, span) in rs.iter().filter(|(r, _)| r.dtype().is_float()) {
                    floats.push((r.dtype(), *span, "the return type".to_string()));
                }
                returns = Some((rs, tuple));
            }
            Err(e) => errors.push(e),
        },
    }
    let dtype = floats.first().map(|f| f.0).unwrap_or(DType::F32);
    if let Some((_, _, first)) = floats.first() {
        for (d, span, what) in &floats[1..] {
            if *d != dtype {
                errors.at(
                    *span,
                    format!(
                        "mixed float types: {what} is {d} but {first} is {dtype}; all parameters and results of an oxla function use one float type (f32, f64, f16 or bf16)"
                    ),
                );
            }
        }
    }

    let mut lw = Lowerer {
        f: Function::new(&ident_name(&sig.ident)),
        dtype,
        scopes: vec![Vec::new()],
        assign_floor: 0,
        frames: Vec::new(),
        inlining: Vec::new(),
        closures: Vec::new(),
        errors,
        takes: Vec::new(),
        consts: Vec::new(),
        spans: std::collections::HashMap::new(),
        prelowered: std::collections::HashMap::new(),
        assigned_in_ifs: None,
    };
    for (name, t, _) in &params {
        let v = lw.f.add_param(name, param_ir_type(name, t, dtype));
        lw.bind_as(name.clone(), Some(v), BindKind::Param);
    }
    for name in unbound {
        lw.bind_as(name, None, BindKind::Param);
    }
    let outs = lw.lower_body(&item.block);
    // Resolved now, after every unification renamed its symbols. An index
    // array computed in the body (not a parameter) is not checked: it picks
    // 0 when out of range, never reading outside `x`.
    for (idx, x, axis) in &lw.takes {
        if let Some(p) = lw.f.params.iter().position(|v| v == idx) {
            let c = IndexCheck {
                param: lw.f.param_names[p].clone(),
                bound: lw.f.shape(*x).0[*axis].clone(),
            };
            if !checks.contains(&c) {
                checks.push(c);
            }
        }
    }
    *consts = std::mem::take(&mut lw.consts);
    let mut f = lw.f;
    let (Some(outs), Some((rets, _))) = (outs, returns) else {
        return None;
    };
    // The results must match the declared return type.
    let (outs, tail_span) = outs;
    if outs.len() != rets.len() {
        errors.at(
            tail_span,
            format!(
                "this returns {} values but the declared return type has {}",
                outs.len(),
                rets.len()
            ),
        );
        return None;
    }
    for (v, (r, span)) in outs.iter().zip(&rets) {
        let shape = f.shape(*v).clone();
        let computed = f.dtype(*v);
        if r.dtype().is_float() != computed.is_float()
            || (!computed.is_float() && computed != r.dtype())
        {
            let declared = r.dtype();
            let want = if computed.is_float() {
                "a float".to_string()
            } else {
                format!("`{computed}`")
            };
            errors.at(*span, format!("the declared result holds {declared} but the function computes {computed} values here; declare {want}"));
            continue;
        }
        match (r, shape.rank()) {
            (r, rank) if r.rank() == rank => {}
            (RustTy::Scalar(_), _) => errors.at(
                *span,
                format!("the declared result is a scalar but the function computes an array of shape {shape} here; reduce it (`sum`, `mean`, …) or declare an array result"),
            ),
            (_, 0) => errors.at(
                *span,
                "the declared result is an array but the function computes a scalar here; declare a float result",
            ),
            (r, rank) => errors.at(
                *span,
                format!("the declared result has rank {} but the function computes an array of rank {rank} (shape {shape}) here", r.rank()),
            ),
        }
    }
    f.outs = outs;
    errors.is_empty().then_some(f)
}

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
    pub(crate) closures: Vec<crate::inline::Closure>,
    pub(crate) errors: &'e mut Errors,
    /// Each `take`/`select`: the index array, the array picked from and
    /// the axis (see `IndexCheck`).
    pub(crate) takes: Vec<(Var, Var, usize)>,
    /// The constants read so far (see `consts`).
    pub(crate) consts: Vec<ConstParam>,
    /// The loops whose bodies are being lowered, outermost first (see `loops`).
    pub(crate) frames: Vec<crate::loops::LoopFrame>,
    /// The span of each binary expression lowered so far, by address, built
    /// from its operands' (`Spanned::span` re-reads the whole subtree, which
    /// made a long sum quadratic).
    spans: std::collections::HashMap<(usize, bool), Span>,
    /// The values of the nodes of a long spine lowered ahead of their
    /// parents, by address (see `lower_expr`).
    prelowered: std::collections::HashMap<usize, Option<Var>>,
    /// While a scalar `if` is lowered: the `let mut` names each `if`
    /// inside it assigns, by address (see `cond::assigned_in`).
    pub(crate) assigned_in_ifs: Option<std::collections::HashMap<usize, Vec<String>>>,
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
        let stmts = crate::control::rewrite_returns(&block.stmts);
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
                if let Some((ty, value)) = crate::inline::float_constant(&p.path) {
                    if ty != self.dtype.name() {
                        self.errors.spanned(p, format!("mixed float types: a `{ty}` constant in a function whose float type is {}", self.dtype));
                        return None;
                    }
                    return Some(self.literal(value));
                }
                let local = p.path.get_ident().filter(|_| p.qself.is_none());
                let bound = local.is_some_and(|id| self.lookup(&ident_name(id)).is_some());
                if !bound && crate::consts::looks_like_const(p) {
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
    fn edge_span(&mut self, e: &Expr, first: bool) -> Span {
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

    pub(crate) fn lower_binary(&mut self, b: &syn::ExprBinary) -> Option<Var> {
        if let BinOp::And(_) | BinOp::Or(_) = b.op {
            // Both sides are computed (pure values: nothing to skip), as
            // 0 or 1: `a && b` is `a + b > 1.5`, `a || b` is `a + b > 0.5`.
            let l = self.lower_expr(&b.left);
            let r = self.lower_expr(&b.right);
            let span = self.binary_span(b);
            let (l, r) = (l?, r?);
            self.bool_operand(l, &b.left)?;
            self.bool_operand(r, &b.right)?;
            let at = if matches!(b.op, BinOp::And(_)) {
                1.5
            } else {
                0.5
            };
            return self.logic(&[l, r], CmpOp::Gt, at, span);
        }
        if let BinOp::Rem(_) = b.op {
            let l = self.lower_expr(&b.left);
            let r = self.lower_expr(&b.right);
            let span = self.binary_span(b);
            let (l, r) = (l?, r?);
            if let Some(v) = self.int_arithmetic(b, IntOp::Rem, l, r, span) {
                return v;
            }
            let mut vs = [l, r];
            self.coerce(&mut vs, span)?;
            return self.float_rem(vs[0], vs[1], span);
        }
        let op = match b.op {
            BinOp::Add(_) => BinaryOp::Add,
            BinOp::Sub(_) => BinaryOp::Sub,
            BinOp::Mul(_) => BinaryOp::Mul,
            BinOp::Div(_) => BinaryOp::Div,
            op if cmp_op(&op).is_some() => {
                // A comparison as a value: a bool (an array of them), to
                // return or to cast.
                let l = self.lower_expr(&b.left);
                let r = self.lower_expr(&b.right);
                let span = self.binary_span(b);
                let (l, r) = self.int_against_literal(b, l?, r?, span)?;
                let mut vs = [l, r];
                self.coerce(&mut vs, span)?;
                return self.push(Op::Cmp(cmp_op(&op)?), &vs, span);
            }
            op if is_compound_assign(&op) => {
                self.errors.spanned(
                    op,
                    "an assignment is a statement (`x += e;`), not a value: assign, then use `x`",
                );
                return None;
            }
            op => {
                let shown = op.to_token_stream().to_string();
                self.errors.spanned(op, format!("unsupported operator `{shown}`: supported operators are + - * /, the comparisons < <= > >= == != and, on bools, ! && ||"));
                return None;
            }
        };
        let l = self.lower_expr(&b.left);
        let r = self.lower_expr(&b.right);
        let span = self.binary_span(b);
        let (l, r) = (l?, r?);
        if let Some(v) = self.int_arithmetic(b, IntOp::Arith(op), l, r, span) {
            return v;
        }
        self.float_with_int(b, l, r)?;
        let mut vs = [l, r];
        self.coerce(&mut vs, span)?;
        self.push(Op::Binary(op), &vs, span)
    }

    /// Arithmetic of a float and an integer (`x.sum() / x.len()`), which
    /// Rust refuses too: an error at the operator naming the conversion.
    fn float_with_int(&mut self, b: &syn::ExprBinary, l: Var, r: Var) -> Option<()> {
        let int = |d: DType| matches!(d, DType::I32 | DType::I64);
        let (dl, dr) = (self.f.dtype(l), self.f.dtype(r));
        let (int_side, int_ty) = match (int(dl), int(dr)) {
            (true, false) if dr.is_float() => (&b.left, self.f.ty(l).clone()),
            (false, true) if dl.is_float() => (&b.right, self.f.ty(r).clone()),
            _ => return Some(()),
        };
        // An integer array is a label or index array: the op's own error.
        if !int_ty.shape.is_scalar() {
            return Some(());
        }
        let shown = int_side.to_token_stream().to_string();
        let op = b.op.to_token_stream().to_string();
        self.errors.spanned(
            &b.op,
            format!(
                "`{op}` of a float and an integer ({int_ty}): convert the integer, `({shown}) as {}`",
                self.dtype
            ),
        );
        None
    }

    /// An error at `at` unless `x` is a bool (a comparison, a bool value).
    fn bool_operand(&mut self, x: Var, at: &impl quote::ToTokens) -> Option<()> {
        if self.f.dtype(x) == DType::Bool {
            return Some(());
        }
        self.errors.spanned(
            at,
            format!(
                "`!`, `&&` and `||` take bools (comparisons, `true`, `false`), got {}",
                self.f.ty(x)
            ),
        );
        None
    }

    /// The sum of the bools `xs` (each 0 or 1 in the float type), compared
    /// with `at` by `op`, broadcast together.
    pub(crate) fn logic(&mut self, xs: &[Var], op: CmpOp, at: f64, span: Span) -> Option<Var> {
        let mut sum = None;
        for x in xs {
            let v = self.push(Op::Convert { dtype: self.dtype }, &[*x], span)?;
            sum = Some(match sum {
                None => v,
                Some(s) => {
                    let mut vs = [s, v];
                    self.broadcast_all(&mut vs, span)?;
                    self.push(Op::Binary(BinaryOp::Add), &vs, span)?
                }
            });
        }
        let mut vs = [sum?, self.literal(at)];
        self.broadcast_all(&mut vs, span)?;
        self.push(Op::Cmp(op), &vs, span)
    }

    /// `i + 1`, `n - i`, `2 * i`, `i / 2`, `i % n` on integer scalars (an
    /// integer literal counts as one): computed in f64 and converted back,
    /// exact below 2^53 — a quotient's truncation too: `a / c` rounds to
    /// the wrong side of an integer only when |a| > 2^53. Rust panics on a
    /// zero divisor; here it gives XLA's values (`a / 0 = -1`,
    /// `a % 0 = a`). `Some` when the operands are integers.
    fn int_arithmetic(
        &mut self,
        b: &syn::ExprBinary,
        op: IntOp,
        l: Var,
        r: Var,
        span: Span,
    ) -> Option<Option<Var>> {
        let int = |lw: &Self, v: Var| {
            lw.f.shape(v).is_scalar() && matches!(lw.f.dtype(v), DType::I32 | DType::I64)
        };
        let int_literal = |e: &Expr| match strip_parens(e) {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => i.base10_parse::<i64>().ok(),
            _ => None,
        };
        let dtype = match (int(self, l), int(self, r)) {
            (true, true) => self.f.dtype(l).max(self.f.dtype(r)),
            (true, false) if int_literal(&b.right).is_some() => self.f.dtype(l),
            (false, true) if int_literal(&b.left).is_some() => self.f.dtype(r),
            _ => return None,
        };
        let wide = |lw: &mut Self, v: Var, e: &Expr| -> Option<Var> {
            match int_literal(e) {
                Some(k) if !int(lw, v) => Some(lw.f.literal(k as f64, DType::F64)),
                _ => lw.push(Op::Convert { dtype: DType::F64 }, &[v], span),
            }
        };
        let a = wide(self, l, &b.left);
        let c = wide(self, r, &b.right);
        let (Some(a), Some(c)) = (a, c) else {
            return Some(None);
        };
        let v = match op {
            IntOp::Arith(BinaryOp::Div) | IntOp::Rem => self.int_quotient(op, a, c, span),
            IntOp::Arith(op) => self.push(Op::Binary(op), &[a, c], span),
        };
        Some(v.and_then(|v| self.push(Op::Convert { dtype }, &[v], span)))
    }

    /// `a.rem_euclid(c)` / `a.div_euclid(c)` on integer scalars, as Rust
    /// computes them: the remainder in `0..|c|` and the quotient that goes
    /// with it (numpy's `mod` and `floor_divide` for a positive divisor).
    /// `a` an integer scalar and `c` its divisor (lowered).
    fn int_euclid(&mut self, m: &syn::ExprMethodCall, a: Var, c: Var, rem: bool) -> Option<Var> {
        let int = |lw: &Self, v: Var| {
            lw.f.shape(v).is_scalar() && matches!(lw.f.dtype(v), DType::I32 | DType::I64)
        };
        let span = m.span();
        let dtype = self.f.dtype(a);
        if !int(self, c) && !matches!(strip_parens(&m.args[0]), Expr::Lit(_)) {
            self.errors.spanned(
                &m.args[0],
                format!(
                    "`{}` of an integer takes an integer, got {}",
                    m.method,
                    self.f.ty(c)
                ),
            );
            return None;
        }
        let wide = |lw: &mut Self, v: Var| match lw.f.dtype(v) {
            DType::F64 => Some(v),
            _ => lw.push(Op::Convert { dtype: DType::F64 }, &[v], span),
        };
        let (a, c) = (wide(self, a)?, wide(self, c)?);
        let r = self.int_quotient(IntOp::Rem, a, c, span)?;
        // A negative remainder moves up by |c|, its quotient by −sign(c).
        let zero = self.f.literal(0.0, DType::F64);
        let negative = self.push(Op::Cmp(CmpOp::Lt), &[r, zero], span)?;
        let sign = self.push(Op::Unary(UnaryOp::Sign), &[c], span)?;
        let v = if rem {
            let size = self.push(Op::Binary(BinaryOp::Mul), &[sign, c], span)?;
            let up = self.push(Op::Binary(BinaryOp::Add), &[r, size], span)?;
            self.push(Op::Select, &[negative, up, r], span)?
        } else {
            let q = self.int_quotient(IntOp::Arith(BinaryOp::Div), a, c, span)?;
            let down = self.push(Op::Binary(BinaryOp::Sub), &[q, sign], span)?;
            self.push(Op::Select, &[negative, down, q], span)?
        };
        self.push(Op::Convert { dtype }, &[v], span)
    }

    /// `[a, b, c]` (`jnp.array([a, b, c])`): its elements, scalars or
    /// arrays of one shape (`[[1.0, 2.0], [3.0, 4.0]]`), stacked along a
    /// new leading axis of static length; the elements may be any
    /// expressions, and derivatives flow through them.
    fn lower_array_literal(&mut self, a: &syn::ExprArray) -> Option<Var> {
        let elems: Vec<Option<Var>> = a.elems.iter().map(|e| self.lower_expr(e)).collect();
        let span = a.bracket_token.span.join();
        if elems.is_empty() {
            self.errors.at(
                span,
                "an empty array literal has no element type: write `zeros(0)`",
            );
            return None;
        }
        let elems = elems.into_iter().collect::<Option<Vec<Var>>>()?;
        // One dtype and one shape, as Rust (and numpy) ask: the sizes are
        // unified, never broadcast.
        for (k, v) in elems.iter().enumerate().skip(1) {
            let (first, t) = (self.f.ty(elems[0]).clone(), self.f.ty(*v).clone());
            let same = t.dtype == first.dtype
                && t.shape.rank() == first.shape.rank()
                && (0..t.shape.rank()).all(|i| self.unify(&first.shape.0[i], &t.shape.0[i]));
            if !same {
                self.errors.spanned(
                    &a.elems[k],
                    format!("the elements of an array literal have one shape: the first is {first}, this one {t}"),
                );
                return None;
            }
        }
        let mut dims = vec![Dim::Const(1)];
        dims.extend(self.f.shape(elems[0]).0.iter().cloned());
        let rows: Vec<Var> = elems
            .iter()
            .map(|v| {
                self.push(
                    Op::Reshape {
                        shape: Shape(dims.clone()),
                    },
                    &[*v],
                    span,
                )
            })
            .collect::<Option<_>>()?;
        Some(oxla_core::ops::slicing::concatenate(&mut self.f, &rows, 0))
    }

    /// `meshgrid(&x, &y)` (`jnp.meshgrid`, indexing `"xy"`): `(X, Y)`, both
    /// of shape `[len(y), len(x)]`, `X[i, j] = x[j]`, `Y[i, j] = y[i]`;
    /// bound by a tuple `let`.
    fn meshgrid(&mut self, c: &syn::ExprCall) -> Option<Vec<Var>> {
        let args: Vec<Option<Var>> = c.args.iter().map(|a| self.lower_expr(a)).collect();
        let [x, y] = args.as_slice() else {
            self.errors.at(
                c.paren_token.span.join(),
                "`meshgrid` takes two vectors: `let (xx, yy) = meshgrid(&x, &y);` (numpy's indexing \"xy\")",
            );
            return None;
        };
        let (x, y) = ((*x)?, (*y)?);
        for (v, e) in [(x, &c.args[0]), (y, &c.args[1])] {
            let t = self.f.ty(v).clone();
            if t.shape.rank() != 1 || !t.dtype.is_float() {
                self.errors
                    .spanned(e, format!("`meshgrid` takes two float vectors, got {t}"));
                return None;
            }
        }
        let (xx, yy) = self.grid(x, y, c.span())?;
        Some(vec![xx, yy])
    }

    /// The vectors `x` and `y` broadcast to `[len(y), len(x)]`: `x` along
    /// the rows, `y` down the columns (`meshgrid`, `outer`).
    pub(crate) fn grid(&mut self, x: Var, y: Var, span: Span) -> Option<(Var, Var)> {
        let shape = Shape(vec![
            self.f.shape(y).0[0].clone(),
            self.f.shape(x).0[0].clone(),
        ]);
        let across = |dims: Vec<usize>, v: Var, lw: &mut Self| {
            lw.push(
                Op::Broadcast {
                    shape: shape.clone(),
                    dims,
                },
                &[v],
                span,
            )
        };
        Some((across(vec![1], x, self)?, across(vec![0], y, self)?))
    }

    /// `a / c` truncated (`Div`) or `a − c·trunc(a / c)` (`Rem`), of
    /// integers held in f64; a zero divisor gives -1 and `a`.
    fn int_quotient(&mut self, op: IntOp, a: Var, c: Var, span: Span) -> Option<Var> {
        let ratio = self.push(Op::Binary(BinaryOp::Div), &[a, c], span)?;
        let q = self.push(Op::Unary(UnaryOp::Round(Rounding::Trunc)), &[ratio], span)?;
        let zero = self.f.literal(0.0, DType::F64);
        let by_zero = self.push(Op::Cmp(CmpOp::Eq), &[c, zero], span)?;
        let (value, on_zero) = match op {
            IntOp::Rem => {
                let whole = self.push(Op::Binary(BinaryOp::Mul), &[c, q], span)?;
                (self.push(Op::Binary(BinaryOp::Sub), &[a, whole], span)?, a)
            }
            _ => (q, self.f.literal(-1.0, DType::F64)),
        };
        self.push(Op::Select, &[by_zero, on_zero, value], span)
    }

    fn binary_span(&mut self, b: &syn::ExprBinary) -> Span {
        let (l, r) = (
            self.edge_span(&b.left, true),
            self.edge_span(&b.right, false),
        );
        l.join(r).unwrap_or(l)
    }

    fn lower_method(&mut self, m: &syn::ExprMethodCall) -> Option<Var> {
        let name = m.method.to_string();
        // Rust's iterator reductions: `x.iter().sum::<f64>()` is `x.sum()`.
        if matches!(name.as_str(), "sum" | "product") && m.args.is_empty() {
            if let Expr::MethodCall(inner) = strip_parens(&m.receiver) {
                if inner.method == "iter" && inner.args.is_empty() {
                    let mut whole = m.clone();
                    whole.receiver = inner.receiver.clone();
                    whole.turbofish = None;
                    return self.lower_method(&whole);
                }
            }
        }
        if name == "fold" {
            self.errors.spanned(
                &m.method,
                "`fold` is not supported: reductions are `sum(x)`, `x.product()`, `max(x)`, `min(x)` (a fold with `f64::max` is `max(x)`), or a `for` loop over the array",
            );
            return None;
        }
        if let Some(t) = &m.turbofish {
            self.errors
                .spanned(t, "type arguments are not supported on methods");
            return None;
        }
        if let Some(v) = self.lower_slicing_method(m) {
            return v;
        }
        // Values are immutable: a copy or a view is the value itself.
        if matches!(name.as_str(), "clone" | "to_owned" | "view" | "into_owned")
            && m.args.is_empty()
        {
            return self.lower_expr(&m.receiver);
        }
        if let Some(v) = self.lower_size_method(m) {
            return v;
        }
        if let Some(v) = self.lower_reshape_method(m) {
            return v;
        }
        // ndarray's reshapes return a `Result`: its `unwrap()` is the value.
        if matches!(name.as_str(), "unwrap" | "expect") {
            if let Expr::MethodCall(inner) = strip_parens(&m.receiver) {
                if self.is_reshape_method(inner) {
                    return self.lower_expr(&m.receiver);
                }
            }
        }
        if name == "mapv" {
            return self.lower_mapv(m);
        }
        if matches!(name.as_str(), "rem_euclid" | "div_euclid") && m.args.len() == 1 {
            // Both operands lowered once, then the integer or float form.
            let a = self.lower_expr(&m.receiver);
            let c = self.lower_expr(&m.args[0]);
            let (a, c) = (a?, c?);
            let int_scalar =
                self.f.shape(a).is_scalar() && matches!(self.f.dtype(a), DType::I32 | DType::I64);
            if int_scalar {
                return self.int_euclid(m, a, c, name == "rem_euclid");
            }
            if name == "div_euclid" {
                self.errors.spanned(
                    &m.method,
                    format!(
                        "`div_euclid` is supported on integer scalars, got {}",
                        self.f.ty(a)
                    ),
                );
                return None;
            }
            let span = self.method_span(m);
            let mut vs = [a, c];
            self.coerce(&mut vs, span)?;
            return self.float_rem_euclid(vs[0], vs[1], span);
        }
        if let Some(v) = self.lower_array_method(m) {
            return v;
        }
        if let Some(v) = self.lower_elementwise_method(m) {
            return v;
        }
        let unary = match name.as_str() {
            "exp" => Some(UnaryOp::Exp),
            "ln" => Some(UnaryOp::Log),
            "sin" => Some(UnaryOp::Sin),
            "cos" => Some(UnaryOp::Cos),
            "tanh" => Some(UnaryOp::Tanh),
            "sqrt" => Some(UnaryOp::Sqrt),
            "floor" => Some(UnaryOp::Round(Rounding::Floor)),
            "ceil" => Some(UnaryOp::Round(Rounding::Ceil)),
            "trunc" => Some(UnaryOp::Round(Rounding::Trunc)),
            "round" => Some(UnaryOp::Round(Rounding::HalfAway)),
            "round_ties_even" => Some(UnaryOp::Round(Rounding::HalfEven)),
            "signum" => Some(UnaryOp::Signum),
            "exp_m1" => Some(UnaryOp::ExpM1),
            "powi" | "powf" | "max" | "min" => None,
            _ => {
                let hint = match name.as_str() {
                    "log" => " (the natural logarithm is `ln`)",
                    "pow" => " (Rust's name is `powf`; for an integer power use `powi(n)`)",
                    _ => "",
                };
                self.errors.spanned(
                    &m.method,
                    format!(
                        "unknown method `{name}`{hint}: {SUPPORTED_METHODS}, {}; on arrays also {}",
                        crate::elementwise::ELEMENTWISE_METHODS,
                        crate::vocab::ARRAY_METHODS
                    ),
                );
                // Still check the receiver and arguments for errors.
                self.lower_expr(&m.receiver);
                for a in &m.args {
                    self.lower_expr(a);
                }
                return None;
            }
        };
        let x = self.lower_expr(&m.receiver);
        let want_args = if unary.is_some() { 0 } else { 1 };
        if m.args.len() != want_args {
            let what = if want_args == 0 {
                "no arguments".to_string()
            } else {
                "one argument".to_string()
            };
            self.errors
                .at(m.paren_token.span.join(), format!("`{name}` takes {what}"));
            return None;
        }
        if let Some(op) = unary {
            let x = x?;
            let span = self.method_span(m);
            return self.push(Op::Unary(op), &[x], span);
        }
        let arg = &m.args[0];
        if name == "powi" {
            let n = match strip_parens(arg) {
                Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(i),
                    ..
                }) => i.base10_parse::<i32>().ok(),
                Expr::Unary(syn::ExprUnary {
                    op: syn::UnOp::Neg(_),
                    expr,
                    ..
                }) => match strip_parens(expr) {
                    // Negate in i64 so that `-2147483648` (i32::MIN) is accepted.
                    Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(i),
                        ..
                    }) => i
                        .base10_parse::<i64>()
                        .ok()
                        .and_then(|n| i32::try_from(-n).ok()),
                    _ => None,
                },
                _ => None,
            };
            let Some(n) = n else {
                self.errors.spanned(
                    arg,
                    "`powi` takes an integer literal exponent, like `x.powi(2)`",
                );
                return None;
            };
            let x = x?;
            let span = self.method_span(m);
            return self.push(Op::Unary(UnaryOp::Powi(n)), &[x], span);
        }
        let op = match name.as_str() {
            "max" => BinaryOp::Max,
            "min" => BinaryOp::Min,
            _ => BinaryOp::Pow,
        };
        let y = self.lower_expr(arg);
        let mut vs = [x?, y?];
        let span = self.method_span(m);
        self.coerce(&mut vs, span)?;
        self.push(Op::Binary(op), &vs, span)
    }

    /// `x as T` (Rust's `as`, the `convert` op): to the function's float
    /// type from a float (the identity), an integer or a bool; to `i32` or
    /// `i64` from a float (truncating, saturating, NaN → 0) or a bool.
    /// `site` is the whole cast (or `mapv` call), where errors point.
    /// `span`: the first token of the site (printing the site to find that
    /// token made a chain of casts quadratic).
    fn lower_cast(
        &mut self,
        x: Option<Var>,
        ty: &syn::Type,
        site: &dyn ToTokens,
        span: Span,
    ) -> Option<Var> {
        let targets = format!(
            "a cast goes to the function's float type ({}), i32 or i64",
            self.dtype
        );
        let Some(to) = elem_of(ty) else {
            let shown = ty.to_token_stream().to_string();
            self.errors
                .spanned(ty, format!("unsupported cast to `{shown}`: {targets}"));
            return None;
        };
        if to == DType::Bool {
            self.errors.spanned(
                ty,
                format!("Rust has no cast to bool: compare instead (`x != 0.0`); {targets}"),
            );
            return None;
        }
        if to.is_float() && to != self.dtype {
            self.errors.spanned(
                ty,
                format!(
                    "a cast to {to} in a function whose float type is {}: an oxla function computes in one float type; {targets}",
                    self.dtype
                ),
            );
            return None;
        }
        let x = x?;
        let from = self.f.dtype(x);
        if from == to {
            return Some(x);
        }
        // `x.len() as f64`: the size, already held as a float.
        if let Some(n) = self.size_source(x).filter(|_| to == self.dtype) {
            return Some(n);
        }
        if from == DType::Bool && to.is_float() {
            self.errors.spanned(
                site,
                format!("Rust casts a bool only to an integer: write `b as i32 as {to}`"),
            );
            return None;
        }
        if !from.is_float() && from != DType::Bool && !to.is_float() {
            self.errors.spanned(
                site,
                format!("a cast from {from} to {to} is not supported: integers convert to the function's float type"),
            );
            return None;
        }
        // `b as i32 as f32`: the bool converts to the float directly (a
        // kernel selects 1 or 0), so no integer value is computed.
        let source = self
            .f
            .definitions()
            .get(x.index())
            .copied()
            .flatten()
            .map(|i| &self.f.eqns[i])
            .filter(|e| matches!(e.op, Op::Convert { .. }) && to.is_float())
            .map(|e| e.ins[0])
            .filter(|b| self.f.dtype(*b) == DType::Bool);
        self.push(Op::Convert { dtype: to }, &[source.unwrap_or(x)], span)
    }

    /// `x.mapv(|v| v as T)`: ndarray's spelling of an elementwise cast. Only
    /// that closure is supported: every other elementwise function applies
    /// to whole arrays.
    fn lower_mapv(&mut self, m: &syn::ExprMethodCall) -> Option<Var> {
        let cast = match m.args.iter().collect::<Vec<_>>().as_slice() {
            [Expr::Closure(c)] if c.inputs.len() == 1 => {
                let param = match &c.inputs[0] {
                    syn::Pat::Ident(pi) => Some(&pi.ident),
                    syn::Pat::Type(pt) => match &*pt.pat {
                        syn::Pat::Ident(pi) => Some(&pi.ident),
                        _ => None,
                    },
                    _ => None,
                };
                // `v as T`, or a chain `v as i32 as f32` (a bool's cast).
                let mut casts = Vec::new();
                let mut at = strip_parens(&c.body);
                while let Expr::Cast(cast) = at {
                    casts.push(cast);
                    at = strip_parens(&cast.expr);
                }
                match (param, at) {
                    (Some(p), Expr::Path(e)) if e.path.is_ident(p) && !casts.is_empty() => {
                        Some(casts)
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let Some(casts) = cast else {
            self.errors.at(
                m.paren_token.span.join(),
                "`mapv` takes only a cast, `x.mapv(|v| v as T)`: other elementwise functions apply to whole arrays (`x.exp()`, `x * 2.0`)",
            );
            return None;
        };
        let x = self.lower_expr(&m.receiver);
        if x.is_some_and(|x| self.f.shape(x).is_scalar()) {
            self.errors.spanned(
                &m.method,
                "`mapv` applies to arrays: cast a number with `x as T`",
            );
            return None;
        }
        let span = self.edge_span(&m.receiver, true);
        let mut x = x;
        for cast in casts.iter().rev() {
            x = Some(self.lower_cast(x, &cast.ty, m, span)?);
        }
        x
    }

    fn lower_call(&mut self, c: &syn::ExprCall) -> Option<Var> {
        if let Some(v) = self.lower_closure_call(c) {
            return v;
        }
        let supported_fns = format!(
            "supported functions are {}, {}, {} (also as `oxla::…`)",
            crate::vocab::ARRAY_FUNCTIONS,
            crate::elementwise::ELEMENTWISE_FUNCTIONS,
            crate::constructors::CONSTRUCTOR_FUNCTIONS
        );
        let name = match &*c.func {
            Expr::Path(p) if p.qself.is_none() => {
                let segs = crate::lower::segment_names(&p.path);
                let args_ok = p.path.segments.iter().all(|s| s.arguments.is_none());
                match segs.as_slice() {
                    [n] if args_ok && p.path.leading_colon.is_none() => Some(n.clone()),
                    [o, n] if args_ok && o == "oxla" => Some(n.clone()),
                    [t, n] if args_ok => {
                        crate::constructors::ndarray_constructor(t, n).map(str::to_string)
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(m) = float_path_call(c) {
            return self.lower_float_path_call(c, m);
        }
        if let Some(n) = &name {
            if let Some(v) = self.lower_slicing_call(n, c) {
                return v;
            }
            if let Some(v) = self.lower_array_call(n, c) {
                return v;
            }
            if let Some(v) = self.lower_elementwise_call(n, c) {
                return v;
            }
            if let Some(v) = self.lower_constructor_call(n, c) {
                return v;
            }
        }
        let name = name.filter(|n| n == "sum" || n == "dot");
        let Some(name) = name else {
            if let Some(v) = self.lower_helper_call(c) {
                return v;
            }
            let shown = c.func.to_token_stream().to_string().replace(' ', "");
            self.errors.spanned(
                &c.func,
                format!(
                    "unknown function `{shown}`{}: {supported_fns}, or a function marked `#[oxla::func]`",
                    method_hint(&c.func)
                ),
            );
            for a in &c.args {
                self.lower_expr(a);
            }
            return None;
        };
        let want = if name == "sum" { 1 } else { 2 };
        let args: Vec<Option<Var>> = c.args.iter().map(|a| self.lower_expr(a)).collect();
        if args.len() != want {
            let what = if want == 1 {
                "one argument: `sum(x)`"
            } else {
                "two arguments: `dot(x, y)`"
            };
            self.errors
                .at(c.paren_token.span.join(), format!("`{name}` takes {what}"));
            return None;
        }
        let args: Vec<Var> = args.into_iter().collect::<Option<_>>()?;
        if name == "sum" {
            let x = args[0];
            let rank = self.f.shape(x).rank();
            if rank == 0 {
                self.errors.spanned(
                    &c.args[0],
                    "`sum` takes an array (a slice parameter or an expression of one)",
                );
                return None;
            }
            return self.push(
                Op::ReduceSum {
                    axes: (0..rank).collect(),
                },
                &[x],
                c.span(),
            );
        }
        for (a, e) in args.iter().zip(&c.args) {
            if self.f.shape(*a).rank() == 0 {
                self.errors.spanned(
                    e,
                    "`dot` takes two arrays (slice parameters or expressions of them)",
                );
                return None;
            }
        }
        self.ndarray_dot(args[0], args[1], c.span())
    }

    /// `f64::exp(x)`, `f32::powi(x, 2)`, …: Rust's path spelling of a float
    /// method, lowered as the method call `x.exp()`. The type must be the
    /// function's float type, as rustc would require.
    fn lower_float_path_call(&mut self, c: &syn::ExprCall, m: syn::ExprMethodCall) -> Option<Var> {
        let Expr::Path(p) = &*c.func else { return None };
        let segs: Vec<&syn::PathSegment> = p.path.segments.iter().collect();
        let ty_seg = segs[segs.len() - 2];
        let ty = ty_seg.ident.to_string();
        if ty != self.dtype.name() {
            self.errors.spanned(
                ty_seg,
                format!(
                    "mixed float types: `{ty}::{}` in a function whose float type is {}",
                    m.method, self.dtype
                ),
            );
            for a in &c.args {
                self.lower_expr(a);
            }
            return None;
        }
        self.lower_method(&m)
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

/// Replace the dimension symbol `from` by `to` in every type and op of `f`.
pub(crate) fn substitute(f: &mut Function, from: &str, to: &Dim) {
    use oxla_core::shape::derived::rename;
    let fix = |shape: &mut Shape| {
        for d in shape.0.iter_mut() {
            *d = rename(d, from, to);
        }
    };
    for t in f.types.iter_mut() {
        fix(&mut t.shape);
    }
    for e in f.eqns.iter_mut() {
        match &mut e.op {
            Op::Broadcast { shape, .. } | Op::Reshape { shape } | Op::Iota { shape, .. } => {
                fix(shape)
            }
            Op::Slice { shape, starts, .. } | Op::Pad { shape, starts, .. } => {
                fix(shape);
                for d in starts.iter_mut() {
                    *d = rename(d, from, to);
                }
            }
            Op::DimSize { dim, .. } => *dim = rename(dim, from, to),
            Op::Loop(l) => substitute_in_loop(l, from, to),
            Op::LoopReverse(l) => {
                substitute_in_loop(&mut l.fwd, from, to);
                substitute(&mut l.back, from, to);
            }
            Op::Cond(c) => {
                substitute(&mut c.then, from, to);
                substitute(&mut c.otherwise, from, to);
            }
            _ => {}
        }
    }
}

fn substitute_in_loop(l: &mut oxla_core::ops::control::Loop, from: &str, to: &Dim) {
    substitute(&mut l.body, from, to);
    if let Some(c) = l.cond.as_mut() {
        substitute(c, from, to);
    }
    if let Some(t) = l.tangent_of.as_mut() {
        substitute_in_loop(&mut t.primal, from, to);
    }
}

/// The identifiers of a path's segments (`f64::consts::PI` → `f64`, `consts`, `PI`).
pub(crate) fn segment_names(p: &syn::Path) -> Vec<String> {
    p.segments.iter().map(|s| s.ident.to_string()).collect()
}

/// Whether `c` calls `name` by its bare name (or `oxla::name`).
pub(crate) fn is_bare_call(c: &syn::ExprCall, name: &str) -> bool {
    matches!(&*c.func, Expr::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident == name)
        && (p.path.segments.len() == 1
            || (p.path.segments.len() == 2 && p.path.segments[0].ident == "oxla")))
}

/// An arithmetic operator on integer scalars.
#[derive(Clone, Copy, PartialEq, Eq)]
enum IntOp {
    Arith(BinaryOp),
    Rem,
}

pub(crate) fn cmp_op(op: &BinOp) -> Option<CmpOp> {
    Some(match op {
        BinOp::Lt(_) => CmpOp::Lt,
        BinOp::Le(_) => CmpOp::Le,
        BinOp::Gt(_) => CmpOp::Gt,
        BinOp::Ge(_) => CmpOp::Ge,
        BinOp::Eq(_) => CmpOp::Eq,
        BinOp::Ne(_) => CmpOp::Ne,
        _ => return None,
    })
}

pub(crate) fn is_compound_assign(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::DivAssign(_)
            | BinOp::RemAssign(_)
            | BinOp::BitXorAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::ShlAssign(_)
            | BinOp::ShrAssign(_)
    )
}

pub(crate) fn strip_parens(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip_parens(&p.expr),
        Expr::Group(g) => strip_parens(&g.expr),
        e => e,
    }
}

pub(crate) const EARLY_RETURN: &str = "`return` is supported as the function body's last statement and inside `if`/`else` branches that are statements of the body (`if c { return a; } rest`), where it becomes `if c { a } else { rest }`; this `return` (inside a closure, a nested block or an expression) cannot be rewritten: write the choice as the result, `if c { a } else { b }`";

/// The first `return` inside `e` (not inside a closure).
pub(crate) fn early_return(e: &Expr) -> Option<&syn::ExprReturn> {
    struct Find<'a>(Option<&'a syn::ExprReturn>);
    impl<'a> syn::visit::Visit<'a> for Find<'a> {
        fn visit_expr_return(&mut self, r: &'a syn::ExprReturn) {
            self.0.get_or_insert(r);
        }
        fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut f = Find(None);
    syn::visit::Visit::visit_expr(&mut f, e);
    f.0
}

/// `f32::name(x, args…)` (also `f64`, `core::primitive::f64`, …) as the
/// method call `x.name(args…)`, when `name` is a method oxla knows.
fn float_path_call(c: &syn::ExprCall) -> Option<syn::ExprMethodCall> {
    let Expr::Path(p) = &*c.func else { return None };
    let segs: Vec<&syn::PathSegment> = p.path.segments.iter().collect();
    let [.., t, n] = segs.as_slice() else {
        return None;
    };
    let prefix_ok = segs[..segs.len() - 2]
        .iter()
        .all(|s| matches!(&*s.ident.to_string(), "core" | "std" | "primitive"));
    let float = matches!(&*t.ident.to_string(), "f32" | "f64");
    let receiver = c.args.first()?;
    let known = FLOAT_PATH_METHODS.contains(&&*n.ident.to_string());
    if !(p.qself.is_none() && prefix_ok && float && known && n.arguments.is_none()) {
        return None;
    }
    Some(syn::ExprMethodCall {
        attrs: Vec::new(),
        receiver: Box::new(receiver.clone()),
        dot_token: Default::default(),
        method: n.ident.clone(),
        turbofish: None,
        paren_token: c.paren_token,
        args: c.args.iter().skip(1).cloned().collect(),
    })
}

/// For `f64::name(…)` that oxla does not know: a hint that methods are
/// written `x.name()` (the spelling its messages list).
fn method_hint(func: &Expr) -> String {
    let Expr::Path(p) = func else {
        return String::new();
    };
    let segs = crate::lower::segment_names(&p.path);
    match segs.as_slice() {
        [.., t, n] if matches!(t.as_str(), "f32" | "f64" | "f16" | "bf16") => format!(
            " (float methods are written `x.{n}()`; the form `f64::name(x)` is supported for {}, and `{n}` is not one of them)",
            FLOAT_PATH_METHODS.join(", ")
        ),
        _ => String::new(),
    }
}

/// The float methods that may also be written `f64::name(x, …)`.
pub(crate) const FLOAT_PATH_METHODS: &[&str] = &[
    "exp",
    "ln",
    "sin",
    "cos",
    "tanh",
    "sqrt",
    "powi",
    "max",
    "min",
    "exp_m1",
    "floor",
    "ceil",
    "round",
    "round_ties_even",
    "trunc",
    "signum",
    "abs",
    "recip",
    "ln_1p",
    "clamp",
];

/// Whether a literal's magnitude `v` is finite in `dtype` (as rustc's
/// `overflowing_literals` asks of a float literal).
fn fits(v: f64, dtype: DType) -> bool {
    match dtype {
        DType::F64 => v.is_finite(),
        // The largest f16 is 65504; a value below 65520 rounds to it.
        DType::F16 => v < 65520.0,
        _ => (v as f32).is_finite(),
    }
}

fn out_of_range(digits: &str, dtype: DType) -> String {
    format!("literal `{digits}` is out of range for {dtype} (the function's float type): its value would be infinite")
}

fn path_name(p: &syn::Path) -> String {
    p.to_token_stream().to_string().replace(' ', "")
}

/// The span of an expression's leading keyword (`for`, `unsafe`, …).
fn leading_span(e: &Expr) -> Option<Span> {
    Some(match e {
        Expr::ForLoop(f) => f.for_token.span,
        Expr::While(w) => w.while_token.span,
        Expr::Loop(l) => l.loop_token.span,
        Expr::Unsafe(u) => u.unsafe_token.span,
        Expr::Match(m) => m.match_token.span,
        Expr::Return(r) => r.return_token.span,
        Expr::Assign(a) => a.eq_token.span,
        Expr::Reference(r) => match &r.mutability {
            Some(m) => r.and_token.span.join(m.span).unwrap_or(r.and_token.span),
            None => r.and_token.span,
        },
        _ => return None,
    })
}

fn unsupported_expr(e: &Expr) -> String {
    match e {
        Expr::ForLoop(_) | Expr::While(_) => {
            "a loop is a statement, not a value: run it, then use the `let mut` variables it assigns".into()
        }
        Expr::Loop(_) => "`loop` is not supported: write `while cond { … }` (a loop ends through its condition)".into(),
        Expr::Assign(_) => "an assignment is a statement (`x = e;`), not a value: assign, then use `x`".into(),
        Expr::Unsafe(_) => format!("`unsafe` is not supported: {PURE}"),
        Expr::Reference(r) if r.mutability.is_some() => format!("`&mut` is not supported: {PURE}"),
        Expr::Reference(_) => format!("references are not supported; {SUPPORTED_EXPRS}"),
        Expr::Closure(_) => format!("closures are not supported; {SUPPORTED_EXPRS}"),
        Expr::Return(_) => EARLY_RETURN.into(),
        Expr::Field(_) => format!("field access is not supported; {SUPPORTED_EXPRS}"),
        Expr::Range(_) => format!("ranges are not supported; {SUPPORTED_EXPRS}"),
        Expr::Repeat(_) => "`[v; n]` is not supported: write `full(n, v)`".into(),
        Expr::Let(_) => "`let` expressions are not supported; use a `let` statement".into(),
        Expr::Async(_) | Expr::Await(_) => format!("async code is not supported; {PURE}"),
        _ => format!("unsupported expression: {SUPPORTED_EXPRS}"),
    }
}

/// `i.span()` without re-reading the whole `if` (`Spanned::span` prints
/// it to tokens): the `if` keyword joined with the last closing brace.
pub(crate) fn if_span(i: &syn::ExprIf) -> Span {
    let mut last = i;
    let end = loop {
        match last.else_branch.as_ref().map(|(_, e)| &**e) {
            Some(Expr::If(x)) => last = x,
            Some(Expr::Block(b)) => break b.block.brace_token.span.close(),
            Some(e) => break e.span(),
            None => break last.then_branch.brace_token.span.close(),
        }
    };
    i.if_token.span.join(end).unwrap_or(i.if_token.span)
}

/// A spine at least this long is lowered from the bottom up.
const SPINE_MIN: usize = 16;

fn expr_key(e: &Expr) -> usize {
    e as *const Expr as usize
}

/// The operand of `e` that `lower_expr` lowers through `lower_expr` first
/// and that may nest deeply: a binary operator's left operand (its right
/// one when only that is compound), a negation's, a cast's, a reference's
/// or parenthesis' content, a math method's receiver.
fn spine_child(e: &Expr) -> Option<&Expr> {
    let compound = |e: &Expr| {
        matches!(
            e,
            Expr::Binary(_)
                | Expr::Unary(_)
                | Expr::Paren(_)
                | Expr::MethodCall(_)
                | Expr::Cast(_)
                | Expr::Group(_)
        )
    };
    match e {
        Expr::Paren(p) => Some(&p.expr),
        Expr::Group(g) => Some(&g.expr),
        Expr::Reference(r) if r.mutability.is_none() => Some(&r.expr),
        Expr::Cast(c) => Some(&c.expr),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
            (!matches!(strip_parens(&u.expr), Expr::Lit(_))).then_some(&*u.expr)
        }
        Expr::Binary(b) if cmp_op(&b.op).is_some() || arith_op(&b.op) => {
            if compound(&b.left) || !compound(&b.right) {
                Some(&b.left)
            } else {
                Some(&b.right)
            }
        }
        Expr::MethodCall(m)
            if m.turbofish.is_none() && SPINE_METHODS.contains(&&*m.method.to_string()) =>
        {
            Some(&m.receiver)
        }
        _ => None,
    }
}

/// Methods that lower their receiver with `lower_expr` and nothing else
/// from its syntax.
const SPINE_METHODS: &[&str] = &[
    "exp",
    "ln",
    "sin",
    "cos",
    "tanh",
    "sqrt",
    "floor",
    "ceil",
    "trunc",
    "round",
    "round_ties_even",
    "signum",
    "exp_m1",
    "powi",
    "powf",
    "max",
    "min",
    "abs",
    "square",
    "recip",
    "ln_1p",
];

fn arith_op(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_)
    )
}

/// The operand holding the first token of `e`, or that token's span.
fn first_operand(e: &Expr) -> Result<&Expr, Span> {
    match e {
        Expr::Binary(b) => Ok(&b.left),
        Expr::MethodCall(m) => Ok(&m.receiver),
        Expr::Cast(c) => Ok(&c.expr),
        Expr::Call(c) => Ok(&c.func),
        Expr::Index(i) => Ok(&i.expr),
        Expr::Field(f) => Ok(&f.base),
        Expr::Group(g) => Ok(&g.expr),
        Expr::Try(t) => Ok(&t.expr),
        Expr::Await(a) => Ok(&a.base),
        Expr::Range(r) => match &r.start {
            Some(s) => Ok(s),
            None => Err(r.limits.span()),
        },
        Expr::Assign(a) => Ok(&a.left),
        Expr::Unary(u) => Err(u.op.span()),
        Expr::Reference(r) => Err(r.and_token.span),
        Expr::Paren(p) => Err(p.paren_token.span.open()),
        Expr::Tuple(t) => Err(t.paren_token.span.open()),
        Expr::Array(a) => Err(a.bracket_token.span.open()),
        Expr::If(i) => Err(i.if_token.span),
        Expr::Match(m) => Err(m.match_token.span),
        Expr::Block(b) if b.label.is_none() && b.attrs.is_empty() => {
            Err(b.block.brace_token.span.open())
        }
        // Leaves, and forms oxla does not lower (their span as syn gives
        // it).
        e => Err(e.span()),
    }
}

/// The operand holding the last token of `e`, or that token's span.
fn last_operand(e: &Expr) -> Result<&Expr, Span> {
    match e {
        Expr::Binary(b) => Ok(&b.right),
        Expr::Unary(u) => Ok(&u.expr),
        Expr::Reference(r) => Ok(&r.expr),
        Expr::Assign(a) => Ok(&a.right),
        Expr::Group(g) => Ok(&g.expr),
        Expr::Range(r) => match &r.end {
            Some(s) => Ok(s),
            None => Err(r.limits.span()),
        },
        Expr::Cast(c) => Err(c.ty.span()),
        Expr::MethodCall(m) => Err(m.paren_token.span.close()),
        Expr::Call(c) => Err(c.paren_token.span.close()),
        Expr::Index(i) => Err(i.bracket_token.span.close()),
        Expr::Field(f) => Err(f.member.span()),
        Expr::Try(t) => Err(t.question_token.span),
        Expr::Paren(p) => Err(p.paren_token.span.close()),
        Expr::Tuple(t) => Err(t.paren_token.span.close()),
        Expr::Array(a) => Err(a.bracket_token.span.close()),
        Expr::Match(m) => Err(m.brace_token.span.close()),
        Expr::Block(b) if b.label.is_none() && b.attrs.is_empty() => {
            Err(b.block.brace_token.span.close())
        }
        Expr::If(i) => {
            let mut last = i;
            loop {
                match last.else_branch.as_ref().map(|(_, e)| &**e) {
                    Some(Expr::If(x)) => last = x,
                    Some(e) => return Ok(e),
                    None => return Err(last.then_branch.brace_token.span.close()),
                }
            }
        }
        e => Err(e.span()),
    }
}
