//! Unit tests of custom derivative rules on helpers (`parse::custom`,
//! `lower::custom`): a call lowers to the custom op; forward mode through a
//! `custom_vjp` helper is an error at the attribute that asks for it (and
//! reverse mode, `hessian` included, is not); malformed attributes and rule
//! functions that do not fit the helper's signature are errors at the
//! rule's name.

use crate::errors::Errors;
use crate::parse::attr::take_oxla_attrs;
use crate::parse::custom::{check_rule_signatures, parse_rule};
use crate::resolve::helpers::{with_helpers, HelperTable};
use crate::stack::{expand_stack, GeneratedFn};
use crate::tests::eval;
use proc_macro2::TokenStream;
use quote::quote;

fn item(ts: TokenStream) -> syn::ItemFn {
    syn::parse2(ts).expect("test input parses")
}

/// `clipped(x)`: the identity, its cotangent clipped into [-1, 1]; `scaled`:
/// `x³` whose JVP rule says `2·t` (not `3x²·t`).
fn helpers() -> HelperTable {
    HelperTable::by_name(vec![
        item(quote! {
            #[oxla::custom_vjp(fwd = clipped_fwd, bwd = clipped_bwd)]
            fn clipped(x: f64) -> f64 { x }
        }),
        item(quote! { fn clipped_fwd(x: f64) -> (f64, f64) { (x, x) } }),
        item(quote! { fn clipped_bwd(r: f64, g: f64) -> f64 { g.clamp(-1.0, 1.0) } }),
        item(quote! {
            #[oxla::custom_jvp(jvp = scaled_jvp)]
            fn scaled(x: f64) -> f64 { x * x * x }
        }),
        item(quote! { fn scaled_jvp(x: f64, t: f64) -> (f64, f64) { (x * x * x, 2.0 * t) } }),
    ])
}

/// The expansion of `ts` with `helpers()`: its functions, or its errors.
fn expand(ts: TokenStream) -> Result<Vec<GeneratedFn>, Vec<String>> {
    let mut item = item(ts);
    let mut errors = Errors::new();
    let stack = take_oxla_attrs(&mut item.attrs, &mut errors);
    assert!(errors.is_empty(), "{errors}");
    let (out, _) = with_helpers(&helpers(), || expand_stack(&item, &stack));
    out.map_err(|e| e.messages())
}

fn named<'a>(fns: &'a [GeneratedFn], name: &str) -> &'a oxla_core::Function {
    &fns.iter()
        .find(|g| g.name == name)
        .expect("generated")
        .function
}

#[test]
fn a_call_lowers_to_the_custom_op_and_its_rule_is_used() {
    let fns = expand(quote! {
        #[grad(dc)]
        fn f(x: f64) -> f64 { clipped(3.0 * x) }
    })
    .unwrap();
    let text = oxla_core::text::print(named(&fns, "f"));
    assert!(text.contains("custom_vjp_call[]"), "{text}");
    // d clipped(3x)/dx with the cotangent 1 clipped: 3.
    assert_eq!(eval(named(&fns, "dc"), &[vec![0.5]])[0][0], 3.0);
    let fns = expand(quote! {
        #[transforms(grad(ds), hessian(hs))]
        fn f(x: f64) -> f64 { scaled(x) }
    })
    .unwrap();
    assert!(oxla_core::text::print(named(&fns, "f")).contains("custom_jvp_call[]"));
    assert_eq!(eval(named(&fns, "ds"), &[vec![4.0]])[0][0], 2.0);
    assert_eq!(eval(named(&fns, "hs"), &[vec![4.0]])[0][0], 0.0);
    assert_eq!(eval(named(&fns, "f"), &[vec![2.0]])[0][0], 8.0);
}

#[test]
fn forward_mode_through_a_custom_vjp_is_an_error_at_its_attribute() {
    for attr in [
        quote!(#[jvp(j)]),
        quote!(#[jacfwd(j)]),
        quote!(#[transforms(grad(g), jvp(j))]),
        quote!(#[jacrev(j, of = jvp(wrt = x))]),
    ] {
        let msgs = expand(quote! {
            #attr
            fn f(x: f64) -> f64 { clipped(x) * x }
        })
        .unwrap_err();
        assert!(
            msgs.iter()
                .any(|m| m
                    .contains("can't apply forward-mode autodiff (jvp) to a custom_vjp function")),
            "{attr}: {msgs:#?}"
        );
    }
    // Reverse mode, and forward over reverse, are fine.
    for attr in [
        quote!(#[grad(g)]),
        quote!(#[hessian(h)]),
        quote!(#[jvp(j, of = grad(wrt = x))]),
    ] {
        assert!(expand(quote! { #attr fn f(x: f64) -> f64 { clipped(x) * x } }).is_ok());
    }
}

/// The errors `check_rule_signatures` gives `f` with the rule functions
/// `rules`.
fn signature_errors(f: TokenStream, rules: &[TokenStream]) -> Vec<String> {
    let f = item(f);
    let mut errors = Errors::new();
    let rule = parse_rule(&f, &mut errors).expect("a rule");
    let lowered = crate::lower::lower_fn(&f).unwrap();
    let rules: Vec<_> = rules
        .iter()
        .map(|r| Some(crate::lower::lower_fn(&item(r.clone())).unwrap()))
        .collect();
    check_rule_signatures(&lowered, &rule, &rules, &mut errors);
    errors.messages()
}

#[test]
fn rule_functions_that_do_not_fit_are_errors() {
    let vjp_f = quote! {
        #[oxla::custom_vjp(fwd = f_fwd, bwd = f_bwd)]
        fn f(a: f64, x: f64) -> f64 { a * x }
    };
    let good_bwd = quote! { fn f_bwd(r: f64, g: f64) -> (f64, f64) { (g, g * r) } };
    // fwd without residuals.
    let msgs = signature_errors(
        vjp_f.clone(),
        &[
            quote! { fn f_fwd(a: f64, x: f64) -> f64 { a * x } },
            good_bwd.clone(),
        ],
    );
    assert!(
        msgs[0]
            .contains("must take `f`'s parameters (f64, f64) and return `(outputs…, residuals…)`"),
        "{msgs:?}"
    );
    // bwd with one cotangent for two params.
    let msgs = signature_errors(
        vjp_f.clone(),
        &[
            quote! { fn f_fwd(a: f64, x: f64) -> (f64, f64) { (a * x, a) } },
            quote! { fn f_bwd(r: f64, g: f64) -> f64 { g * r } },
        ],
    );
    assert!(
        msgs[0].contains(
            "must return one cotangent per float parameter of `f` (2: (f64, f64)), but returns 1"
        ),
        "{msgs:?}"
    );
    // A fitting pair.
    let msgs = signature_errors(
        vjp_f,
        &[
            quote! { fn f_fwd(a: f64, x: f64) -> (f64, f64) { (a * x, a) } },
            good_bwd,
        ],
    );
    assert!(msgs.is_empty(), "{msgs:?}");
    // A JVP rule without the tangent result.
    let msgs = signature_errors(
        quote! {
            #[oxla::custom_jvp(jvp = f_jvp)]
            fn f(x: f64) -> f64 { x.sin() }
        },
        &[quote! { fn f_jvp(x: f64, t: f64) -> f64 { x.cos() * t } }],
    );
    assert!(msgs[0].contains("`jvp = f_jvp` must take `f`'s parameters then one tangent per float parameter (f64, f64)"), "{msgs:?}");
}

#[test]
fn malformed_rule_attributes_are_errors() {
    let errors_of = |ts: TokenStream| {
        let mut errors = Errors::new();
        parse_rule(&item(ts), &mut errors);
        errors.messages()
    };
    let msgs = errors_of(quote! { #[oxla::custom_vjp(fwd = a)] fn f(x: f64) -> f64 { x } });
    assert!(msgs[0].contains("`custom_vjp` needs `bwd = …`"), "{msgs:?}");
    let msgs = errors_of(quote! { #[oxla::custom_jvp(rule = a)] fn f(x: f64) -> f64 { x } });
    assert!(
        msgs[0].contains("unknown argument of `custom_jvp`"),
        "{msgs:?}"
    );
    let msgs = errors_of(quote! { #[oxla::custom_jvp(jvp = f)] fn f(x: f64) -> f64 { x } });
    assert!(msgs[0].contains("cannot be its own rule"), "{msgs:?}");
    let msgs = errors_of(quote! {
        #[oxla::custom_jvp(jvp = a)] #[oxla::custom_vjp(fwd = b, bwd = c)] fn f(x: f64) -> f64 { x }
    });
    assert!(msgs[0].contains("one custom rule"), "{msgs:?}");
}

#[test]
fn a_custom_call_inside_a_branch_and_a_loop_keeps_its_rule() {
    let fns = expand(quote! {
        #[grad(df)]
        fn f(x: f64, n: i64) -> f64 {
            let mut s = 0.0;
            for _ in 0..n {
                s += scaled(x);
            }
            if x > 0.0 { s + scaled(x) } else { s - x }
        }
    })
    .unwrap();
    // The rule's derivative is 2 per call: 2·(n + 1) at x > 0, 2·n − 1 below.
    assert_eq!(eval(named(&fns, "df"), &[vec![3.0], vec![4.0]])[0][0], 10.0);
    assert_eq!(eval(named(&fns, "df"), &[vec![-3.0], vec![4.0]])[0][0], 7.0);
    assert_eq!(eval(named(&fns, "f"), &[vec![2.0], vec![1.0]])[0][0], 16.0);
}
