//! Loops over the elements of an array, as Rust writes them, rewritten in
//! source to a loop over an index (JAX scans over an array's leading axis):
//!
//! - `for v in xs.iter()` (also `&xs`, `xs`, `xs.into_iter()`): `v` is
//!   `xs.slice(s![i])`, an element of a vector (a matrix is an error there,
//!   as `s![i]` covers one axis only);
//! - `for row in m.rows()` (also `m.outer_iter()`): `m.row(i)`;
//! - `for col in m.columns()`: `m.column(i)`;
//! - `.enumerate()` on any of them, with `(i, v)`.
//!
//! The index runs over `0..len` (`xs.len()`, `m.nrows()`, `m.ncols()`), so
//! the loop is a `for` loop of the IR with everything that gives (a run-time
//! trip count, reverse mode, batching). A loop over an array of a parameter
//! struct's parts is unrolled before this (see `tree`).

use quote::{format_ident, quote_spanned};
use syn::{Block, Expr};

/// The loop `fl` over an array's elements, rows or columns, as a block
/// with an index loop; `None` when it is not one (a range, or something
/// else the lowering reports). `id` makes the index's name distinct.
pub(crate) fn rewrite(fl: &syn::ExprForLoop, id: usize) -> Option<Block> {
    let span = fl.for_token.span;
    let mut e = crate::lower::strip_parens(&fl.expr);
    let mut enumerate = false;
    if let Expr::MethodCall(m) = e {
        if m.method == "enumerate" && m.args.is_empty() {
            enumerate = true;
            e = crate::lower::strip_parens(&m.receiver);
        }
    }
    // What is iterated over, and how one step reads it.
    enum Over {
        Elements,
        Rows,
        Columns,
    }
    let (array, over): (&Expr, Over) = match e {
        Expr::MethodCall(m) if m.args.is_empty() => match m.method.to_string().as_str() {
            "iter" | "into_iter" => (&m.receiver, Over::Elements),
            "rows" | "outer_iter" => (&m.receiver, Over::Rows),
            "columns" => (&m.receiver, Over::Columns),
            _ => return None,
        },
        Expr::Reference(r) if r.mutability.is_none() => (&r.expr, Over::Elements),
        Expr::Path(_) | Expr::Field(_) => (e, Over::Elements),
        _ => return None,
    };
    let i = format_ident!("__oxla_at_{}", id, span = span);
    let (len, step) = match over {
        Over::Elements => (
            quote_spanned!(span=> #array.len()),
            quote_spanned!(span=> #array.slice(s![#i])),
        ),
        Over::Rows => (
            quote_spanned!(span=> #array.nrows()),
            quote_spanned!(span=> #array.row(#i)),
        ),
        Over::Columns => (
            quote_spanned!(span=> #array.ncols()),
            quote_spanned!(span=> #array.column(#i)),
        ),
    };
    let bind = match (&*fl.pat, enumerate) {
        (syn::Pat::Tuple(t), true) if t.elems.len() == 2 => {
            let (k, v) = (&t.elems[0], &t.elems[1]);
            quote_spanned!(span=> let #k = #i; let #v = #step;)
        }
        (_, true) => return None,
        (syn::Pat::Wild(_), false) => quote_spanned!(span=>),
        (pat, false) => quote_spanned!(span=> let #pat = #step;),
    };
    let body = &fl.body.stmts;
    let label = &fl.label;
    syn::parse2(quote_spanned! {span=>
        {
            #label for #i in 0..#len {
                #bind
                #(#body)*
            }
        }
    })
    .ok()
}
