//! `break` and `continue` in a loop body, as JAX writes an early exit: a
//! `while_loop` whose carry holds a done flag. The loop is rewritten in
//! source before it is lowered:
//!
//! ```text
//! for i in lo..hi { A; if c { B; break; } C }
//! ```
//! becomes
//! ```text
//! { let mut __oxla_done = false;
//!   for i in lo..hi {
//!       if !__oxla_done {
//!           A; if c { B; __oxla_done = true; }
//!           if !__oxla_done { C }
//!       }
//!   } }
//! ```
//! (the range is kept, so the steps after the `break` run nothing, as
//! JAX's `fori_loop` with a flag; a `while` loop's condition becomes
//! `!__oxla_done && (cond)`, which ends it).
//! `break` sets the flag, `continue` sets a flag reset at each step, and the
//! statements after one that may set either run under `if !flag { … }`:
//! only straight-line code, conds and other loops, which oxla lowers
//! already. A `break` belongs to the innermost loop around it (that loop is
//! rewritten when it is lowered); one inside an expression that is not a
//! statement (`let x = if c { break } else { 1 };`) is an error saying how
//! to write it.

use proc_macro2::Span;
use quote::{format_ident, quote_spanned};
use syn::spanned::Spanned;
use syn::{Block, Expr, Stmt};

/// The names one rewritten loop introduces (distinct per loop, so nested
/// rewritten loops never see each other's).
struct Flags {
    done: syn::Ident,
    skip: Option<syn::Ident>,
}

/// Whether `body` has a `break` or `continue` of its own loop (not of a
/// loop nested in it, not in a closure).
pub(crate) fn has_exit(body: &Block) -> Option<(bool, bool)> {
    let (mut brk, mut cont) = (false, false);
    scan_block(body, &mut |e| match e {
        Expr::Break(_) => brk = true,
        Expr::Continue(_) => cont = true,
        _ => {}
    });
    (brk || cont).then_some((brk, cont))
}

/// Visit every expression of `block` that belongs to its loop: not inside
/// nested loops, closures or items.
fn scan_block(block: &Block, f: &mut dyn FnMut(&Expr)) {
    use syn::visit::Visit;
    struct Scan<'f>(&'f mut dyn FnMut(&Expr));
    impl<'a> Visit<'a> for Scan<'_> {
        fn visit_expr(&mut self, e: &'a Expr) {
            (self.0)(e);
            match e {
                Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) | Expr::Closure(_) => {}
                _ => syn::visit::visit_expr(self, e),
            }
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    Scan(f).visit_block(block);
}

/// The loop `fl` (whose body has a `break` or `continue`) rewritten as a
/// block: its range is kept (so its index, trip count, checkpointing and
/// batching are a `for` loop's), and the steps after a `break` run nothing
/// (JAX's `fori_loop` with a done flag); `id` makes its names distinct.
pub(crate) fn rewrite_for(fl: &syn::ExprForLoop, id: usize) -> Result<Block, syn::Error> {
    let span = fl.for_token.span;
    let Rewritten {
        flags,
        body,
        decls,
        reset,
    } = rewrite(&fl.body, span, id)?;
    let done = &flags.done;
    let (pat, expr) = (&fl.pat, &fl.expr);
    syn::parse2(quote_spanned! {span=>
        {
            #decls
            for #pat in #expr {
                #reset
                if !#done {
                    #body
                }
            }
        }
    })
}

/// `while cond { body }` (with a `break` or `continue`) rewritten likewise.
pub(crate) fn rewrite_while(w: &syn::ExprWhile, id: usize) -> Result<Block, syn::Error> {
    let span = w.while_token.span;
    let Rewritten {
        flags,
        body,
        decls,
        reset,
    } = rewrite(&w.body, span, id)?;
    let done = &flags.done;
    let cond = &w.cond;
    syn::parse2(quote_spanned! {span=>
        {
            #decls
            while !#done && (#cond) {
                #reset
                #body
            }
        }
    })
}

/// A loop body rewritten, with its flags' declarations and what resets the
/// skip flag at each step.
struct Rewritten {
    flags: Flags,
    body: proc_macro2::TokenStream,
    decls: proc_macro2::TokenStream,
    reset: proc_macro2::TokenStream,
}

fn rewrite(body: &Block, span: Span, id: usize) -> Result<Rewritten, syn::Error> {
    let (_, cont) = has_exit(body).unwrap_or((false, false));
    let flags = Flags {
        done: format_ident!("__oxla_done_{}", id, span = span),
        skip: cont.then(|| format_ident!("__oxla_skip_{}", id, span = span)),
    };
    let done = &flags.done;
    let (mut decls, mut reset) = (
        quote_spanned!(span=> let mut #done = false;),
        quote_spanned!(span=>),
    );
    if let Some(skip) = &flags.skip {
        decls.extend(quote_spanned!(span=> let mut #skip = false;));
        reset = quote_spanned!(span=> #skip = false;);
    }
    let body = rewrite_body(body, &flags)?;
    Ok(Rewritten {
        flags,
        body,
        decls,
        reset,
    })
}

/// The body's statements with each exit replaced by its flag, and what
/// follows a statement that may exit put under `if !flags { … }`.
fn rewrite_body(body: &Block, flags: &Flags) -> Result<proc_macro2::TokenStream, syn::Error> {
    let mut out = proc_macro2::TokenStream::new();
    rewrite_stmts(&body.stmts, flags, &mut out)?;
    Ok(out)
}

fn rewrite_stmts(
    stmts: &[Stmt],
    flags: &Flags,
    out: &mut proc_macro2::TokenStream,
) -> Result<(), syn::Error> {
    for (i, stmt) in stmts.iter().enumerate() {
        let may_exit = rewrite_stmt(stmt, flags, out)?;
        let rest = &stmts[i + 1..];
        if may_exit && !rest.is_empty() {
            let span = rest[0].span();
            let guard = guard(flags, span);
            let mut inner = proc_macro2::TokenStream::new();
            rewrite_stmts(rest, flags, &mut inner)?;
            out.extend(quote_spanned!(span=> if #guard { #inner }));
            return Ok(());
        }
    }
    Ok(())
}

/// `!done` (and `!skip`): whether the rest of this step runs.
fn guard(flags: &Flags, span: Span) -> proc_macro2::TokenStream {
    let done = &flags.done;
    match &flags.skip {
        Some(skip) => quote_spanned!(span=> !#done && !#skip),
        None => quote_spanned!(span=> !#done),
    }
}

/// One statement rewritten into `out`; whether it may exit.
fn rewrite_stmt(
    stmt: &Stmt,
    flags: &Flags,
    out: &mut proc_macro2::TokenStream,
) -> Result<bool, syn::Error> {
    let e = match stmt {
        Stmt::Expr(e, _) => e,
        other => {
            check_no_exit(other)?;
            quote::ToTokens::to_tokens(other, out);
            return Ok(false);
        }
    };
    match e {
        Expr::Break(b) => {
            if b.label.is_some() || b.expr.is_some() {
                return Err(syn::Error::new(
                    b.span(),
                    "`break` with a label or a value is not supported: a plain `break;` ends the loop",
                ));
            }
            let done = &flags.done;
            out.extend(quote_spanned!(b.break_token.span=> #done = true;));
            Ok(true)
        }
        Expr::Continue(c) => {
            if c.label.is_some() {
                return Err(syn::Error::new(
                    c.span(),
                    "`continue` with a label is not supported",
                ));
            }
            let skip = flags
                .skip
                .as_ref()
                .expect("a loop with `continue` has the flag");
            out.extend(quote_spanned!(c.continue_token.span=> #skip = true;));
            Ok(true)
        }
        Expr::If(i) => {
            let mut then = proc_macro2::TokenStream::new();
            let mut exits = rewrite_branch(&i.then_branch, flags, &mut then)?;
            let cond = &i.cond;
            let span = i.if_token.span;
            let els = match &i.else_branch {
                None => quote_spanned!(span=>),
                Some((_, e)) => {
                    let mut t = proc_macro2::TokenStream::new();
                    let stmt = Stmt::Expr((**e).clone(), None);
                    exits |= rewrite_stmt(&stmt, flags, &mut t)?;
                    quote_spanned!(span=> else #t)
                }
            };
            out.extend(quote_spanned!(span=> if #cond { #then } #els));
            Ok(exits)
        }
        Expr::Block(b) if b.label.is_none() => {
            let mut inner = proc_macro2::TokenStream::new();
            let exits = rewrite_branch(&b.block, flags, &mut inner)?;
            out.extend(quote_spanned!(b.block.brace_token.span.join()=> { #inner }));
            Ok(exits)
        }
        _ => {
            check_no_exit(stmt)?;
            quote::ToTokens::to_tokens(stmt, out);
            Ok(false)
        }
    }
}

/// A block's statements rewritten into `out`; whether it may exit.
fn rewrite_branch(
    block: &Block,
    flags: &Flags,
    out: &mut proc_macro2::TokenStream,
) -> Result<bool, syn::Error> {
    rewrite_stmts(&block.stmts, flags, out)?;
    Ok(has_exit(block).is_some())
}

/// An exit where no statement rewrite reaches it is an error.
fn check_no_exit(stmt: &Stmt) -> Result<(), syn::Error> {
    let block = Block {
        brace_token: Default::default(),
        stmts: vec![stmt.clone()],
    };
    let mut found = None;
    scan_block(&block, &mut |e| match e {
        Expr::Break(b) => {
            found.get_or_insert(b.break_token.span);
        }
        Expr::Continue(c) => {
            found.get_or_insert(c.continue_token.span);
        }
        _ => {}
    });
    match found {
        Some(span) => Err(syn::Error::new(
            span,
            "`break` and `continue` are supported as statements (`if cond { break; }`), not inside an expression that gives a value",
        )),
        None => Ok(()),
    }
}

/// A loop statement `stmts[i]` of a function body whose body has
/// `return e;` statements of its own (not in nested loops or closures):
/// each becomes `__oxla_ret_k = true; break;` (a flag per `return`,
/// declared before the loop), and the statements after the loop become
/// `if __oxla_ret_1 { e1 } else if … else { rest }` — JAX's `while_loop`
/// with a done flag, then the choice. `e` is read after the loop, where the
/// loop's carries hold what they held at the `return` (nothing after it
/// ran), so it may name variables declared before the loop only; `None`
/// (leaving the `return` for the lowering to report) when one names a
/// variable bound inside the loop, or when there is no such `return`.
pub(crate) fn rewrite_loop_returns(
    loop_expr: &Expr,
    i: usize,
    stmts: &[Stmt],
) -> Option<Vec<Stmt>> {
    use syn::visit_mut::VisitMut;
    let body = match loop_expr {
        Expr::ForLoop(fl) => &fl.body,
        Expr::While(w) => &w.body,
        _ => return None,
    };
    // Names bound inside the loop (its index too): a returned value must
    // not read them.
    let mut inner = LetNames(Vec::new());
    syn::visit::Visit::visit_block(&mut inner, body);
    if let Expr::ForLoop(fl) = loop_expr {
        syn::visit::Visit::visit_pat(&mut inner, &fl.pat);
    }
    struct Returns<'a> {
        inner: &'a [String],
        values: Vec<Expr>,
        ok: bool,
    }
    impl VisitMut for Returns<'_> {
        fn visit_block_mut(&mut self, b: &mut Block) {
            let stmts = std::mem::take(&mut b.stmts);
            for s in stmts {
                match &s {
                    Stmt::Expr(Expr::Return(r), _) => {
                        let Some(v) = &r.expr else {
                            self.ok = false;
                            b.stmts.push(s);
                            continue;
                        };
                        let mut reads = PathNames(Vec::new());
                        syn::visit::Visit::visit_expr(&mut reads, v);
                        if reads.0.iter().any(|n| self.inner.contains(n)) {
                            self.ok = false;
                        }
                        let span = r.return_token.span;
                        let flag = format_ident!("__oxla_ret_{}", self.values.len(), span = span);
                        self.values.push((**v).clone());
                        b.stmts
                            .push(syn::parse_quote_spanned!(span=> #flag = true;));
                        b.stmts.push(syn::parse_quote_spanned!(span=> break;));
                    }
                    _ => {
                        let mut s = s;
                        self.visit_stmt_mut(&mut s);
                        b.stmts.push(s);
                    }
                }
            }
        }
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            match e {
                Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) | Expr::Closure(_) => {}
                _ => syn::visit_mut::visit_expr_mut(self, e),
            }
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    let mut the_loop = loop_expr.clone();
    let mut found = Returns {
        inner: &inner.0,
        values: Vec::new(),
        ok: true,
    };
    match &mut the_loop {
        Expr::ForLoop(fl) => found.visit_block_mut(&mut fl.body),
        Expr::While(w) => found.visit_block_mut(&mut w.body),
        _ => return None,
    }
    if found.values.is_empty() || !found.ok {
        return None;
    }
    let span = the_loop.span();
    let flags: Vec<syn::Ident> = (0..found.values.len())
        .map(|k| format_ident!("__oxla_ret_{}", k, span = span))
        .collect();
    let mut out = stmts[..i].to_vec();
    for f in &flags {
        out.push(syn::parse_quote_spanned!(span=> let mut #f = false;));
    }
    out.push(Stmt::Expr(the_loop, Some(Default::default())));
    let rest = crate::lower::control::flow::rewrite_returns(&stmts[i + 1..]).into_owned();
    let mut chain: Expr = syn::parse_quote_spanned!(span=> { #(#rest)* });
    for (f, v) in flags.iter().zip(&found.values).rev() {
        chain = syn::parse_quote_spanned!(span=> if #f { #v } else #chain);
    }
    out.push(Stmt::Expr(chain, None));
    Some(out)
}

/// The names `let` patterns (and closures' parameters) bind in a body.
struct LetNames(Vec<String>);

impl<'a> syn::visit::Visit<'a> for LetNames {
    fn visit_pat_ident(&mut self, p: &'a syn::PatIdent) {
        self.0.push(p.ident.to_string());
        syn::visit::visit_pat_ident(self, p);
    }
}

/// The single-identifier paths an expression reads.
struct PathNames(Vec<String>);

impl<'a> syn::visit::Visit<'a> for PathNames {
    fn visit_expr_path(&mut self, p: &'a syn::ExprPath) {
        if let Some(id) = p.path.get_ident() {
            self.0.push(id.to_string());
        }
    }
}
