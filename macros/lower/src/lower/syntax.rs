//! Helpers on the syntax and the IR that lowering shares: dimension
//! substitution, operator tables, the spans of long expressions.

use super::function::SUPPORTED_EXPRS;
use crate::parse::types::PURE;
use oxla_core::ops::elementwise::{BinaryOp, CmpOp};
use oxla_core::{DType, Dim, Function};
use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{BinOp, Expr};

/// Replace the dimension symbol `from` by `to` in every type and op of `f`.
pub(crate) fn substitute(f: &mut Function, from: &str, to: &Dim) {
    oxla_core::transforms::substitute::substitute(f, from, to)
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
pub(super) enum IntOp {
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
pub(super) fn float_path_call(c: &syn::ExprCall) -> Option<syn::ExprMethodCall> {
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
pub(super) fn method_hint(func: &Expr) -> String {
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
pub(super) fn fits(v: f64, dtype: DType) -> bool {
    match dtype {
        DType::F64 => v.is_finite(),
        // The largest f16 is 65504; a value below 65520 rounds to it.
        DType::F16 => v < 65520.0,
        _ => (v as f32).is_finite(),
    }
}

pub(super) fn out_of_range(digits: &str, dtype: DType) -> String {
    format!("literal `{digits}` is out of range for {dtype} (the function's float type): its value would be infinite")
}

pub(super) fn path_name(p: &syn::Path) -> String {
    p.to_token_stream().to_string().replace(' ', "")
}

/// The span of an expression's leading keyword (`for`, `unsafe`, …).
pub(super) fn leading_span(e: &Expr) -> Option<Span> {
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

pub(super) fn unsupported_expr(e: &Expr) -> String {
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
pub(super) const SPINE_MIN: usize = 16;

pub(super) fn expr_key(e: &Expr) -> usize {
    e as *const Expr as usize
}

/// The operand of `e` that `lower_expr` lowers through `lower_expr` first
/// and that may nest deeply: a binary operator's left operand (its right
/// one when only that is compound), a negation's, a cast's, a reference's
/// or parenthesis' content, a math method's receiver.
pub(super) fn spine_child(e: &Expr) -> Option<&Expr> {
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
pub(super) fn first_operand(e: &Expr) -> Result<&Expr, Span> {
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
pub(super) fn last_operand(e: &Expr) -> Result<&Expr, Span> {
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
