//! Errors: each bug found in the macro's error handling, pinned by a test
//! named after it, and a fuzz test of the whole expansion over random
//! bodies (supported and unsupported Rust alike).

use crate::codegen::CodegenOptions;
use crate::parse::attr::TransformKind;
use crate::stack::expand_stack;
use crate::{expand_attribute_with, lower_fn};
use proc_macro2::{TokenStream, TokenTree};
use quote::quote;

fn expand(kind: TransformKind, args: TokenStream, item: TokenStream) -> TokenStream {
    expand_attribute_with(kind, args, item, &CodegenOptions::default())
}

/// The messages of the `compile_error!`s in an expansion.
fn messages(out: &TokenStream) -> Vec<String> {
    let mut msgs = Vec::new();
    let toks: Vec<TokenTree> = out.clone().into_iter().collect();
    for w in toks.windows(2) {
        if let (TokenTree::Ident(i), TokenTree::Punct(p)) = (&w[0], &w[1]) {
            if i == "compile_error" && p.as_char() == '!' {
                msgs.push(String::new());
            }
        }
        if let (TokenTree::Punct(p), TokenTree::Group(g)) = (&w[0], &w[1]) {
            if p.as_char() == '!' && !msgs.is_empty() && msgs.last().is_some_and(String::is_empty) {
                msgs.pop();
                msgs.push(g.stream().to_string());
            }
        }
    }
    msgs
}

/// The functions of an expansion (names) and whether each body is the stub.
fn functions(out: &TokenStream) -> Vec<(String, bool)> {
    let file: syn::File = syn::parse2(out.clone()).expect("the expansion parses as items");
    file.items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Fn(f) => {
                let body = quote!(#f).to_string();
                Some((f.sig.ident.to_string(), body.contains("did not compile")))
            }
            _ => None,
        })
        .collect()
}

fn consts(out: &TokenStream) -> Vec<String> {
    let file: syn::File = syn::parse2(out.clone()).expect("the expansion parses as items");
    file.items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Const(c) => Some(c.ident.to_string()),
            _ => None,
        })
        .collect()
}

#[test]
fn after_an_error_every_generated_item_is_emitted_with_a_body_that_cannot_fail() {
    // `abs` of a slice difference used to be followed by rustc's "cannot
    // subtract `&[f64]` from `&[f64]`": the body was emitted again.
    let out = expand(
        TransformKind::Vmap,
        quote!(batched),
        quote! {
            #[oxla::jvp(tangent)]
            pub fn f(x: &[f64], y: &[f64]) -> Vec<f64> { (x - y).cbrt() }
        },
    );
    let msgs = messages(&out);
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(msgs[0].contains("unknown method `cbrt`"), "{msgs:?}");
    let fns = functions(&out);
    let names: Vec<&str> = fns.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "f",
            "f_into",
            "f_device",
            "tangent",
            "tangent_into",
            "tangent_device",
            "batched",
            "batched_into",
            "batched_device"
        ],
        "{out}"
    );
    assert!(fns.iter().all(|(_, stub)| *stub), "{out}");
    assert!(
        !out.to_string().contains("x - y"),
        "the body is not emitted: {out}"
    );
    for c in ["F_IR", "TANGENT_IR", "BATCHED_IR"] {
        assert!(consts(&out).iter().any(|n| n == c), "{c}: {out}");
    }
    // The generated signatures are those of a successful expansion.
    let good = expand(
        TransformKind::Vmap,
        quote!(batched),
        quote! {
            #[oxla::jvp(tangent)]
            pub fn f(x: &[f64], y: &[f64]) -> Vec<f64> { (x - y).exp() }
        },
    );
    let sigs = |ts: &TokenStream| -> Vec<String> {
        let file: syn::File = syn::parse2(ts.clone()).unwrap();
        file.items
            .iter()
            .filter_map(|i| match i {
                syn::Item::Fn(f) => {
                    let s = &f.sig;
                    Some(quote!(#s).to_string())
                }
                _ => None,
            })
            .collect()
    };
    assert_eq!(sigs(&out), sigs(&good));
}

#[test]
fn unsupported_parameter_type_is_reported_once_at_the_type() {
    let out = expand(
        TransformKind::Jit,
        quote!(),
        quote! { fn f(x: String, y: f32) -> f32 { let a = x * y; a + x } },
    );
    let msgs = messages(&out);
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(
        msgs[0].contains("unsupported parameter type `String`"),
        "{msgs:?}"
    );
    // The function is still there for its callers.
    assert_eq!(functions(&out), [("f".to_string(), true)]);
}

#[test]
fn out_of_range_literal_is_a_spanned_error_not_a_panic() {
    for (ty, lit) in [
        (quote!(f32), quote!(1e39)),
        (quote!(f32), quote!(340282366920938463463374607431768211456)),
        (quote!(f64), quote!(1e309)),
        (quote!(oxla::half::f16), quote!(70000.0)),
    ] {
        let out = expand(
            TransformKind::Jit,
            quote!(),
            quote! { fn f(x: #ty) -> #ty { x * #lit } },
        );
        let msgs = messages(&out);
        assert_eq!(msgs.len(), 1, "{ty} {lit}: {out}");
        assert!(msgs[0].contains("is out of range for"), "{msgs:?}");
    }
    // The largest finite values are fine.
    let out = expand(
        TransformKind::Grad,
        quote!(df),
        quote! { fn f(x: f32) -> f32 { x * 3.4e38 } },
    );
    assert!(messages(&out).is_empty(), "{out}");
}

#[test]
fn powi_with_extreme_exponents_under_two_grads() {
    for n in [i32::MIN, i32::MIN + 1, i32::MAX] {
        let lit = proc_macro2::Literal::i64_unsuffixed(n.unsigned_abs() as i64);
        let exponent = if n < 0 { quote!(-#lit) } else { quote!(#lit) };
        let src = quote! {
            #[oxla::grad(d2)]
            #[oxla::grad(d1)]
            fn f(x: f64) -> f64 { x.powi(#exponent) }
        };
        let item: syn::ItemFn = syn::parse2(src.clone()).unwrap();
        let mut item = item;
        let mut errors = crate::errors::Errors::new();
        let stack = crate::parse::attr::take_oxla_attrs(&mut item.attrs, &mut errors);
        let gens = expand_stack(&item, &stack).unwrap_or_else(|e| panic!("{n}: {e}"));
        // At x = 1 every power is 1: f'' = n (n - 1), computed here in f64.
        let want = n as f64 * (n as f64 - 1.0);
        let got = crate::tests::eval(&gens[2].function, &[vec![1.0]])[0][0];
        assert_eq!(got, want, "powi({n})");
        // At x = -1 the sign follows the parity of n - 2.
        let got = crate::tests::eval(&gens[2].function, &[vec![-1.0]])[0][0];
        let sign = if n % 2 == 0 { 1.0 } else { -1.0 };
        assert_eq!(got, sign * want, "powi({n}) at -1");
        let out = expand_attribute_with(
            TransformKind::Grad,
            quote!(d2),
            quote! { #[oxla::grad(d1)] fn f(x: f64) -> f64 { x.powi(#exponent) } },
            &CodegenOptions::default(),
        );
        assert!(messages(&out).is_empty(), "{n}: {out}");
    }
}

#[test]
fn generated_names_do_not_collide() {
    let cases = [
        (
            quote!(fooBar),
            quote! { fn foo_bar(x: f64) -> f64 { x } },
            "`fooBar` would generate `FOO_BAR_IR`, which `foo_bar` already generates",
        ),
        (
            quote!(f_into),
            quote! { fn f(x: &[f32]) -> Vec<f32> { x * 2.0 } },
            "`f_into` is already defined by this expansion (for `f`)",
        ),
        (
            quote!(g),
            quote! { fn f(__OXLA_COMPILED_F: &[f32]) -> f32 { sum(__OXLA_COMPILED_F) } },
            "the parameter `__OXLA_COMPILED_F` starts with `__oxla`",
        ),
        (
            quote!(__oxla_g),
            quote! { fn f(x: f32) -> f32 { x } },
            "the generated function's name `__oxla_g` starts with `__oxla`",
        ),
    ];
    for (name, item, want) in cases {
        let out = expand(TransformKind::Jit, name, item);
        let msgs = messages(&out);
        assert_eq!(msgs.len(), 1, "{msgs:?}");
        assert!(msgs[0].contains(want), "{msgs:?}");
        // Each item once (rustc would report E0428 otherwise).
        let mut names: Vec<String> = functions(&out).into_iter().map(|(n, _)| n).collect();
        names.extend(consts(&out));
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "{out}");
    }
}

/// Every path the expansion names is absolute: `use oxla::*;`, a module
/// named `core` or a type alias `f32` in the user's module change nothing.
#[test]
fn glob_import_of_oxla_cannot_shadow_emitted_paths() {
    let cases = [
        (
            TransformKind::Grad,
            quote!(df),
            quote! { fn f(x: f64, b: bool) -> f64 { (if b { x } else { x.powi(2) }).exp() + (b as i32 as f64) } },
        ),
        (
            TransformKind::Vjp,
            quote!(back),
            quote! { fn f(x: &[f32], n: usize) -> Vec<f32> { x * (n as f32) } },
        ),
        (
            TransformKind::Jit,
            quote!(),
            quote! { fn f(x: &[f32]) -> Vec<f32> { x.cbrt() } },
        ),
    ];
    for (kind, args, item) in cases {
        let out = expand(kind, args, item);
        let toks: Vec<String> = flatten(out.clone());
        for (i, t) in toks.iter().enumerate() {
            if matches!(t.as_str(), "core" | "std" | "oxla" | "__private") && i > 0 {
                let before = &toks[i - 1];
                assert!(
                    before == ":" || before == "#" || toks[i + 1] != ":",
                    "a relative path at `{t}` (token {i}) in {out}"
                );
            }
        }
        for prim in ["f32", "f64", "i64", "u8", "bool"] {
            for (i, t) in toks.iter().enumerate() {
                // After `as` or `:` in a generated type, a primitive is spelled
                // `::core::primitive::…` (the user's own signature aside).
                if t == prim && i > 1 && toks[i - 1] == "as" {
                    panic!("`as {prim}` in {out}");
                }
            }
        }
    }
}

fn flatten(ts: TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    for t in ts {
        match t {
            TokenTree::Group(g) => out.extend(flatten(g.stream())),
            t => out.push(t.to_string()),
        }
    }
    out
}

#[test]
fn float_path_calls_lower_like_methods() {
    let item = |body: TokenStream| -> syn::ItemFn {
        syn::parse2(quote! { fn f(x: f64, y: f64) -> f64 { #body } }).unwrap()
    };
    let a = lower_fn(&item(quote!(
        f64::exp(x) + f64::powi(y, 3) + f64::max(x, y)
    )))
    .unwrap();
    let b = lower_fn(&item(quote!(x.exp() + y.powi(3) + x.max(y)))).unwrap();
    assert_eq!(oxla_core::text::print(&a), oxla_core::text::print(&b));
    let a = lower_fn(&item(quote!(core::primitive::f64::sqrt(x)))).unwrap();
    let b = lower_fn(&item(quote!(x.sqrt()))).unwrap();
    assert_eq!(oxla_core::text::print(&a), oxla_core::text::print(&b));
    let e = lower_fn(&item(quote!(f64::cbrt(x))))
        .unwrap_err()
        .messages();
    assert!(
        e[0].contains("unknown function `f64::cbrt` (float methods are written `x.cbrt()`"),
        "{e:?}"
    );
    let e = lower_fn(&item(quote!(f32::exp(x)))).unwrap_err().messages();
    assert!(e[0].contains("mixed float types: `f32::exp`"), "{e:?}");
}

#[test]
fn early_return_is_rewritten_where_it_can_be_and_a_clear_error_elsewhere() {
    // Inside `if` at the top of the body: the rest becomes the `else`.
    for body in [
        quote! { if x < 0.0 { return -x; } x },
        quote! { if x < 0.0 { return -x } else { x } },
    ] {
        let item: syn::ItemFn = syn::parse2(quote! { fn f(x: f64) -> f64 { #body } }).unwrap();
        let f = lower_fn(&item).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(crate::tests::eval(&f, &[vec![-2.0]]), vec![vec![2.0]]);
        assert_eq!(crate::tests::eval(&f, &[vec![3.0]]), vec![vec![3.0]]);
    }
    // Where it cannot be rewritten: inside an expression, a nested block, a
    // closure.
    for body in [
        quote! { let y = if x < 0.0 { return -x } else { x }; y },
        quote! { { if x < 0.0 { return -x; } } x },
        quote! { let g = |v| { return v; }; g(x) },
    ] {
        let item: syn::ItemFn = syn::parse2(quote! { fn f(x: f64) -> f64 { #body } }).unwrap();
        let e = lower_fn(&item).unwrap_err().messages();
        assert!(
            e.iter().any(|m| m.contains("this `return` (inside a closure, a nested block or an expression) cannot be rewritten")),
            "{body}: {e:?}"
        );
    }
}

/// Expansion time against expression size (a printed measurement, not an
/// assertion: the machine's speed is not the code's). Run with
/// `cargo test -p oxla-lower --release expansion_time -- --nocapture`.
#[test]
fn expansion_time_of_long_sums_is_linear() {
    let run = || {
        for n in [1250, 2500, 5000] {
            let mut terms = quote!(x);
            for i in 0..n {
                let c = proc_macro2::Literal::f64_unsuffixed(i as f64);
                terms = quote!(#terms + x * #c);
            }
            let item = quote! { fn f(x: f64) -> f64 { #terms } };
            let t = std::time::Instant::now();
            let out = expand(TransformKind::Grad, quote!(df), item);
            assert!(messages(&out).is_empty());
            println!(
                "expansion of a {n}-term sum with its grad: {:?}",
                t.elapsed()
            );
        }
    };
    // The parser and the lowering recurse once per term.
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap();
}

/// An array function in an `impl` block used to fail with "cannot find
/// value `F_IR`": generated items named each other, which an associated
/// item can only do through `Self::`. Now no generated item names another,
/// and every item is one an `impl` block allows (no `static`, no `const _`).
#[test]
fn array_function_in_impl_block_names_no_other_generated_item() {
    let out = expand(
        TransformKind::Vmap,
        quote!(batched),
        quote! {
            #[oxla::grad(g)]
            pub fn f(x: &[f32], y: &[f32]) -> f32 { sum(x * y) }
        },
    );
    assert!(messages(&out).is_empty(), "{out}");
    let file: syn::File = syn::parse2(out.clone()).unwrap();
    let mut item_names = Vec::new();
    for i in &file.items {
        match i {
            syn::Item::Fn(f) => item_names.push(f.sig.ident.to_string()),
            syn::Item::Const(c) => {
                assert_ne!(c.ident, "_", "`const _` is not allowed in an impl: {out}");
                item_names.push(c.ident.to_string());
            }
            other => panic!("an item an impl block does not allow: {}", quote!(#other)),
        }
    }
    // Three IR constants, three functions, their `_device` siblings and the
    // `_into` siblings of the two with an array result.
    assert_eq!(item_names.len(), 11, "{item_names:?}");
    for i in &file.items {
        if let syn::Item::Fn(f) = i {
            let body = flatten(quote!(#f));
            for name in &item_names {
                let uses = body.iter().filter(|t| *t == name).count();
                let own = usize::from(f.sig.ident == name);
                assert_eq!(uses, own, "`{}` names `{name}`: {out}", f.sig.ident);
            }
        }
    }
}

#[test]
fn a_helper_named_like_a_vocabulary_function_is_refused() {
    let opts = crate::CodegenOptions::default();
    let out = crate::expand_func(
        quote::quote!(),
        quote::quote!(
            fn softplus(x: f32) -> f32 {
                x
            }
        ),
        &opts,
    )
    .to_string();
    assert!(out.contains("one of oxla's own functions"), "{out}");
    let out = crate::expand_func(
        quote::quote!(),
        quote::quote!(
            fn soft(x: f32) -> f32 {
                x
            }
        ),
        &opts,
    )
    .to_string();
    assert!(!out.contains("compile_error"), "{out}");
}

/// Issue 20: a bare call of a built-in name (`softplus(x)`) was silently
/// oxla's op even with a plain `fn softplus` in scope. The expansion now
/// asks rustc what the name means at the call (see `builtins.rs`): a check
/// per bare built-in name, none for a path (`oxla::relu`), a method, or a
/// name the body binds itself (a closure).
#[test]
fn bare_builtin_calls_are_checked_against_the_callers_scope() {
    let out = expand(
        TransformKind::Grad,
        quote!(df),
        quote! {
            fn f(x: f64) -> f64 {
                let sq = |v| v * v;
                softplus(x) + oxla::relu(x) + x.exp() + sq(x)
            }
        },
    );
    let text = out.to_string();
    assert!(text.contains("mod __oxla_builtin_names"), "{text}");
    assert!(
        text.contains("__oxla_check_softplus (& softplus)"),
        "{text}"
    );
    assert!(!text.contains("__oxla_check_relu"), "{text}");
    let out = expand(
        TransformKind::Grad,
        quote!(df),
        quote! {
            fn f(x: f64) -> f64 {
                let relu = |v: f64| v.max(0.0);
                relu(x) + oxla::softplus(x)
            }
        },
    );
    assert!(!out.to_string().contains("__oxla_builtin_names"), "{out}");
    // A name whose meaning is a real item (ndarray's `stack`) is checked by
    // identity: the item is glob-imported beside the caller's names.
    let out = expand(
        TransformKind::Jit,
        quote!(),
        quote! {
            fn f(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Array2<f64> {
                stack(Axis(0), &[a, b])
            }
        },
    );
    let text = out.to_string();
    assert!(
        text.contains("pub use :: oxla :: __private :: ndarray :: stack"),
        "{text}"
    );
    assert!(text.contains("use stack as _"), "{text}");
}
