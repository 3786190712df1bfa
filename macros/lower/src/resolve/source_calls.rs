//! What a call of a name oxla does not know means, read from the caller's
//! source file, so that the error says it in the user's terms.
//!
//! A call `f(..)` of an unknown name defers the expansion to the macro `f!`
//! that a helper or a generated function defines (see `helpers`). When there
//! is none, rustc says "cannot find macro `f`", which leaks the mechanism.
//! Two cases are certain from the file alone, when the caller's name is
//! unique in the file and `f` is defined once in the caller's module:
//! - `fn f` there has no oxla attribute: a plain function, which must be
//!   marked `#[oxla::func]` to be called;
//! - `f` is an oxla function there whose calls lead back to the caller:
//!   functions calling each other, which inlining cannot do. The error is
//!   given once, in the cycle's first function by name; the others stop
//!   without one (their macros never appear).

use crate::errors::Errors;
use proc_macro2::{Delimiter, Ident, TokenStream, TokenTree};
use std::collections::HashMap;
use std::rc::Rc;
use syn::parse::Parser;

/// One function of the file (module level or in inline modules).
struct FileFn {
    /// The modules around it, outermost first.
    module: Vec<String>,
    /// Its name, then those of the functions its oxla attributes generate.
    names: Vec<String>,
    /// Whether it is a helper or carries an oxla attribute.
    oxla: bool,
    /// The bare names its body calls (`f(..)`).
    calls: Vec<String>,
    /// The functions its body declares (they shadow the module's).
    inner: Vec<String>,
}

/// What a file defines and imports, as far as a bare call's meaning goes.
#[derive(Default)]
struct FileInfo {
    fns: Vec<FileFn>,
    /// Every identifier a `use` of the file names, and every item name it
    /// defines (`fn`, `struct`, `const`, … anywhere in it).
    imported: std::collections::HashSet<String>,
    /// Whether the file may bring names the scan cannot see: a glob
    /// `use …::*`, a `macro_rules!`, an `include!`.
    opaque: bool,
}

thread_local! {
    /// Each file seen, by the text's hash.
    static FILES: std::cell::RefCell<HashMap<u64, Rc<FileInfo>>> = Default::default();
}

/// For the unknown calls of `caller`: `None` to resolve them through their
/// macros, or `Some(errors)` to stop (the errors may be empty: another
/// function reports the cycle).
pub(crate) fn diagnose(
    unknown: &[syn::Path],
    caller: &syn::ItemFn,
    opts: &crate::CodegenOptions,
) -> Option<Errors> {
    let bare: Vec<&syn::Ident> = unknown
        .iter()
        .filter(|p| p.leading_colon.is_none() && p.segments.len() == 1)
        .map(|p| &p.segments[0].ident)
        .collect();
    if bare.is_empty() {
        return None;
    }
    let at = (opts.source?)(caller.sig.ident.span())?;
    let info = file_info(&at.text);
    let fns = &info.fns;
    let name = crate::lower::ident_name(&caller.sig.ident);
    let mut mine = fns.iter().filter(|f| f.names[0] == name);
    let (me, None) = (mine.next()?, mine.next()) else {
        return None;
    };
    let local: Vec<&FileFn> = fns.iter().filter(|f| f.module == me.module).collect();
    let defined_by = |callee: &str| {
        let mut defs = local.iter().filter(|f| f.names.iter().any(|n| n == callee));
        match (defs.next(), defs.next()) {
            (Some(d), None) => Some(*d),
            _ => None,
        }
    };
    let mut errors = Errors::new();
    let mut stop = false;
    for id in bare {
        let callee = crate::lower::ident_name(id);
        if me.inner.contains(&callee) {
            continue;
        }
        let Some(def) = defined_by(&callee) else {
            // Nowhere in the file, not imported, nothing opaque: the name
            // means nothing here.
            let anywhere = fns
                .iter()
                .any(|f| f.names.contains(&callee) || f.inner.contains(&callee));
            // A type (`Params`, a struct resolved through its macro) or a
            // tuple struct is no function call.
            let lowercase = callee.starts_with(|c: char| c.is_lowercase() || c == '_');
            if lowercase && !anywhere && !info.opaque && !info.imported.contains(&callee) {
                errors.spanned(id, unknown_function(&callee));
                stop = true;
            }
            continue;
        };
        if !def.oxla {
            errors.spanned(
                id,
                format!(
                    "`{callee}` is a plain Rust function: an annotated function calls functions marked `#[oxla::func]` (their bodies are inlined at each call) and the functions oxla attributes generate; mark `fn {callee}` with `#[oxla::func]`"
                ),
            );
            stop = true;
            continue;
        }
        if let Some(cycle) = cycle_back(def, me, &defined_by) {
            stop = true;
            let first = cycle.iter().min().expect("a cycle has functions");
            if *first == name {
                let chain = std::iter::once(name.as_str())
                    .chain(cycle.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" → ");
                errors.spanned(
                    id,
                    format!(
                        "these functions call each other ({chain}): a called function is inlined at each call, so recursion is not supported"
                    ),
                );
            }
        }
    }
    stop.then_some(errors)
}

/// The functions from `start` along bare calls among oxla functions back
/// to `me` (`start … me`, by first name), if there is such a path.
fn cycle_back<'a>(
    start: &'a FileFn,
    me: &FileFn,
    defined_by: &dyn Fn(&str) -> Option<&'a FileFn>,
) -> Option<Vec<String>> {
    // Breadth first, each function once, remembering where it came from.
    let mut seen: Vec<(&FileFn, Option<usize>)> = vec![(start, None)];
    let mut i = 0;
    while i < seen.len() {
        let f = seen[i].0;
        if std::ptr::eq(f, me) {
            let mut path = Vec::new();
            let mut k = Some(i);
            while let Some(j) = k {
                path.push(seen[j].0.names[0].clone());
                k = seen[j].1;
            }
            path.reverse();
            return Some(path);
        }
        for c in &f.calls {
            if let Some(g) = defined_by(c).filter(|g| g.oxla) {
                if !seen.iter().any(|(s, _)| std::ptr::eq(*s, g)) {
                    seen.push((g, Some(i)));
                }
            }
        }
        i += 1;
    }
    None
}

/// The functions of the file `text` (parsed once per file).
fn file_info(text: &str) -> Rc<FileInfo> {
    let key = crate::resolve::helpers::fnv1a(text);
    if let Some(f) = FILES.with(|m| m.borrow().get(&key).cloned()) {
        return f;
    }
    let mut info = FileInfo::default();
    match text.parse::<TokenStream>() {
        Ok(tokens) => {
            collect(tokens.clone(), &mut Vec::new(), &mut info.fns);
            imports(tokens, &mut info);
        }
        Err(_) => info.opaque = true,
    }
    let out = Rc::new(info);
    FILES.with(|m| m.borrow_mut().insert(key, out.clone()));
    out
}

/// The identifiers the file's `use` items name, and whether it has a glob
/// import or a macro that may define items; scanned without recursion.
fn imports(tokens: TokenStream, info: &mut FileInfo) {
    let mut pending = vec![tokens];
    while let Some(ts) = pending.pop() {
        let tokens: Vec<TokenTree> = ts.into_iter().collect();
        let mut in_use = false;
        for (k, t) in tokens.iter().enumerate() {
            // An item's name: defined here.
            if let (TokenTree::Ident(kw), Some(TokenTree::Ident(name))) = (t, tokens.get(k + 1)) {
                let item = [
                    "fn", "struct", "enum", "union", "type", "trait", "const", "static", "mod",
                ];
                if item.iter().any(|w| kw == w) {
                    info.imported.insert(crate::lower::ident_name(name));
                }
            }
            match t {
                TokenTree::Ident(id) if id == "use" => in_use = true,
                TokenTree::Ident(id) if id == "macro_rules" || id == "include" => {
                    info.opaque = true;
                }
                TokenTree::Ident(id) if in_use => {
                    info.imported.insert(crate::lower::ident_name(id));
                }
                TokenTree::Punct(p) if p.as_char() == ';' => in_use = false,
                TokenTree::Punct(p) if in_use && p.as_char() == '*' => info.opaque = true,
                TokenTree::Group(g) if in_use => {
                    // `use a::{b, c::*}`: its names, in place.
                    let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                    let mut stack = vec![inner];
                    while let Some(ts) = stack.pop() {
                        for t in ts {
                            match t {
                                TokenTree::Ident(id) => {
                                    info.imported.insert(crate::lower::ident_name(&id));
                                }
                                TokenTree::Punct(p) if p.as_char() == '*' => info.opaque = true,
                                TokenTree::Group(g) => stack.push(g.stream().into_iter().collect()),
                                _ => {}
                            }
                        }
                    }
                }
                TokenTree::Group(g) => pending.push(g.stream()),
                _ => {}
            }
        }
    }
}

/// The error for a bare call of a name the file neither defines nor
/// imports, with the nearest names oxla knows.
fn unknown_function(name: &str) -> String {
    let known = crate::resolve::builtins::builtin_names();
    let mut near: Vec<(usize, &str)> = known
        .iter()
        .map(|k| (edit_distance(name, k), *k))
        .filter(|(d, k)| *d <= 2.max(name.len() / 3) || k.contains(name) || name.contains(*k))
        .collect();
    near.sort();
    let near: Vec<String> = near.iter().take(3).map(|(_, k)| format!("`{k}`")).collect();
    let hint = match (crate::lower::vocab::function_hint(name), near.is_empty()) {
        (Some(to), _) => format!(" (here it is {to})"),
        (None, true) => String::new(),
        (None, false) => format!(" (nearest: {})", near.join(", ")),
    };
    format!("`{name}` is not an oxla function{hint}, and no function of that name is defined or imported here: an annotated function calls oxla's vocabulary, functions marked `#[oxla::func]`, and the functions oxla attributes generate")
}

/// Levenshtein's distance, for suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The functions of one module's items, read from tokens rather than
/// parsed by syn: a file may hold expressions nested thousands deep, which
/// the lowering handles but a recursive parse of the whole file would not.
/// Items are `#[attr]… fn name … { body }` and `mod name { items }`; an
/// `impl` or `trait` block is skipped (its functions are called through a
/// type path).
fn collect(items: TokenStream, module: &mut Vec<String>, out: &mut Vec<FileFn>) {
    let tokens: Vec<TokenTree> = items.into_iter().collect();
    let mut attrs = TokenStream::new();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = tokens.get(i + 1) {
                    attrs.extend([tokens[i].clone(), TokenTree::Group(g.clone())]);
                    i += 2;
                    continue;
                }
            }
            TokenTree::Ident(k) if k == "mod" => {
                if let (Some(TokenTree::Ident(name)), Some(TokenTree::Group(g))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                {
                    if g.delimiter() == Delimiter::Brace {
                        module.push(name.to_string());
                        collect(g.stream(), module, out);
                        module.pop();
                        attrs = TokenStream::new();
                        i += 3;
                        continue;
                    }
                }
            }
            TokenTree::Ident(k) if k == "fn" => {
                let (Some(TokenTree::Ident(name)), Some(body)) = (
                    tokens.get(i + 1),
                    tokens[i..].iter().find_map(|t| match t {
                        TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => Some(g),
                        _ => None,
                    }),
                ) else {
                    i += 1;
                    continue;
                };
                out.push(file_fn(
                    name,
                    std::mem::take(&mut attrs),
                    body.stream(),
                    module,
                ));
                while !matches!(&tokens[i], TokenTree::Group(g) if std::ptr::eq(g, body)) {
                    i += 1;
                }
            }
            // An `impl`/`trait` block, a struct's fields, an `extern` block:
            // not a module's functions.
            TokenTree::Group(_) => attrs = TokenStream::new(),
            TokenTree::Punct(p) if p.as_char() == ';' => attrs = TokenStream::new(),
            _ => {}
        }
        i += 1;
    }
}

/// One function from its attributes' tokens and its body's.
fn file_fn(name: &Ident, attrs: TokenStream, body: TokenStream, module: &[String]) -> FileFn {
    let mut attrs = syn::Attribute::parse_outer
        .parse2(attrs)
        .unwrap_or_default();
    let helper = attrs.iter().any(crate::resolve::helpers::is_func_attr);
    let stack = crate::parse::attr::take_oxla_attrs(&mut attrs, &mut Errors::new());
    let mut names = vec![crate::lower::ident_name(name)];
    names.extend(
        crate::parse::attr::in_order(&stack)
            .iter()
            .filter_map(|a| a.name.as_ref().map(crate::lower::ident_name)),
    );
    let (calls, inner) = body_names(body);
    FileFn {
        module: module.to_vec(),
        names,
        oxla: helper || !stack.is_empty(),
        calls,
        inner,
    }
}

/// The bare names a body calls (`f(` not after `.`, `:` or `fn`) and the
/// functions it declares (`fn g`), scanned without recursion.
fn body_names(body: TokenStream) -> (Vec<String>, Vec<String>) {
    let (mut calls, mut inner) = (Vec::new(), Vec::new());
    let mut pending = vec![body];
    while let Some(ts) = pending.pop() {
        let tokens: Vec<TokenTree> = ts.into_iter().collect();
        for (k, t) in tokens.iter().enumerate() {
            let prev = k.checked_sub(1).map(|j| &tokens[j]);
            match t {
                TokenTree::Group(g) => pending.push(g.stream()),
                TokenTree::Ident(id) => {
                    let name = crate::lower::ident_name(id);
                    match prev {
                        Some(TokenTree::Ident(f)) if f == "fn" => inner.push(name),
                        Some(TokenTree::Punct(p)) if matches!(p.as_char(), '.' | ':') => {}
                        _ => {
                            if matches!(tokens.get(k + 1), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis)
                            {
                                calls.push(name);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
    (calls, inner)
}
