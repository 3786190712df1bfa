//! Every path the generated code names comes from `codegen/paths.rs`, and
//! every `::oxla::` path there goes through the facade's hidden
//! `::oxla::__private` module: checked on the crate's sources (no other
//! file names `::oxla`) and on the expansions of sample functions (every
//! `::oxla::` path they contain is `::oxla::__private::…`).

use crate::codegen::CodegenOptions;
use crate::parse::attr::TransformKind;
use crate::{expand_attribute_with, expand_func, expand_resolve, expand_tree_derive};
use proc_macro2::TokenStream;
use quote::quote;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the crate's sources are readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The paths in `code` starting `::oxla` — `::oxla::…`, `::oxla_core::…` —
/// as a quoted path or a string to be parsed, with the spaces around `::`
/// removed (so that a token stream's `:: oxla ::` counts too), each cut to
/// 40 characters. (A relative path through a module named `oxla…` would
/// count too; the crate has none.)
fn absolute_oxla_paths(code: &str) -> Vec<String> {
    let mut squashed = code.to_string();
    for (from, to) in [(" ::", "::"), (":: ", "::")] {
        while squashed.contains(from) {
            squashed = squashed.replace(from, to);
        }
    }
    squashed
        .match_indices("::oxla")
        .filter(|(i, m)| {
            // `::oxla::…`, `::oxla)`, `::oxla_core…`; not a function named
            // `oxla_…` (`attr::oxla_attr_kind`).
            let after = &squashed[i + m.len()..];
            after.starts_with("_core")
                || !after.starts_with(|c: char| c.is_alphanumeric() || c == '_')
        })
        .map(|(i, _)| {
            squashed[i..]
                .chars()
                .take_while(|c| !c.is_whitespace())
                .take(40)
                .collect()
        })
        .collect()
}

/// No source file of the crate but `codegen/paths.rs` (and the tests) names
/// an absolute `::oxla…` path outside a comment: an emitter takes its paths
/// from `paths.rs`, so that they all go through `__private` and a change of
/// the facade is one change here.
#[test]
fn only_paths_rs_names_oxla_paths() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut checked = 0;
    let mut bad = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "codegen/paths.rs" || rel == "tests.rs" || rel.starts_with("tests/") {
            continue;
        }
        checked += 1;
        let text = std::fs::read_to_string(file).expect("readable");
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for path in absolute_oxla_paths(line) {
                bad.push(format!("src/{rel}:{}: {path}", n + 1));
            }
        }
    }
    assert!(checked > 30, "only {checked} source files found");
    assert!(
        bad.is_empty(),
        "paths emitted outside codegen/paths.rs:\n{}",
        bad.join("\n")
    );
}

/// `paths.rs` itself names `::oxla::` only as `::oxla::__private::…`.
#[test]
fn paths_rs_goes_through_private() {
    let text = include_str!("../codegen/paths.rs");
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let paths = absolute_oxla_paths(&code);
    assert!(paths.len() > 10, "{paths:?}");
    for p in paths {
        let rest = p
            .strip_prefix("::oxla::__private")
            .unwrap_or_else(|| panic!("{p}"));
        assert!(
            !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'),
            "{p}"
        );
    }
}

/// Every `::oxla::` path in `out` is `::oxla::__private::…`; returns the
/// distinct items named under it.
fn private_items(out: &TokenStream) -> Vec<String> {
    let s = out.to_string();
    assert!(
        !s.contains("compile_error"),
        "the sample did not expand: {s}"
    );
    let mut items = Vec::new();
    for p in absolute_oxla_paths(&s) {
        let rest = p
            .strip_prefix("::oxla::__private::")
            .unwrap_or_else(|| panic!("`{p}…` bypasses `__private` in:\n{s}"));
        let item: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !items.contains(&item) {
            items.push(item);
        }
    }
    items
}

/// The expansions of functions that reach every kind of emitted path
/// (scalar and array code, a loop with checkpointing, `concatenate`, `erf`,
/// half types, a generic function, a helper and a call of one, a parameter
/// struct's derive and a function taking one, the `_device` and `_into`
/// siblings) name oxla only through `__private`.
#[test]
fn expansions_name_oxla_only_through_private() {
    let opts = CodegenOptions {
        export_callables: true,
        ..CodegenOptions::default()
    };
    let attr = |kind, args: TokenStream, item: TokenStream| {
        private_items(&expand_attribute_with(kind, args, item, &opts))
    };
    let mut seen: Vec<String> = Vec::new();
    let samples = [
        attr(
            TransformKind::Grad,
            quote!(df),
            quote! { fn f(x: f64) -> f64 { erf(x) * x.exp() } },
        ),
        attr(
            TransformKind::Jit,
            quote!(),
            quote! {
                fn g(x: ArrayView1<f64>, n: usize) -> Array1<f64> {
                    let mut y = concatenate(Axis(0), &[x.view(), x.view()]);
                    for _i in checkpoint(0..n) {
                        y = y * 0.5;
                    }
                    y
                }
            },
        ),
        attr(
            TransformKind::ValueAndGrad,
            quote!(s_vg),
            quote! {
                fn s(x: ArrayView1<f64>, n: usize) -> f64 {
                    let mut y = x.to_owned();
                    for _i in checkpoint_every(2, 0..n) {
                        y = y.sin();
                    }
                    sum(y)
                }
            },
        ),
        attr(
            TransformKind::Jit,
            quote!(),
            quote! { fn h(x: ArrayView1<f16>) -> Array1<f16> { x.exp() } },
        ),
        attr(
            TransformKind::Grad,
            quote!(dk),
            quote! { fn k<T: Float>(x: &[T]) -> T { sum(x) } },
        ),
        attr(
            TransformKind::Grad,
            quote!(dc),
            quote! { fn c(x: f64) -> f64 { my_helper(x) * 2.0 } },
        ),
        private_items(&expand_func(
            quote!(),
            quote! { fn my_helper(x: f64) -> f64 { x * x } },
            &opts,
        )),
        private_items(&expand_tree_derive(quote! {
            struct Mlp { w: Array2<f64>, b: Array1<f64>, c: f64 }
        })),
        // A function taking a parameter struct, once the struct's macro has
        // answered: its gradient is the struct again.
        private_items(&expand_resolve(
            quote! {
                grad(g) { fn l(p: &Params, x: ArrayView1<f32>) -> f32 { sum(&p.w * x) + p.b } }
                {} (Params) { { struct Params { w: Array1<f32>, b: f32 } } {} }
            },
            &opts,
        )),
    ];
    for items in samples {
        for i in items {
            if !seen.contains(&i) {
                seen.push(i);
            }
        }
    }
    // The samples do reach the paths they are meant to.
    for want in [
        "CompiledFn",
        "Arg",
        "ndarray",
        "half",
        "erf",
        "checkpoint",
        "checkpoint_every",
        "generic",
        "Float",
        "Tree",
        "DeviceArray",
        "__resolve",
    ] {
        assert!(seen.iter().any(|s| s == want), "no `{want}` in {seen:?}");
    }
}
