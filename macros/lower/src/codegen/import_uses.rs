//! Uses of the names an annotated function's body imports. The generated
//! function replaces the body, so without these `use oxla::ndarray::{s,
//! NewAxis};` would be reported unused although the body reads both. Each
//! name becomes `const _: () = { use name as _; };` in the generated body
//! (a function body takes items in a module and in an `impl` block alike),
//! which resolves it where the body did and so counts as a use.
//!
//! Only names that a `use` of the function's module imports are taken
//! (read from the caller's source file, `CodegenOptions::source`): the
//! macro never compiles the body, so a body may name what its file never
//! imports (`s![..]` with no `use`), and referring to that would be an
//! error. Names the body binds itself (a local, an item declared in the
//! body) and the function's generic parameters are left out.

use proc_macro2::TokenStream;
use quote::quote;
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;
use syn::visit::Visit;

#[derive(Default)]
struct Names {
    used: BTreeSet<String>,
    bound: BTreeSet<String>,
}

impl Names {
    /// Names heading a path among a macro's tokens (not after `::`).
    fn scan(&mut self, tokens: TokenStream) {
        let mut after_colon = false;
        for t in tokens {
            match &t {
                proc_macro2::TokenTree::Group(g) => self.scan(g.stream()),
                proc_macro2::TokenTree::Ident(id) if !after_colon => {
                    self.used.insert(id.to_string());
                }
                _ => {}
            }
            after_colon = matches!(&t, proc_macro2::TokenTree::Punct(p) if p.as_char() == ':');
        }
    }
}

impl<'ast> Visit<'ast> for Names {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() {
            if let Some(first) = p.segments.first() {
                self.used.insert(first.ident.to_string());
            }
        }
        syn::visit::visit_path(self, p);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // The macro's own tokens: `s![.., NewAxis]` reads `NewAxis`.
        self.scan(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        self.bound.insert(p.ident.to_string());
        syn::visit::visit_pat_ident(self, p);
    }
    fn visit_item(&mut self, i: &'ast syn::Item) {
        use syn::Item;
        let id = match i {
            Item::Const(x) => Some(&x.ident),
            Item::Static(x) => Some(&x.ident),
            Item::Struct(x) => Some(&x.ident),
            Item::Enum(x) => Some(&x.ident),
            Item::Fn(x) => Some(&x.sig.ident),
            Item::Type(x) => Some(&x.ident),
            Item::Trait(x) => Some(&x.ident),
            Item::Union(x) => Some(&x.ident),
            _ => None,
        };
        if let Some(id) = id {
            self.bound.insert(id.to_string());
        }
        // A `use` inside the body resolves its names itself.
        if let Item::Use(u) = i {
            let mut last = UseNames(&mut self.bound);
            last.visit_item_use(u);
        }
        syn::visit::visit_item(self, i);
    }
}

/// The names a body's own `use` brings in.
struct UseNames<'a>(&'a mut BTreeSet<String>);

impl<'ast> Visit<'ast> for UseNames<'_> {
    fn visit_use_name(&mut self, n: &'ast syn::UseName) {
        self.0.insert(n.ident.to_string());
    }
    fn visit_use_rename(&mut self, n: &'ast syn::UseRename) {
        self.0.insert(n.rename.to_string());
    }
}

/// The uses of the names `item`'s body reads that its module imports,
/// for its generated body.
pub(crate) fn import_uses(item: &syn::ItemFn, opts: &crate::CodegenOptions) -> TokenStream {
    let Some(at) = opts.source.and_then(|source| source(item.sig.ident.span())) else {
        return TokenStream::new();
    };
    let imported = module_imports(&at.text, &item.sig.ident.to_string());
    if imported.is_empty() {
        return TokenStream::new();
    }
    let mut names = Names::default();
    names.visit_block(&item.block);
    for g in &item.sig.generics.params {
        match g {
            syn::GenericParam::Type(t) => names.bound.insert(t.ident.to_string()),
            syn::GenericParam::Const(c) => names.bound.insert(c.ident.to_string()),
            syn::GenericParam::Lifetime(_) => false,
        };
    }
    let cfgs = crate::parse::attr::cfg_attrs(item);
    names
        .used
        .iter()
        .filter(|n| !names.bound.contains(*n) && imported.contains(*n))
        .map(|n| {
            let id = syn::Ident::new(n, proc_macro2::Span::call_site());
            quote!(#(#cfgs)* const _: () = { use #id as _; };)
        })
        .collect()
}

/// Per module of a file (by path), the names its `use` items bring in and
/// the functions it defines (free or in `impl` blocks).
type ModuleUses = Vec<(BTreeSet<String>, BTreeSet<String>)>;

thread_local! {
    /// Each file seen, by the text's hash (parsed once per file).
    static FILES: std::cell::RefCell<HashMap<u64, Rc<ModuleUses>>> = Default::default();
}

/// The names every module of `text` that defines a function `name` imports
/// (empty where the file does not parse or no module defines it).
fn module_imports(text: &str, name: &str) -> BTreeSet<String> {
    let key = crate::resolve::helpers::fnv1a(text);
    let modules = FILES
        .with(|m| m.borrow().get(&key).cloned())
        .unwrap_or_else(|| {
            let mut out = ModuleUses::new();
            if let Ok(file) = syn::parse_file(text) {
                modules(&file.items, &mut out);
            }
            let out = Rc::new(out);
            FILES.with(|m| m.borrow_mut().insert(key, out.clone()));
            out
        });
    let mut defining = modules.iter().filter(|(fns, _)| fns.contains(name));
    let Some((_, first)) = defining.next() else {
        return BTreeSet::new();
    };
    defining.fold(first.clone(), |acc, (_, uses)| {
        acc.intersection(uses).cloned().collect()
    })
}

/// Each module among `items` (this one, then inline ones), into `out`.
fn modules(items: &[syn::Item], out: &mut ModuleUses) {
    let mut fns = BTreeSet::new();
    let mut uses = BTreeSet::new();
    for i in items {
        match i {
            syn::Item::Fn(f) => {
                fns.insert(f.sig.ident.to_string());
            }
            syn::Item::Impl(b) => {
                for m in &b.items {
                    if let syn::ImplItem::Fn(f) = m {
                        fns.insert(f.sig.ident.to_string());
                    }
                }
            }
            syn::Item::Use(u) => UseNames(&mut uses).visit_item_use(u),
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    modules(inner, out);
                }
            }
            _ => {}
        }
    }
    out.push((fns, uses));
}
