//! Where an annotated function is written: at module level (or in a block)
//! or inside an `impl` or `trait` block. An attribute macro is not told, but
//! it matters: the macro through which other annotated functions call a
//! generated function (see `helpers`) can only be defined where items are,
//! never among an `impl`'s associated items. The proc-macro crate reads the
//! function's source file and asks `enclosing` about its line.
//!
//! The scan is lexical: comments, strings, raw strings and char literals are
//! skipped, and each `{` is classified by the words before it since the last
//! `;`, `{` or `}` at its level (`impl<T> Foo for Bar<T> where … {` opens an
//! impl block, `fn f() -> impl Trait {` a function body).

/// Where a span is in its source file.
#[derive(Clone, Debug)]
pub struct SourceAt {
    /// The whole file.
    pub text: std::rc::Rc<str>,
    /// The span's line (1-based) and column.
    pub line: usize,
    pub column: usize,
    /// The span's own text.
    pub snippet: String,
}

/// What the innermost block around a position is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enclosing {
    /// The file's top level or a `mod { … }`.
    Module,
    /// An inherent `impl` block.
    Impl,
    /// An `impl Trait for Type` block: only the trait's items may be in it.
    TraitImpl,
    /// A `trait` definition.
    Trait,
    /// Any other block: a function body, a `const` block, …
    Block,
}

impl Enclosing {
    /// Whether items such as `macro_rules!` and `use` may be written here.
    pub fn allows_items(self) -> bool {
        matches!(self, Enclosing::Module | Enclosing::Block)
    }
}

/// The block around the byte `offset` of `src`.
pub fn enclosing(src: &str, offset: usize) -> Enclosing {
    scan(src, offset).0
}

/// The inline modules around the byte `offset` of `src`, outermost first.
pub fn module_path(src: &str, offset: usize) -> Vec<String> {
    scan(src, offset).1
}

/// The block around `offset` and the names of the `mod`s around it.
fn scan(src: &str, offset: usize) -> (Enclosing, Vec<String>) {
    let b = src.as_bytes();
    let end = offset.min(b.len());
    // Open braces, innermost last: their kind, the paren depth outside and
    // a module's name.
    let mut stack: Vec<(Enclosing, usize, Option<String>)> = Vec::new();
    // The word after `mod` in the current header.
    let mut mod_name: Option<&str> = None;
    let mut parens = 0usize;
    // The first word of the current item's header, at this level.
    let mut header: Option<&str> = None;
    // Whether the `impl` header has its `for` (not `for<'a>`, a bound's).
    let mut impl_for = false;
    let mut i = 0;
    while i < end {
        let c = b[i];
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < end && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0usize;
                while i < end {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                continue;
            }
            b'"' => {
                i = skip_string(b, i + 1, None);
                continue;
            }
            b'\'' => {
                i = skip_quote(src, i);
                continue;
            }
            b'(' | b'[' => parens += 1,
            b')' | b']' => parens = parens.saturating_sub(1),
            b';' if stack.last().map_or(0, |s| s.1) == parens => {
                header = None;
                impl_for = false;
                mod_name = None;
            }
            b'{' => {
                let kind = match header {
                    Some("impl") if impl_for => Enclosing::TraitImpl,
                    Some("impl") => Enclosing::Impl,
                    Some("trait") => Enclosing::Trait,
                    Some("mod") => Enclosing::Module,
                    _ => Enclosing::Block,
                };
                let name = (kind == Enclosing::Module).then(|| mod_name.unwrap_or("").to_string());
                stack.push((kind, parens, name));
                header = None;
                impl_for = false;
                mod_name = None;
            }
            b'}' => {
                if let Some((_, p, _)) = stack.pop() {
                    parens = p;
                }
                header = None;
                impl_for = false;
                mod_name = None;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < end && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let word = &src[start..i];
                // A raw (byte) string: `r"…"`, `r#"…"#`, `br"…"`.
                if matches!(word, "r" | "br" | "cr") {
                    let hashes = b[i..end].iter().take_while(|c| **c == b'#').count();
                    if b.get(i + hashes) == Some(&b'"') {
                        i = skip_string(b, i + hashes + 1, Some(hashes));
                        continue;
                    }
                }
                let at_level = stack.last().map_or(0, |s| s.1) == parens;
                if at_level && header == Some("mod") && word != "mod" && mod_name.is_none() {
                    mod_name = Some(word);
                }
                let modifier = matches!(
                    word,
                    "pub" | "crate" | "unsafe" | "default" | "async" | "auto"
                );
                if at_level && header.is_none() && !modifier {
                    header = Some(word);
                }
                let next = b[i..end].iter().find(|c| !c.is_ascii_whitespace());
                if at_level && header == Some("impl") && word == "for" && next != Some(&b'<') {
                    impl_for = true;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    let kind = stack.last().map_or(Enclosing::Module, |s| s.0);
    let mods = stack.into_iter().filter_map(|s| s.2).collect();
    (kind, mods)
}

/// The byte after a string whose contents start at `i`: a plain one with
/// escapes, or a raw one (`raw`: its number of `#`s) ending at `"` and as
/// many `#`s.
fn skip_string(b: &[u8], mut i: usize, raw: Option<usize>) -> usize {
    while i < b.len() {
        match (b[i], raw) {
            (b'\\', None) => i += 2,
            (b'"', None) => return i + 1,
            (b'"', Some(h)) if b[i + 1..].iter().take(h).filter(|c| **c == b'#').count() == h => {
                return i + 1 + h;
            }
            _ => i += 1,
        }
    }
    i
}

/// The byte after a char literal (`'x'`, `'\n'`, `'\u{7f}'`) or after the
/// quote of a lifetime (`'a`).
fn skip_quote(src: &str, i: usize) -> usize {
    let b = src.as_bytes();
    if b.get(i + 1) == Some(&b'\\') {
        // An escape: the closing quote is the first one after the escaped
        // character.
        let mut j = i + 3;
        while j < b.len() && b[j] != b'\'' {
            j += 1;
        }
        return j + 1;
    }
    let mut chars = src[i + 1..].char_indices();
    match (chars.next(), chars.next()) {
        (Some(_), Some((k, '\''))) => i + 1 + k + 1,
        _ => i + 1,
    }
}

/// The byte offset of `line` (1-based) and `column` (1-based, in chars) of
/// `src`.
pub fn offset_of(src: &str, line: usize, column: usize) -> Option<usize> {
    let start = if line <= 1 {
        0
    } else {
        src.match_indices('\n').nth(line - 2)?.0 + 1
    };
    let rest = &src[start..];
    let col = rest
        .char_indices()
        .nth(column.saturating_sub(1))
        .map(|(k, _)| k)?;
    Some(start + col)
}

/// The byte offset of the text `name` at `line` and `column` (tried
/// 1-based, then 0-based), if it is there.
fn find_at(src: &str, line: usize, column: usize, name: &str) -> Option<usize> {
    [column, column + 1]
        .into_iter()
        .filter_map(|c| offset_of(src, line, c))
        .find(|at| src[*at..].starts_with(name))
}

/// Whether the two places are in one inline module of one file, where a
/// path (a constant's `RATE`, `consts::G`, `super::K`) means one thing.
pub fn same_module(a: &SourceAt, b: &SourceAt) -> bool {
    if !std::rc::Rc::ptr_eq(&a.text, &b.text) {
        return false;
    }
    let (Some(x), Some(y)) = (
        find_at(&a.text, a.line, a.column, &a.snippet),
        find_at(&b.text, b.line, b.column, &b.snippet),
    ) else {
        return false;
    };
    module_path(&a.text, x) == module_path(&b.text, y)
}

/// The block around a function whose name `name` is at `line` (1-based)
/// and `column` of `src`. The column is tried 1-based, then 0-based. `None`
/// when the name is not there (the span came from a macro elsewhere, or the
/// file changed since).
pub fn enclosing_at(src: &str, line: usize, column: usize, name: &str) -> Option<Enclosing> {
    find_at(src, line, column, name).map(|at| enclosing(src, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(src: &str, marker: &str) -> Enclosing {
        enclosing(src, src.find(marker).expect("marker"))
    }

    #[test]
    fn classifies_blocks() {
        let src = r##"
            use std::fmt;
            fn top() -> impl Iterator<Item = u8> { HERE_A; std::iter::empty() }
            struct S { x: [u8; 3] }
            impl<T: Clone> fmt::Debug for Wrap<T> where T: for<'a> Fn(&'a u8) {
                // a comment with { and }
                fn fmt(&self) { let s = "}"; let c = '{'; let l: &'static str = r#"{"#; HERE_B; }
                const K: [u8; 2] = [1; 2];
                HERE_C
            }
            pub(crate) unsafe trait Tr { HERE_D }
            mod m { /* { */ HERE_E }
            const _: () = { HERE_F };
            impl S { fn f(x: [f64; 3]) -> f64 { x[0] } HERE_G }
            impl<F: for<'a> Fn(&'a u8)> W<F> where F: Copy { HERE_I }
            HERE_H
        "##;
        assert_eq!(at(src, "HERE_A"), Enclosing::Block);
        assert_eq!(at(src, "HERE_B"), Enclosing::Block);
        assert_eq!(at(src, "HERE_C"), Enclosing::TraitImpl);
        assert_eq!(at(src, "HERE_D"), Enclosing::Trait);
        assert_eq!(at(src, "HERE_E"), Enclosing::Module);
        assert_eq!(at(src, "HERE_F"), Enclosing::Block);
        assert_eq!(at(src, "HERE_G"), Enclosing::Impl);
        assert_eq!(at(src, "HERE_H"), Enclosing::Module);
        assert_eq!(at(src, "HERE_I"), Enclosing::Impl);
    }

    #[test]
    fn names_the_modules_around_a_position() {
        let src = "const A: f64 = 1.0;\nmod outer {\n    pub mod inner { fn f() { HERE_A } }\n    fn g() { HERE_B }\n}\nfn h() { HERE_C }\n";
        let at = |m: &str| module_path(src, src.find(m).unwrap());
        assert_eq!(at("HERE_A"), ["outer", "inner"]);
        assert_eq!(at("HERE_B"), ["outer"]);
        assert!(at("HERE_C").is_empty());
    }

    #[test]
    fn finds_a_name_by_line_and_column() {
        let src = "struct M;\nimpl M {\n    fn loss() {}\n}\nfn free() {}\n";
        assert_eq!(enclosing_at(src, 3, 8, "loss"), Some(Enclosing::Impl));
        assert_eq!(enclosing_at(src, 5, 4, "free"), Some(Enclosing::Module));
        assert_eq!(enclosing_at(src, 5, 3, "free"), Some(Enclosing::Module));
        assert_eq!(enclosing_at(src, 5, 4, "other"), None);
        assert_eq!(enclosing_at(src, 40, 1, "free"), None);
    }
}

/// The hook that reads the source at a span (see `CodegenOptions::source`).
type SourceHook = fn(proc_macro2::Span) -> Option<SourceAt>;

thread_local! {
    /// The source hook and the name of the annotated function being
    /// expanded (see `with_caller`).
    static CALLER: std::cell::RefCell<Option<(SourceHook, proc_macro2::Span)>> =
        const { std::cell::RefCell::new(None) };
}

/// Run `f` with `name` (the span of the function being expanded) as the
/// caller `in_callers_module` compares with.
pub(crate) fn with_caller<R>(
    source: Option<SourceHook>,
    name: proc_macro2::Span,
    f: impl FnOnce() -> R,
) -> R {
    let before = CALLER.with(|c| c.replace(source.map(|s| (s, name))));
    let out = f();
    CALLER.with(|c| *c.borrow_mut() = before);
    out
}

/// Whether `span` (a constant's path in an inlined body) is in the module
/// of the function being expanded, in the same file: there its path means
/// the same constant. `false` when either place is not known.
pub(crate) fn in_callers_module(span: proc_macro2::Span) -> bool {
    let Some((source, caller)) = CALLER.with(|c| *c.borrow()) else {
        return false;
    };
    match (source(caller), source(span)) {
        (Some(a), Some(b)) => same_module(&a, &b),
        _ => false,
    }
}
