//! The vocabulary: the methods and functions an ndarray / jax.numpy user
//! would write, each lowered to IR ops: the array operations (`arrays`),
//! elementwise functions (`elementwise`), the rest of the reshape family
//! (`layout`), norms, diagonals and `einsum` (`linalg`), factorizations
//! and solves (`factorizations`), convolution and pooling (`conv`),
//! constructors
//! (`constructors`), sizes as values (`sizes`), slicing (`slicing`) and the
//! collectives over a named axis (`collectives`). `jax_names` maps JAX's
//! names onto them: the source of `docs/JAX_NUMPY.md` and its test.
//!
//! Each family's functions are one list of (name, usage) pairs; `functions`
//! joins them, and everything that names the vocabulary reads it: the
//! built-in names a bare call means (`resolve::builtins`), the check that a
//! helper does not take a built-in's name, the errors' lists of what is
//! supported, and the test that the crate docs' table names every function.

pub(crate) mod arrays;
pub(crate) mod collectives;
pub(crate) mod constructors;
pub(crate) mod conv;
pub(crate) mod elementwise;
pub(crate) mod factorizations;
#[cfg(test)]
pub(crate) mod jax_names;
#[cfg(test)]
mod jax_table;
pub(crate) mod layout;
pub(crate) mod linalg;
pub(crate) mod sizes;
pub(crate) mod slicing;

use oxla_core::ops::special::SpecialFn;

/// Every function of the vocabulary called by name, as (name, usage), by
/// family; a name may have several usages (`concatenate(..)` and its macro).
pub(crate) fn functions() -> Vec<(&'static str, String)> {
    let lists = [
        arrays::ARRAY_FUNCTIONS,
        layout::LAYOUT_FUNCTIONS,
        linalg::LINALG_FUNCTIONS,
        factorizations::FACTORIZATION_FUNCTIONS,
        conv::CONV_FUNCTIONS,
        elementwise::ELEMENTWISE_FUNCTIONS,
        constructors::CONSTRUCTOR_FUNCTIONS,
        collectives::COLLECTIVE_FUNCTIONS,
    ];
    let listed = lists
        .iter()
        .flat_map(|l| l.iter())
        .map(|(n, u)| (*n, u.to_string()));
    let special = SpecialFn::ALL
        .iter()
        .map(|s| (s.name(), format!("{}(x)", s.name())));
    listed.chain(special).collect()
}

#[cfg(test)]
/// Every method of the vocabulary by name (`sin`, `sum_axis`, `t`), read
/// from the methods' lists that the errors print, so the two cannot differ.
pub(crate) fn methods() -> Vec<&'static str> {
    let lists = [
        super::function::SUPPORTED_METHODS
            .strip_prefix("supported methods are ")
            .unwrap_or(super::function::SUPPORTED_METHODS),
        elementwise::ELEMENTWISE_METHODS,
        arrays::ARRAY_METHODS,
        layout::LAYOUT_METHODS,
        linalg::LINALG_METHODS,
    ];
    let mut names = Vec::new();
    for list in lists {
        for item in split_outside_brackets(list) {
            // "and the sizes len()", "view() and into_owned() are …"
            for part in item.split(" and ") {
                let part = part.trim();
                let part = part.strip_prefix("and ").unwrap_or(part);
                let part = part.strip_prefix("the sizes ").unwrap_or(part);
                let end = part
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(part.len());
                let name = &part[..end];
                if !name.is_empty() && !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    names
}

#[cfg(test)]
/// `list` split at the commas and semicolons outside brackets.
fn split_outside_brackets(list: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0i32, 0, Vec::new());
    for (k, c) in list.char_indices() {
        match c {
            '(' | '[' | '<' => depth += 1,
            ')' | ']' | '>' => depth -= 1,
            ',' | ';' if depth == 0 => {
                out.push(&list[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    out.push(&list[start..]);
    out
}

/// Whether `name` is a function of the vocabulary (`sum`, `softplus`, …).
pub(crate) fn is_function(name: &str) -> bool {
    functions().iter().any(|(n, _)| *n == name)
}

/// The functions' usages, for errors: "sum(x), mean(x), …".
pub(crate) fn supported_functions() -> String {
    let usages: Vec<String> = functions().into_iter().map(|(_, u)| u).collect();
    format!(
        "supported functions are {} (the collectives' `i` is the `axis_name` of a `#[pmap]` or `#[vmap]`; all also as `oxla::…`)",
        usages.join(", ")
    )
}

/// Methods users reach for under another library's name, and the spelling
/// here (numpy's, PyTorch's, nalgebra's).
const METHOD_ALIASES: &[(&str, &str)] = &[
    ("get_row", "`x.row(i)` or `x[i]`"),
    ("row_view", "`x.row(i)` or `x[i]`"),
    ("col", "`x.column(j)`"),
    ("get_column", "`x.column(j)`"),
    ("column_view", "`x.column(j)`"),
    ("transpose", "`x.t()` (or `x.permuted_axes([..])`)"),
    ("T", "`x.t()`"),
    (
        "size",
        "`x.len()` (the leading axis) or `x.len_of(Axis(k))`",
    ),
    ("numel", "`x.len()`"),
    ("view_as", "`x.into_shape_with_order(shape)`"),
    (
        "unsqueeze",
        "`x.insert_axis(Axis(k))` or `expand_dims(x, Axis(k))`",
    ),
    (
        "expand_dims",
        "`x.insert_axis(Axis(k))` or `expand_dims(x, Axis(k))`",
    ),
    ("diagonal", "`x.diag()`"),
    ("norm", "`norm(x)`"),
    ("norm_l2", "`norm(x)`"),
    ("matvec", "`a.dot(&v)`"),
    ("mv", "`a.dot(&v)`"),
    ("mm", "`a.dot(&b)` or `matmul(a, b)`"),
    ("matmul", "`a.dot(&b)` or `matmul(a, b)`"),
    ("prod", "`x.product()` or `prod(x)`"),
    ("clip", "`x.clamp(lo, hi)` or `clip(x, lo, hi)`"),
    ("argmax", "`argmax(x[, Axis(k)])`"),
    ("argmin", "`argmin(x[, Axis(k)])`"),
    ("logsumexp", "`logsumexp(x[, Axis(k)])`"),
    ("repeat", "`repeat(x, n[, Axis(k)])`"),
    ("tile", "`tile(x, reps)`"),
];

/// A hint for an unknown method `name`: its spelling here when users know
/// it by another library's name. (No guess by spelling: `sinh` is not
/// `sin`, nor `cbrt` `sqrt`.)
pub(crate) fn method_hint(name: &str) -> Option<String> {
    if let Some((_, to)) = METHOD_ALIASES.iter().find(|(n, _)| *n == name) {
        return Some(format!(" (here it is {to})"));
    }
    if matches!(
        name,
        "rows" | "columns" | "iter" | "outer_iter" | "axis_iter" | "enumerate" | "into_iter"
    ) {
        return Some(" (an iterator is a `for` loop's iterable only: `for r in x.rows()`, `for (i, v) in x.iter().enumerate()`)".to_string());
    }
    None
}

/// Functions users reach for under numpy's or another library's name, and
/// the spelling here.
const FUNCTION_ALIASES: &[(&str, &str)] = &[
    ("matvec", "`a.dot(&v)` or `dot(a, v)`"),
    ("vecmat", "`v.dot(&a)` or `dot(v, a)`"),
    ("mv", "`a.dot(&v)` or `dot(a, v)`"),
    ("mm", "`matmul(a, b)` or `a.dot(&b)`"),
    ("bmm", "`matmul(a, b)`"),
    ("inner", "`dot(a, b)`"),
    ("vdot", "`dot(a, b)`"),
    ("tensordot", "`einsum(\"ij,jk->ik\", a, b)`"),
    ("transpose", "`x.t()` or `x.permuted_axes([..])`"),
    ("reshape", "`x.reshape(shape)`"),
    ("ravel", "`x.flatten()`"),
    ("flatten", "`x.flatten()`"),
    ("amax", "`max(x)`"),
    ("amin", "`min(x)`"),
    ("average", "`mean(x)`"),
    ("maximum", "`a.max(b)`"),
    ("minimum", "`a.min(b)`"),
    ("trace", "`x.diag().sum()`"),
    ("concat", "`concatenate(Axis(k), &[a.view(), b.view()])`"),
    ("hstack", "`concatenate(Axis(-1), &[a.view(), b.view()])`"),
    ("vstack", "`concatenate(Axis(0), &[a.view(), b.view()])`"),
    ("abs", "`x.abs()`"),
    ("exp", "`x.exp()`"),
    ("log", "`x.ln()`"),
    ("sqrt", "`x.sqrt()`"),
    ("tanh", "`x.tanh()`"),
    ("sin", "`x.sin()`"),
    ("cos", "`x.cos()`"),
    ("square", "`x.square()`"),
    ("var", "`x.var(ddof)`"),
    ("std", "`x.std(ddof)`"),
];

/// A hint for an unknown function `name`: its spelling here when users know
/// it by another name, else `None` (the caller names the nearest built-ins).
pub(crate) fn function_hint(name: &str) -> Option<&'static str> {
    FUNCTION_ALIASES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, to)| *to)
}

/// The error for `x.iter().fold(init, f)`: the reduction the fold computes
/// when `f` says (`f64::max`, `|a, b| a.max(*b)`, `|a, b| a + b`), and the
/// reductions of the vocabulary.
pub(crate) fn fold_error(m: &syn::ExprMethodCall) -> String {
    use syn::Expr;
    let reducer = |e: &Expr| -> Option<&'static str> {
        let by_name = |n: &str| match n {
            "max" => Some("max(x)"),
            "min" => Some("min(x)"),
            "add" => Some("sum(x)"),
            "mul" => Some("x.product()"),
            _ => None,
        };
        match arrays::strip(e) {
            Expr::Path(p) => by_name(&p.path.segments.last()?.ident.to_string()),
            Expr::Closure(c) => match arrays::strip(&c.body) {
                Expr::MethodCall(mc) => by_name(&mc.method.to_string()),
                Expr::Call(call) => match &*call.func {
                    Expr::Path(p) => by_name(&p.path.segments.last()?.ident.to_string()),
                    _ => None,
                },
                Expr::Binary(b) => match b.op {
                    syn::BinOp::Add(_) => Some("sum(x)"),
                    syn::BinOp::Mul(_) => Some("x.product()"),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        }
    };
    let this = match m.args.iter().nth(1).and_then(reducer) {
        Some(r) => format!("this fold is `{r}`; "),
        None => String::new(),
    };
    let reductions: Vec<String> = functions()
        .into_iter()
        .filter(|(n, _)| {
            matches!(
                *n,
                "sum"
                    | "mean"
                    | "max"
                    | "min"
                    | "prod"
                    | "logsumexp"
                    | "argmax"
                    | "argmin"
                    | "norm"
            )
        })
        .map(|(_, u)| format!("`{u}`"))
        .collect();
    format!(
        "`fold` is not supported: {this}the reductions are {}, their methods (`x.sum()`, `x.max()`, `x.sum_axis(Axis(k))`, …), or a `for` loop over the array",
        reductions.join(", ")
    )
}

#[cfg(test)]
mod tests {
    /// The crate docs' vocabulary (the `oxla` crate's rustdoc) names every
    /// function the lowering takes, so the two cannot drift apart.
    #[test]
    fn crate_docs_name_every_function() {
        let docs = include_str!("../../../../../src/lib.rs");
        let missing: Vec<&str> = super::functions()
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| !docs.contains(&format!("`{n}")) && !docs.contains(&format!(" {n}(")))
            .collect();
        assert!(missing.is_empty(), "not in src/lib.rs's docs: {missing:?}");
    }

    /// A bare call of every function of the vocabulary is a built-in.
    #[test]
    fn every_function_of_the_vocabulary_is_a_builtin_name() {
        for (n, _) in super::functions() {
            assert!(crate::resolve::builtins::is_builtin_name(n), "{n}");
        }
        assert!(super::is_function("einsum") && super::is_function("tile"));
    }
}
