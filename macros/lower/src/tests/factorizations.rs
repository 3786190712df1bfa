//! The factorizations' spellings (`vocab::factorizations`): what they
//! lower to, and the spanned errors for what they do not take.

use crate::tests::{lower, lower_errors};
use quote::quote;

#[test]
fn each_spelling_lowers_to_its_primitives() {
    let f = lower(quote! {
        fn f(a: ArrayView2<f64>, b: ArrayView1<f64>) -> f64 {
            let l = cholesky(a);
            let (sign, logabsdet) = slogdet(a);
            cho_solve(l, b).sum() + solve(a, b).sum() + inv(a).sum() + det(a) + sign * logabsdet
                + solve_triangular(l, b, true).sum()
        }
    });
    let text = oxla_core::text::print(&f);
    for op in [
        "cholesky",
        "triangular_solve[1,1,0,0]",
        "triangular_solve[1,1,1,0]",
        "solve[0]",
        "det",
        "det_sign",
        "log_abs_det",
    ] {
        assert!(text.contains(op), "no `{op}` in\n{text}");
    }
}

#[test]
fn misuses_are_spanned_errors_naming_what_is_taken() {
    let cases = [
        (
            quote! { fn f(a: ArrayView2<f64>) -> f64 { slogdet(a) + 1.0 } },
            "bind both",
        ),
        (
            quote! { fn f(a: ArrayView1<f64>) -> f64 { det(a) } },
            "square matrix",
        ),
        (
            quote! { fn f(a: ArrayView2<f64>, b: ArrayView1<f64>, up: bool) -> f64 { solve_triangular(a, b, up).sum() } },
            "`true` or `false` literals",
        ),
        (
            quote! { fn f(a: ArrayView2<f64>, b: ArrayView2<f64>) -> f64 { solve(a).sum() + b.sum() } },
            "`solve` takes `solve(a, b)`",
        ),
    ];
    for (src, want) in cases {
        let errs = lower_errors(src);
        assert!(errs.iter().any(|e| e.contains(want)), "{want}: {errs:?}");
    }
}
