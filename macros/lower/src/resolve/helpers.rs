//! Functions calling functions: `#[oxla::func]` helpers, inlined at each
//! call site so that every transform goes through them.
//!
//! A helper's expansion emits the function itself (as `#[jit]` would) and a
//! uniquely named `#[macro_export]` macro re-exported under the function's
//! name, whose expansion hands the helper's payload — its source, with the
//! sources of the helpers it calls, already resolved where it is defined — to
//! a callback. An annotated function that calls an unknown `path::f(..)`
//! expands to `path::f! { (::oxla::__private::__resolve) { <state> } }`;
//! the helper's macro answers
//! `::oxla::__private::__resolve! { <state> <payload> }`, which carries on
//! with the next unknown call and finally expands the function with every
//! helper known. Name resolution is rustc's: `path::f` names the macro
//! wherever it names the function (a `use` imports both).
//!
//! The payload is source, not IR: each call lowers the helper's body with
//! its parameters bound to the argument values, so shapes and lengths unify
//! per call, exactly as if the body were written inline.

use crate::errors::Errors;
use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, ToTokens};
use std::cell::RefCell;
use std::rc::Rc;

/// One helper: its source and the helpers its body calls, each under the
/// path its body writes.
#[derive(Clone, Debug)]
pub struct Helper {
    pub item: syn::ItemFn,
    pub callees: HelperTable,
    /// For a function an annotated function's expansion generates (rather
    /// than an `#[oxla::func]` helper): its name. `item` then carries the
    /// attributes, and a call inlines that function's IR (see
    /// `transformed_call`).
    pub generated: Option<String>,
}

/// One parameter struct (`#[derive(oxla::Tree)]`): its definition and the
/// structs its fields name, each under the path the definition writes.
#[derive(Clone, Debug)]
pub struct TreeEntry {
    pub item: syn::ItemStruct,
    pub callees: HelperTable,
}

/// The helpers a body may call, by the path it writes (`relu`,
/// `nn::relu`), and the parameter structs its signature names. `by_name`
/// looks up by the last segment only: the build script, which sees the
/// crate's source files but not rustc's name resolution, finds helpers that
/// way.
#[derive(Clone, Debug, Default)]
pub struct HelperTable {
    entries: Vec<(String, Rc<Helper>)>,
    trees: Vec<(String, Rc<TreeEntry>)>,
    by_name: bool,
}

impl HelperTable {
    /// A table that finds each helper by its function's name, whatever path
    /// the call writes (the build script's view of one crate).
    pub fn by_name(helpers: Vec<syn::ItemFn>) -> HelperTable {
        let mut t = HelperTable {
            entries: Vec::new(),
            trees: Vec::new(),
            by_name: true,
        };
        for item in helpers {
            let name = item.sig.ident.to_string();
            let h = Rc::new(Helper {
                item,
                callees: HelperTable::default(),
                generated: None,
            });
            t.entries.push((name, h));
        }
        t
    }

    /// The table with the parameter structs `trees` added, each found by
    /// its name (the build script's view).
    pub fn with_trees(mut self, trees: Vec<syn::ItemStruct>) -> HelperTable {
        for item in trees {
            let name = item.ident.to_string();
            self.trees.push((
                name,
                Rc::new(TreeEntry {
                    item,
                    callees: HelperTable::default(),
                }),
            ));
        }
        self
    }

    /// The table with the functions annotated functions' expansions
    /// generate added, each `(name, annotated item)` found by its name (the
    /// build script's view: `loss_grad` of `#[grad(loss_grad)] fn loss`).
    pub fn with_generated(mut self, generated: Vec<(String, syn::ItemFn)>) -> HelperTable {
        for (name, item) in generated {
            let h = Rc::new(Helper {
                item,
                callees: HelperTable::default(),
                generated: Some(name.clone()),
            });
            self.entries.push((name, h));
        }
        self
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.trees.is_empty()
    }

    /// The parameter struct a type path means, with the table its fields'
    /// struct types are resolved in.
    pub(crate) fn get_tree(&self, path: &syn::Path) -> Option<(Rc<TreeEntry>, HelperTable)> {
        if self.by_name {
            let name = path.segments.last()?.ident.to_string();
            let t = self.trees.iter().find(|(k, _)| *k == name)?.1.clone();
            return Some((t, self.clone()));
        }
        let key = path_key(path);
        let t = self.trees.iter().find(|(k, _)| *k == key)?.1.clone();
        let callees = t.callees.clone();
        Some((t, callees))
    }

    fn insert(&mut self, key: String, helper: Helper) {
        self.entries.push((key, Rc::new(helper)));
    }

    /// The helper a call of `path` means, with the table its body's calls
    /// are resolved in.
    pub(crate) fn get(&self, path: &syn::Path) -> Option<(Rc<Helper>, HelperTable)> {
        if self.by_name {
            let name = path.segments.last()?.ident.to_string();
            let h = self.entries.iter().find(|(k, _)| *k == name)?.1.clone();
            return Some((h, self.clone()));
        }
        let key = path_key(path);
        let h = self.entries.iter().find(|(k, _)| *k == key)?.1.clone();
        let callees = h.callees.clone();
        Some((h, callees))
    }

    fn contains(&self, path: &syn::Path) -> bool {
        let key = path_key(path);
        self.entries.iter().any(|(k, _)| *k == key) || self.trees.iter().any(|(k, _)| *k == key)
    }
}

/// A path as a table key: its tokens without spaces.
fn path_key(path: &syn::Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}

/// Whether a call of `path` may name a helper (and is deferred to its
/// macro when unknown): a plain path without generic arguments whose
/// segments before the last are modules (lower case), not types
/// (`Vec::new`, `f64::exp`) .
pub(crate) fn may_be_helper(path: &syn::Path) -> bool {
    let segs: Vec<&syn::PathSegment> = path.segments.iter().collect();
    let Some((last, modules)) = segs.split_last() else {
        return false;
    };
    last.arguments.is_none()
        && modules.iter().all(|s| {
            let name = s.ident.to_string();
            s.arguments.is_none()
                && !name.starts_with(|c: char| c.is_ascii_uppercase())
                && !matches!(
                    name.as_str(),
                    "f32" | "f64" | "i32" | "i64" | "u32" | "u64" | "usize" | "isize" | "bool"
                )
        })
}

thread_local! {
    /// The helpers the function being lowered may call, and the unknown
    /// calls met while lowering it (first met first). Scoped to one
    /// expansion by `with_helpers`; a thread-local so that the transform
    /// stack and code generation need not pass it along.
    static CONTEXT: RefCell<(HelperTable, Vec<syn::Path>)> = RefCell::default();
}

/// Run `f` with `table` as the helpers lowering may call; returns `f`'s
/// result and the unknown calls it met that may name a helper.
pub fn with_helpers<T>(table: &HelperTable, f: impl FnOnce() -> T) -> (T, Vec<syn::Path>) {
    let saved =
        CONTEXT.with(|c| std::mem::replace(&mut *c.borrow_mut(), (table.clone(), Vec::new())));
    let out = f();
    let (_, unknown) = CONTEXT.with(|c| std::mem::replace(&mut *c.borrow_mut(), saved));
    (out, unknown)
}

/// The helpers of the expansion under way.
pub(crate) fn current() -> HelperTable {
    CONTEXT.with(|c| c.borrow().0.clone())
}

/// Replace the current table (while lowering a helper's body: its own
/// calls), returning the previous one.
pub(crate) fn swap_current(table: HelperTable) -> HelperTable {
    CONTEXT.with(|c| std::mem::replace(&mut c.borrow_mut().0, table))
}

/// Note a call no helper answers.
pub(crate) fn note_unknown(path: &syn::Path) {
    CONTEXT.with(|c| {
        let mut c = c.borrow_mut();
        let key = path_key(path);
        if !c.1.iter().any(|p| path_key(p) == key) {
            c.1.push(path.clone());
        }
    });
}

/// What a `__resolve!` invocation carries: the attribute being expanded
/// (`func` for a helper), its arguments, the item, the helpers found so far
/// and the path whose helper answered, followed by that helper's payload.
struct ResolveState {
    kind: syn::Ident,
    args: TokenStream,
    item: TokenStream,
    table: TokenStream,
    requested: TokenStream,
    payload: TokenStream,
}

/// The deepest chain of helper look-ups one expansion makes, against runaway
/// expansion.
const MAX_HELPERS: usize = 256;

/// The next step of an expansion whose body calls the helpers `unknown`
/// (those `table` lacks): ask the first one's macro for its payload. `None`
/// when every call is known.
pub(crate) fn next_step(
    kind: &str,
    args: &TokenStream,
    item: &TokenStream,
    table_tokens: &TokenStream,
    table: &HelperTable,
    unknown: &[syn::Path],
) -> Option<TokenStream> {
    let path = unknown.iter().find(|p| !table.contains(p))?;
    let kind = format_ident!("{}", kind);
    let mut mac = path.clone();
    // The macro is named where the call names the function: errors (no such
    // macro) point at the call.
    if let Some(last) = mac.segments.last_mut() {
        last.ident = syn::Ident::new(&last.ident.to_string(), path_span(path));
    }
    let resolve = crate::codegen::paths::resolve_macro();
    Some(quote! {
        #mac! { (#resolve) { #kind (#args) { #item } { #table_tokens } (#path) } }
    })
}

fn path_span(path: &syn::Path) -> Span {
    path.segments
        .last()
        .map(|s| s.ident.span())
        .unwrap_or_else(Span::call_site)
}

fn group(tt: Option<TokenTree>, delim: Delimiter) -> Option<TokenStream> {
    match tt {
        Some(TokenTree::Group(g)) if g.delimiter() == delim => Some(g.stream()),
        _ => None,
    }
}

fn parse_state(input: TokenStream) -> Option<ResolveState> {
    let mut it = input.into_iter();
    let kind = match it.next()? {
        TokenTree::Ident(i) => i,
        _ => return None,
    };
    Some(ResolveState {
        kind,
        args: group(it.next(), Delimiter::Parenthesis)?,
        item: group(it.next(), Delimiter::Brace)?,
        table: group(it.next(), Delimiter::Brace)?,
        requested: group(it.next(), Delimiter::Parenthesis)?,
        payload: group(it.next(), Delimiter::Brace)?,
    })
}

/// A table in its token form: `(path) { { item } { table } }` per helper.
fn parse_table(tokens: TokenStream, depth: usize) -> Option<HelperTable> {
    if depth > MAX_HELPERS {
        return None;
    }
    let mut table = HelperTable::default();
    let mut it = tokens.into_iter();
    while let Some(tt) = it.next() {
        let path = group(Some(tt), Delimiter::Parenthesis)?;
        let payload = group(it.next(), Delimiter::Brace)?;
        let path: syn::Path = syn::parse2(path).ok()?;
        match parse_payload(payload, depth + 1)? {
            Payload::Helper(h) => table.insert(path_key(&path), h),
            Payload::Tree(t) => table.trees.push((path_key(&path), Rc::new(t))),
        }
    }
    Some(table)
}

/// What a macro answers: a helper or a parameter struct.
enum Payload {
    Helper(Helper),
    Tree(TreeEntry),
}

/// A payload: `{ item } { table }`, the item a function or a struct, and
/// for a generated function `{ name }`.
fn parse_payload(tokens: TokenStream, depth: usize) -> Option<Payload> {
    let mut it = tokens.into_iter();
    let item = group(it.next(), Delimiter::Brace)?;
    let callees = parse_table(group(it.next(), Delimiter::Brace)?, depth)?;
    let generated = match it.next() {
        None => None,
        tt => Some(group(tt, Delimiter::Brace)?.to_string()),
    };
    if let Ok(item) = syn::parse2::<syn::ItemStruct>(item.clone()) {
        return Some(Payload::Tree(TreeEntry { item, callees }));
    }
    let item = syn::parse2(item).ok()?;
    Some(Payload::Helper(Helper {
        item,
        callees,
        generated,
    }))
}

/// `__resolve!`: one helper's payload arrived; record it and carry on.
pub fn expand_resolve(input: TokenStream, opts: &crate::CodegenOptions) -> TokenStream {
    let Some(state) = parse_state(input) else {
        return quote!(
            ::core::compile_error! { "oxla: `__resolve!` is generated code; do not invoke it by hand" }
        );
    };
    let ResolveState {
        kind,
        args,
        item,
        mut table,
        requested,
        payload,
    } = state;
    table.extend(quote!((#requested) { #payload }));
    if table.clone().into_iter().count() / 2 > MAX_HELPERS {
        return quote!(
            ::core::compile_error! { "oxla: a function calls more than 256 helpers, directly or through other helpers" }
        );
    }
    let Some(helpers) = parse_table(table.clone(), 0) else {
        return quote!(
            ::core::compile_error! { "oxla: a helper's macro answered with something that is not a helper; is it an `#[oxla::func]`?" }
        );
    };
    let kind_name = kind.to_string();
    if kind_name == "func" {
        return expand_func_with(args, item, &table, &helpers, opts);
    }
    if kind_name == crate::tree::DERIVE_KIND {
        return crate::tree::expand_derive_with(item, &table, &helpers);
    }
    let which = match crate::parse::attr::TransformKind::from_name(&kind_name) {
        Some(kind) => crate::parse::attr::AttrName::One(kind),
        None if kind_name == crate::parse::attr::LIST_ATTR => crate::parse::attr::AttrName::List,
        None => {
            return quote!(
                ::core::compile_error! { "oxla: `__resolve!` names an unknown attribute" }
            )
        }
    };
    crate::expand_with(which, args, item, &table, &helpers, opts)
}

/// `#[oxla::func]` on `item`.
pub fn expand_func(
    args: TokenStream,
    item: TokenStream,
    opts: &crate::CodegenOptions,
) -> TokenStream {
    expand_func_with(
        args,
        item,
        &TokenStream::new(),
        &HelperTable::default(),
        opts,
    )
}

fn expand_func_with(
    args: TokenStream,
    item_tokens: TokenStream,
    table_tokens: &TokenStream,
    helpers: &HelperTable,
    opts: &crate::CodegenOptions,
) -> TokenStream {
    let mut errors = Errors::new();
    if !args.is_empty() {
        errors.spanned(&args, "`#[oxla::func]` takes no arguments");
    }
    let item: syn::ItemFn = match syn::parse2(crate::lower::control::flow::fold_double_negation(
        item_tokens.clone(),
    )) {
        Ok(i) => i,
        Err(_) => {
            errors.at(
                Span::call_site(),
                "`#[oxla::func]` applies to a function (`fn`) only",
            );
            let errs = errors.to_compile_errors();
            return quote!(#item_tokens #errs);
        }
    };
    if let Some(a) = item
        .attrs
        .iter()
        .find(|a| crate::parse::attr::oxla_attr_kind(a.path()).is_some())
    {
        errors.spanned(a, "`#[oxla::func]` marks a helper and cannot be combined with other oxla attributes: apply those to a function that calls it");
    }
    let name = item.sig.ident.clone();
    let rule = crate::parse::custom::parse_rule(&item, &mut errors);
    // The function plain Rust calls runs its body; the rule attribute
    // stays on the item callers receive (each call reads it).
    let plain_tokens = match &rule {
        Some(_) => syn::parse2::<syn::ItemFn>(item_tokens.clone())
            .map(|i| crate::parse::custom::without_rules(&i).into_token_stream())
            .unwrap_or_else(|_| item_tokens.clone()),
        None => item_tokens.clone(),
    };
    if is_vocabulary_function(&crate::lower::ident_name(&name)) {
        errors.spanned(&name, format!("`{name}` is one of oxla's own functions, which a call `{name}(..)` in an annotated function means: name the helper differently"));
    }
    // A helper's calls are resolved here, where its paths mean what they say.
    // A generic helper is checked at f64 (its expansion below reports its
    // generics).
    let instance = crate::generic::instantiate_helper(&item, oxla_core::DType::F64);
    let checked = instance.as_ref().unwrap_or(&item);
    let (_, mut unknown) = with_helpers(helpers, || match crate::tree::flatten_fn(checked, &[]) {
        crate::tree::Flattened::None => crate::lower::lower_fn(checked).is_ok(),
        crate::tree::Flattened::Flat(flat, _) => crate::lower::lower_fn(&flat.item).is_ok(),
        _ => false,
    });
    // A custom rule's functions are resolved as the body's calls are.
    for p in rule.iter().flat_map(|r| &r.paths) {
        let key = path_key(p);
        if may_be_helper(p) && !unknown.iter().any(|u| path_key(u) == key) {
            unknown.push(p.clone());
        }
    }
    if let Some(p) = unknown
        .iter()
        .find(|p| p.segments.last().is_some_and(|s| s.ident == name))
    {
        errors.spanned(p, format!("`{name}` calls itself: helpers are inlined at each call, so recursion is not supported"));
    }
    // A call rustc would report as a missing macro, said in oxla's terms.
    let stopped = match errors.is_empty() {
        true => crate::resolve::source_calls::diagnose(&unknown, &item, opts),
        false => None,
    };
    if errors.is_empty() && stopped.is_none() {
        if let Some(step) = next_step("func", &args, &item_tokens, table_tokens, helpers, &unknown)
        {
            return step;
        }
    }
    let stopped = stopped.is_some_and(|e| {
        errors.extend(e);
        true
    });
    if let (Some(rule), true, false) = (&rule, errors.is_empty(), stopped) {
        check_rule(checked, rule, helpers, &mut errors);
    }
    let errs = errors.to_compile_errors();
    if !errors.is_empty() || stopped {
        // The function with a body that only panics, and no macro: its
        // callers' expansions stop at it, the error above says why.
        let f = crate::without_body(
            crate::parse::custom::without_rules(&item),
            &TokenStream::new(),
        );
        return quote!(#f #errs);
    }
    // The function itself, compiled as `#[jit]` would (the helper's macro
    // below is the one its callers use).
    let function = crate::stack::as_helper(|| {
        crate::expand_with(
            crate::parse::attr::AttrName::One(crate::parse::attr::TransformKind::Jit),
            TokenStream::new(),
            plain_tokens,
            table_tokens,
            helpers,
            &crate::CodegenOptions {
                export_callables: false,
                ..opts.clone()
            },
        )
    });
    let item_payload = Group::new(Delimiter::Brace, item_tokens.clone());
    let table_payload = Group::new(Delimiter::Brace, table_tokens.clone());
    let mac = callable_macro(
        &name,
        &item.vis,
        &item_tokens,
        quote!(#item_payload #table_payload),
        crate::resolve::site::Enclosing::Module,
        &[],
    );
    quote! {
        #function
        #mac
    }
}

/// Check the functions of `item`'s custom `rule` (resolved in `helpers`)
/// against its signature, as each is lowered at f64.
fn check_rule(
    item: &syn::ItemFn,
    rule: &crate::parse::custom::CustomRule,
    helpers: &HelperTable,
    errors: &mut Errors,
) {
    let Ok(f) = with_helpers(helpers, || crate::lower::lower_fn(item)).0 else {
        return;
    };
    let rules: Vec<Option<oxla_core::Function>> = rule
        .paths
        .iter()
        .map(|p| {
            let (h, callees) = helpers.get(p)?;
            let instance = crate::generic::instantiate_helper(&h.item, oxla_core::DType::F64);
            let it = instance.as_ref().unwrap_or(&h.item);
            with_helpers(&callees, || crate::lower::lower_fn(it)).0.ok()
        })
        .collect();
    crate::parse::custom::check_rule_signatures(&f, rule, &rules, errors);
}

/// The macro through which annotated functions call the function `name`:
/// it answers a resolve request with `payload`. At module level a uniquely
/// named `#[macro_export]` macro re-exported as `name` with the function's
/// visibility (so `path::name!` works wherever `path::name` does); in a
/// block, a local `macro_rules! name`, visible after it in that block.
fn callable_macro(
    name: &syn::Ident,
    vis: &syn::Visibility,
    hash_of: &TokenStream,
    payload: TokenStream,
    at: crate::resolve::site::Enclosing,
    cfgs: &[&syn::Attribute],
) -> TokenStream {
    let rules = quote! {
        (($($callback:tt)*) { $($state:tt)* }) => {
            $($callback)*! { $($state)* { #payload } }
        };
    };
    let carrier = crate::codegen::lints::source_carrier();
    if at == crate::resolve::site::Enclosing::Block {
        return quote! {
            #(#cfgs)*
            #[allow(unused_macros)]
            #carrier
            macro_rules! #name { #rules }
        };
    }
    let mac = format_ident!(
        "__oxla_func_{}_{:016x}",
        crate::lower::ident_name(name),
        unique_hash(hash_of, name.span())
    );
    quote! {
        #(#cfgs)*
        #[doc(hidden)]
        #[macro_export]
        #carrier
        macro_rules! #mac { #rules }
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(unused_imports)]
        #vis use #mac as #name;
    }
}

/// The macros through which other annotated functions call the functions
/// an expansion generates (`names`: the annotated function and each named
/// attribute's), each answering with the whole item, `attr` (the attribute
/// being expanded, as `#[oxla::grad(…)]`) put back on it, the helpers it
/// calls, and which function of the expansion it is; `site` is where the
/// function is written (`CodegenOptions::enclosing`). Nothing inside an
/// `impl` or `trait` block, where no macro can be defined (associated
/// functions are called through a type path, which never names a helper),
/// nor where the block is not known.
pub(crate) fn callable_macros(
    attr: TokenStream,
    item_tokens: &TokenStream,
    table_tokens: &TokenStream,
    item: &syn::ItemFn,
    names: &[syn::Ident],
    opts: &crate::CodegenOptions,
    site: Option<crate::resolve::site::Enclosing>,
) -> TokenStream {
    if !opts.export_callables {
        return TokenStream::new();
    }
    let Some(at) = site.filter(|a| a.allows_items()) else {
        return TokenStream::new();
    };
    let whole = quote!(#attr #item_tokens);
    let item_payload = Group::new(Delimiter::Brace, whole.clone());
    let table_payload = Group::new(Delimiter::Brace, table_tokens.clone());
    let cfgs = crate::parse::attr::cfg_attrs(item);
    names
        .iter()
        .filter(|name| !shadows_a_macro(&crate::lower::ident_name(name)))
        .map(|name| {
            let which = Group::new(Delimiter::Brace, quote!(#name));
            // Each item exists exactly when the function does.
            callable_macro(
                name,
                &item.vis,
                &quote!(#whole #name),
                quote!(#item_payload #table_payload #which),
                at,
                &cfgs,
            )
        })
        .collect()
}

/// Whether a macro named `name` in a module would shadow a macro its code
/// may use (`vec!`, ndarray's `s!` and `array!`, …): an annotated
/// function of that name gets no callable macro, so that code which
/// compiled before still does (calling it inside another annotated
/// function is then not possible; a helper, `#[oxla::func]`, asks for its
/// macro explicitly).
fn shadows_a_macro(name: &str) -> bool {
    const MACROS: &[&str] = &[
        // std's prelude macros.
        "assert",
        "assert_eq",
        "assert_ne",
        "cfg",
        "column",
        "compile_error",
        "concat",
        "dbg",
        "debug_assert",
        "debug_assert_eq",
        "debug_assert_ne",
        "env",
        "eprint",
        "eprintln",
        "file",
        "format",
        "format_args",
        "include",
        "include_bytes",
        "include_str",
        "line",
        "matches",
        "module_path",
        "option_env",
        "panic",
        "print",
        "println",
        "stringify",
        "thread_local",
        "todo",
        "unimplemented",
        "unreachable",
        "vec",
        "write",
        "writeln",
        // ndarray's.
        "array",
        "azip",
        "concatenate",
        "s",
        "stack",
    ];
    MACROS.contains(&name)
}

/// A name for the helper's macro, unique in its crate: from its tokens and
/// where it is written (two helpers with the same source in two modules).
pub(crate) fn unique_hash(tokens: &TokenStream, span: Span) -> u64 {
    fnv1a(&format!("{tokens} {span:?}"))
}

/// FNV-1a: stable and dependency-free.
pub(crate) fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Whether `attr` is `#[func]` or `#[oxla::func]`.
pub(crate) fn is_func_attr(attr: &syn::Attribute) -> bool {
    let segs: Vec<String> = attr
        .path()
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    matches!(
        segs.iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        ["func"] | ["oxla", "func"]
    )
}

/// Whether `attr` is a `#[derive(..)]` listing `Tree` or `oxla::Tree`.
pub(crate) fn derives_tree(attr: &syn::Attribute) -> bool {
    if !attr.path().is_ident("derive") {
        return false;
    }
    let mut found = false;
    let _ = attr.parse_nested_meta(|m| {
        found |= m.path.segments.last().is_some_and(|s| s.ident == "Tree");
        Ok(())
    });
    found
}

/// Whether `name` is a function of oxla's vocabulary (`sum`, `softplus`,
/// …): a bare call of it lowers to the op, so a helper of that name could
/// never be called by its name.
pub(crate) fn is_vocabulary_function(name: &str) -> bool {
    crate::lower::vocab::is_function(name)
}
