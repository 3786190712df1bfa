//! The flat function's body: field paths (`p.w1`, `p.layer.w`) rewritten to
//! the leaf parameters they name, structs passed to helpers as their leaves.

use super::def::Field;
use super::def::Step;
use super::flatten::flatten_fn;
use super::flatten::leaf_ident;
use super::flatten::Flattened;
use super::flatten::Slot;
use crate::errors::Errors;
use crate::lower::ident_name;
use crate::resolve::helpers::{self};
use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::Expr;

/// The body's rewriting: field paths to leaf parameters.
pub(super) struct Rewrite {
    /// The names bound to structs: the parameters, and `let` bindings of
    /// a field path (`let l = &p.layer;`), latest last.
    pub(super) params: Vec<Bound>,
    pub(super) results: Vec<Slot>,
    pub(super) result_tuple: bool,
    pub(super) errors: Errors,
}

/// A name bound to a struct: a parameter, or a `let` naming a field path
/// into one.
pub(super) struct Bound {
    pub(super) name: String,
    /// The parameter it is a part of, and the path of fields to it.
    pub(super) param: syn::Ident,
    pub(super) prefix: Vec<Step>,
    pub(super) pos: Field,
}

/// The name a `let` binds, when it is a plain one.
fn let_name(pat: &syn::Pat) -> Option<String> {
    match pat {
        syn::Pat::Ident(i) if i.subpat.is_none() => Some(ident_name(&i.ident)),
        syn::Pat::Type(t) => let_name(&t.pat),
        _ => None,
    }
}

/// What a path into a struct parameter names.
enum Named {
    Leaf(syn::Ident),
    /// A struct or an array of them: what it is, the parameter it is a part
    /// of and the path to it.
    Sub {
        pos: Field,
        param: syn::Ident,
        path: Vec<Step>,
    },
}

impl Rewrite {
    /// `Some` when `e` is a struct parameter or a path of fields and
    /// literal indices into one.
    fn named(&mut self, e: &Expr) -> Option<Result<Named, ()>> {
        let mut steps: Vec<(Step, Span)> = Vec::new();
        let mut cur = e;
        loop {
            match cur {
                Expr::Field(f) => {
                    let step = match &f.member {
                        syn::Member::Named(n) => (Step::Name(ident_name(n)), n.span()),
                        syn::Member::Unnamed(i) => (Step::Name(i.index.to_string()), i.span),
                    };
                    steps.push(step);
                    cur = &f.base;
                }
                Expr::Index(ix) => match literal_index(&ix.index) {
                    Some(i) => {
                        steps.push((Step::Index(i), ix.index.span()));
                        cur = &ix.expr;
                    }
                    None => break,
                },
                Expr::Paren(p) => cur = &p.expr,
                Expr::Group(g) => cur = &g.expr,
                _ => break,
            }
        }
        let Expr::Path(p) = cur else { return None };
        let name = ident_name(p.path.get_ident()?);
        let bound = self.params.iter().rev().find(|b| b.name == name)?;
        let (param, mut pos, mut path) =
            (bound.param.clone(), bound.pos.clone(), bound.prefix.clone());
        steps.reverse();
        for (step, span) in &steps {
            let shown = show_path(&param, &path);
            let next = match (&pos, step) {
                (Field::Tree(def), Step::Name(n)) => {
                    match def.fields.iter().find(|(f, _)| ident_name(f) == *n) {
                        Some((_, f)) => f.clone(),
                        None => {
                            self.errors.at(
                                *span,
                                format!(
                                    "`{}` has no field `{n}`: its fields are {}",
                                    def.name,
                                    def.field_names()
                                ),
                            );
                            return Some(Err(()));
                        }
                    }
                }
                (Field::Array(elem, len), Step::Index(k)) if k < len => (**elem).clone(),
                (Field::Array(_, len), Step::Index(k)) => {
                    self.errors.at(
                        *span,
                        format!("index {k} is out of range: `{shown}` has {len} elements"),
                    );
                    return Some(Err(()));
                }
                // An element of an array leaf: lowered as indexing.
                (Field::Leaf(_), Step::Index(_)) => return None,
                (Field::Leaf(_), Step::Name(n)) => {
                    self.errors.at(
                        *span,
                        format!("`{shown}` is an array or a scalar, not a struct: it has no field `{n}`"),
                    );
                    return Some(Err(()));
                }
                (Field::Tree(def), Step::Index(_)) => {
                    self.errors.at(
                        *span,
                        format!(
                            "`{shown}` is a `{}` struct, not an array: its fields are {}",
                            def.name,
                            def.field_names()
                        ),
                    );
                    return Some(Err(()));
                }
                (Field::Array(_, len), Step::Name(n)) => {
                    self.errors.at(
                        *span,
                        format!("`{shown}` is an array of {len} elements, which have the field `{n}`: index it with a literal, `{shown}[0].{n}`"),
                    );
                    return Some(Err(()));
                }
            };
            path.push(step.clone());
            pos = next;
        }
        Some(Ok(match pos {
            Field::Leaf(_) => Named::Leaf(leaf_ident(&param, &path, e.span())),
            pos => Named::Sub { pos, param, path },
        }))
    }

    /// A result expression: a struct result becomes its leaves.
    pub(super) fn result(&mut self, e: &mut Expr) {
        if !self.results.iter().any(|s| matches!(s, Slot::Tree(..))) {
            return;
        }
        let results = self.results.clone();
        let mut out: Vec<Expr> = Vec::new();
        if self.result_tuple {
            let Expr::Tuple(t) = strip_paren(e) else {
                self.errors.spanned(
                    &*e,
                    "this function returns a tuple: write the result as a tuple `(…, …)`",
                );
                return;
            };
            if t.elems.len() != results.len() {
                return; // the lowering reports the count
            }
            for (el, slot) in t.elems.iter().zip(&results) {
                match slot {
                    Slot::Plain => out.push(el.clone()),
                    Slot::Tree(_, def) | Slot::Batched(_, def) => {
                        out.extend(self.leaves_of(el, &Field::Tree(def.clone())))
                    }
                }
            }
        } else if let Some(Slot::Tree(_, def)) = results.first() {
            out = self.leaves_of(e, &Field::Tree(def.clone()));
        }
        *e = if out.len() == 1 {
            out.pop().expect("one leaf")
        } else {
            syn::parse_quote_spanned!(e.span()=> (#(#out),*))
        };
    }

    /// The leaves of an expression whose value is `field`: a struct literal
    /// (an array literal for an array of structs), or a struct parameter or
    /// a part of one.
    fn leaves_of(&mut self, e: &Expr, field: &Field) -> Vec<Expr> {
        let e = strip_paren(e);
        match (field, e) {
            (Field::Leaf(_), _) => vec![e.clone()],
            (Field::Tree(def), Expr::Struct(s)) => {
                let shown = s
                    .path
                    .segments
                    .last()
                    .map(|s| s.ident.to_string())
                    .unwrap_or_default();
                if shown != def.name {
                    self.errors.spanned(
                        &s.path,
                        format!("expected a `{}`, found a `{shown}`", def.name),
                    );
                    return Vec::new();
                }
                if let Some(rest) = &s.rest {
                    self.errors.spanned(
                        rest,
                        "`..` in a struct result is not supported: write every field",
                    );
                }
                for fv in &s.fields {
                    let known = matches!(&fv.member, syn::Member::Named(n) if def.fields.iter().any(|(d, _)| d == n));
                    if !known {
                        self.errors.spanned(
                            &fv.member,
                            format!(
                                "`{}` has no field `{}`: its fields are {}",
                                def.name,
                                fv.member.to_token_stream(),
                                def.field_names()
                            ),
                        );
                    }
                }
                let mut out = Vec::new();
                for (fname, f) in &def.fields {
                    let Some(fv) = s
                        .fields
                        .iter()
                        .find(|fv| matches!(&fv.member, syn::Member::Named(n) if n == fname))
                    else {
                        self.errors.spanned(
                            &s.path,
                            format!("missing field `{fname}` of `{}`", def.name),
                        );
                        continue;
                    };
                    out.extend(self.leaves_of(&fv.expr, f));
                }
                out
            }
            (Field::Array(elem, n), Expr::Array(a)) if a.elems.len() == *n => a
                .elems
                .iter()
                .flat_map(|el| self.leaves_of(el, elem))
                .collect::<Vec<_>>(),
            (_, other) => {
                let want = field.leaves().len();
                match self.named(other) {
                    Some(Ok(Named::Sub { pos, param, path })) if same_kind(&pos, field) => {
                        sub_leaves(&pos, &param, &path, other.span())
                            .into_iter()
                            .map(|id| syn::parse_quote!(#id))
                            .collect::<Vec<_>>()
                            .into_iter()
                            .take(want)
                            .collect()
                    }
                    Some(Err(())) => Vec::new(),
                    _ => {
                        let what = match field {
                            Field::Tree(def) => format!("a `{0}` is a struct literal `{0} {{ … }}` or a parameter of that type", def.name),
                            _ => format!("an array of {} elements is an array literal `[…]` or a parameter's field of that type", field_len(field)),
                        };
                        self.errors.spanned(
                            other,
                            format!("this result does not match its type: {what}"),
                        );
                        Vec::new()
                    }
                }
            }
        }
    }
}

fn field_len(f: &Field) -> usize {
    match f {
        Field::Array(_, n) => *n,
        _ => 1,
    }
}

/// Whether two parts of structs have the same type (by struct name and
/// array length).
fn same_kind(a: &Field, b: &Field) -> bool {
    match (a, b) {
        (Field::Tree(x), Field::Tree(y)) => x.name == y.name,
        (Field::Array(x, n), Field::Array(y, m)) => n == m && same_kind(x, y),
        (Field::Leaf(x), Field::Leaf(y)) => x == y,
        _ => false,
    }
}

/// The leaf parameters of the part `pos` of `param` at `path`.
fn sub_leaves(pos: &Field, param: &syn::Ident, path: &[Step], span: Span) -> Vec<syn::Ident> {
    pos.leaves()
        .iter()
        .map(|(p, _)| {
            let full: Vec<Step> = path.iter().chain(p).cloned().collect();
            leaf_ident(param, &full, span)
        })
        .collect()
}

/// `p.layers[0].w`, as the user writes it.
fn show_path(param: &syn::Ident, path: &[Step]) -> String {
    let mut s = ident_name(param);
    for step in path {
        match step {
            Step::Name(n) => {
                s.push('.');
                s.push_str(n);
            }
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// An integer literal index (`[0]`).
fn literal_index(e: &Expr) -> Option<usize> {
    match strip_paren(e) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        _ => None,
    }
}

/// Whether a call of `func` may be a helper's (so a struct argument
/// passes its leaves), not one of oxla's own functions.
fn calls_helper(func: &Expr) -> bool {
    let Expr::Path(p) = func else { return false };
    let vocabulary = p
        .path
        .get_ident()
        .is_some_and(|id| helpers::is_vocabulary_function(&ident_name(id)));
    p.qself.is_none() && helpers::may_be_helper(&p.path) && !vocabulary
}

fn strip_paren(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip_paren(&p.expr),
        Expr::Group(g) => strip_paren(&g.expr),
        e => e,
    }
}

/// The result slots of a call of `path` when it names a helper or a
/// function another annotated function's expansion generates and some
/// result is a struct (`loss_grad` of `#[grad(loss_grad, wrt = p)] fn
/// loss(p: &Params, …)`, or a helper `fn step(p: &Params, …) -> Params`).
fn generated_struct_results(path: &syn::Path) -> Option<Vec<Slot>> {
    let (helper, callees) = helpers::current().get(path)?;
    let mut item = helper.item.clone();
    let stack = crate::parse::attr::take_oxla_attrs(&mut item.attrs, &mut Errors::new());
    let outer = helpers::swap_current(callees);
    let flat = flatten_fn(&item, &stack);
    helpers::swap_current(outer);
    let Flattened::Flat(flat, e) = flat else {
        return None;
    };
    if !e.is_empty() {
        return None;
    }
    // A generated function's signature, or a helper's own.
    let sig = match &helper.generated {
        Some(name) => flat.sig(&syn::Ident::new(name, Span::call_site()))?,
        None => flat.original(),
    };
    let slots = sig.results.clone()?;
    slots
        .iter()
        .any(|s| !matches!(s, Slot::Plain))
        .then_some(slots)
}

impl Rewrite {
    /// `let g = loss_grad(&p, x);` (or a tuple pattern) where a result of
    /// the called generated function is a struct: the pattern binds its
    /// leaves (`g__w`, `g__b`), and `g` names them as a part of a struct
    /// does, so `g.w` and `Params { w: &p.w - &g.w, … }` work. Whether
    /// `local` was one.
    fn bind_struct_results(&mut self, local: &mut syn::Local) -> bool {
        let Some(init) = &local.init else {
            return false;
        };
        let Expr::Call(c) = strip_paren(&init.expr) else {
            return false;
        };
        let Expr::Path(p) = &*c.func else {
            return false;
        };
        if !calls_helper(&c.func) {
            return false;
        }
        let Some(slots) = generated_struct_results(&p.path) else {
            return false;
        };
        let pat = match &local.pat {
            syn::Pat::Type(t) => (*t.pat).clone(),
            p => p.clone(),
        };
        let pats: Vec<syn::Pat> = match (&pat, slots.len()) {
            (syn::Pat::Tuple(t), n) if t.elems.len() == n => t.elems.iter().cloned().collect(),
            (p, 1) => vec![p.clone()],
            _ => return false,
        };
        let span = c.func.span();
        let mut leaves: Vec<syn::Pat> = Vec::new();
        let mut bound: Vec<Bound> = Vec::new();
        for (pat, slot) in pats.iter().zip(&slots) {
            match (slot, pat) {
                (Slot::Plain, p) => leaves.push(p.clone()),
                (Slot::Tree(_, def), syn::Pat::Ident(pi)) if pi.subpat.is_none() => {
                    let pos = Field::Tree(def.clone());
                    for id in sub_leaves(&pos, &pi.ident, &[], span) {
                        leaves.push(syn::parse_quote!(#id));
                    }
                    bound.push(Bound {
                        name: ident_name(&pi.ident),
                        param: pi.ident.clone(),
                        prefix: Vec::new(),
                        pos,
                    });
                }
                (Slot::Batched(..), _) => {
                    self.errors.spanned(
                        &c.func,
                        "this function returns a batch of parameter structs (`oxla::Batched`), which an annotated function cannot bind yet: call it from plain Rust, or `vmap` a function that uses the batch inside",
                    );
                    return false;
                }
                (Slot::Tree(..), syn::Pat::Wild(w)) => {
                    for _ in 0..slot.leaf_count() {
                        leaves.push(syn::Pat::Wild(w.clone()));
                    }
                }
                _ => return false,
            }
        }
        for b in bound {
            self.params.retain(|old| old.name != b.name);
            self.params.push(b);
        }
        local.pat = match leaves.len() {
            1 => leaves.pop().expect("one"),
            _ => syn::parse_quote!((#(#leaves),*)),
        };
        true
    }

    /// A loop over an array of structs, unrolled as JAX's Python loop over a
    /// list of layers is traced: one copy of the body per element.
    /// `for layer in p.layers.iter()` (also `&p.layers`, `p.layers`) binds
    /// `layer` to each element; `for i in 0..3` with literal bounds whose
    /// body indexes an array of structs by `i` has `i` a literal in each
    /// copy. `None` for any other loop (a loop with `break` or `continue`
    /// is not unrolled: its exits would end the copies).
    fn unroll(&mut self, fl: &syn::ExprForLoop) -> Option<Expr> {
        if fl.label.is_some() || crate::lower::control::loop_exits::has_exit(&fl.body).is_some() {
            return None;
        }
        let span = fl.for_token.span;
        let stmts = &fl.body.stmts;
        // `for layer in p.layers.iter()`.
        let base = match strip_paren(&fl.expr) {
            Expr::MethodCall(m) if m.method == "iter" && m.args.is_empty() => &*m.receiver,
            Expr::Reference(r) if r.mutability.is_none() => &*r.expr,
            e => e,
        };
        if matches!(base, Expr::Field(_) | Expr::Index(_) | Expr::Path(_)) {
            if let Some(Ok(Named::Sub {
                pos: pos @ Field::Array(..),
                ..
            })) = self.named(base)
            {
                let pat = &fl.pat;
                let copies = (0..field_len(&pos)).map(|k| {
                    let k = syn::LitInt::new(&k.to_string(), span);
                    quote::quote_spanned!(span=> { let #pat = &#base[#k]; #(#stmts)* })
                });
                return Some(syn::parse_quote_spanned!(span=> { #(#copies)* }));
            }
        }
        // `for i in 0..3 { … p.layers[i] … }`.
        let Expr::Range(r) = strip_paren(&fl.expr) else {
            return None;
        };
        let syn::Pat::Ident(var) = &*fl.pat else {
            return None;
        };
        let lit = |e: &Option<Box<Expr>>| match e.as_deref().map(strip_paren) {
            Some(Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            })) => i.base10_parse::<usize>().ok(),
            _ => None,
        };
        let (lo, hi) = (lit(&r.start)?, lit(&r.end)?);
        let hi = match r.limits {
            syn::RangeLimits::HalfOpen(_) => hi,
            syn::RangeLimits::Closed(_) => hi + 1,
        };
        let mut indexed = IndexedBy(&var.ident, Vec::new());
        syn::visit::Visit::visit_block(&mut indexed, &fl.body);
        let by_var = indexed.1.into_iter().any(|base| {
            matches!(
                self.named(&base),
                Some(Ok(Named::Sub {
                    pos: Field::Array(..),
                    ..
                }))
            )
        });
        if !by_var {
            return None;
        }
        let copies = (lo..hi).map(|k| {
            let mut body = fl.body.clone();
            let k = syn::LitInt::new(&k.to_string(), span);
            LoopVar(&var.ident, syn::parse_quote_spanned!(span=> #k)).visit_block_mut(&mut body);
            body
        });
        Some(syn::parse_quote_spanned!(span=> { #(#copies)* }))
    }
}

/// The bases of the index expressions `base[var]` in a body.
struct IndexedBy<'a>(&'a syn::Ident, Vec<Expr>);

impl<'ast> syn::visit::Visit<'ast> for IndexedBy<'_> {
    fn visit_expr_index(&mut self, ix: &'ast syn::ExprIndex) {
        if matches!(strip_paren(&ix.index), Expr::Path(p) if p.path.is_ident(self.0)) {
            self.1.push((*ix.expr).clone());
        }
        syn::visit::visit_expr_index(self, ix);
    }
}

/// Every use of the loop variable replaced by its value in one copy.
struct LoopVar<'a>(&'a syn::Ident, Expr);

impl VisitMut for LoopVar<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if matches!(e, Expr::Path(p) if p.path.is_ident(self.0)) {
            *e = self.1.clone();
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

impl VisitMut for Rewrite {
    /// `let l = &p.layer;` names a part of a struct: the binding is
    /// recorded, not lowered. Any other `let` of a name shadows it.
    fn visit_block_mut(&mut self, block: &mut syn::Block) {
        let stmts = std::mem::take(&mut block.stmts);
        for mut stmt in stmts {
            if let syn::Stmt::Local(local) = &mut stmt {
                if self.bind_struct_results(local) {
                    self.visit_local_mut(local);
                    block.stmts.push(stmt);
                    continue;
                }
                let name = let_name(&local.pat);
                let sub = local.init.as_ref().and_then(|init| {
                    let e = match &*init.expr {
                        Expr::Reference(r) if r.mutability.is_none() => &*r.expr,
                        e => e,
                    };
                    match self.named(e) {
                        Some(Ok(Named::Sub { pos, param, path })) => Some((pos, param, path)),
                        _ => None,
                    }
                });
                if let (Some(name), Some((pos, param, prefix))) = (&name, sub) {
                    self.params.push(Bound {
                        name: name.clone(),
                        param,
                        prefix,
                        pos,
                    });
                    continue;
                }
                self.visit_local_mut(local);
                if let Some(name) = name {
                    self.params.retain(|b| b.name != name);
                }
                block.stmts.push(stmt);
                continue;
            }
            self.visit_stmt_mut(&mut stmt);
            block.stmts.push(stmt);
        }
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::ForLoop(fl) = e {
            if let Some(unrolled) = self.unroll(fl) {
                *e = unrolled;
                self.visit_expr_mut(e);
                return;
            }
        }
        match self.named(e) {
            Some(Ok(Named::Leaf(id))) => {
                *e = syn::parse_quote!(#id);
                return;
            }
            Some(Ok(Named::Sub { pos, .. })) => {
                let msg = match &pos {
                    Field::Tree(def) => format!("this is a `{}` struct: use its fields ({}) or pass it to an `#[oxla::func]` helper", def.name, def.field_names()),
                    _ => format!("this is an array of {} parts of a struct: index it with a literal (`[0]`), or loop over it (`for layer in p.layers.iter()`, or `for i in 0..N` with literal bounds), which is unrolled", field_len(&pos)),
                };
                self.errors.spanned(&*e, msg);
                return;
            }
            Some(Err(())) => return,
            None => {}
        }
        match e {
            // A struct argument of a call passes its leaves.
            Expr::Call(c) if calls_helper(&c.func) => {
                self.visit_expr_mut(&mut c.func);
                let args = std::mem::take(&mut c.args);
                for mut a in args {
                    let inner = match &a {
                        Expr::Reference(r) if r.mutability.is_none() => &*r.expr,
                        a => a,
                    };
                    match self.named(inner) {
                        Some(Ok(Named::Sub { pos, param, path })) => {
                            for id in sub_leaves(&pos, &param, &path, inner.span()) {
                                c.args.push(syn::parse_quote!(#id));
                            }
                        }
                        Some(Err(())) => {}
                        _ => {
                            self.visit_expr_mut(&mut a);
                            c.args.push(a);
                        }
                    }
                }
            }
            Expr::Return(r) => {
                if let Some(v) = &mut r.expr {
                    self.result(v);
                    self.visit_expr_mut(v);
                }
            }
            // A closure's body is lowered where it is called.
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
}
