//! Lowering of `for` and `while` loops: the loop op they produce (its
//! constants, index and carries), its values on the reference interpreter
//! against the same loop run by Rust, and the errors for the loops oxla does
//! not support.

use crate::lower::lower_fn;
use oxla_core::ops::control::{Checkpoint, LoopKind};
use oxla_core::{interp, DType, Function, Op, Tensor};
use quote::quote;

fn lower(item: proc_macro2::TokenStream) -> Function {
    let item: syn::ItemFn = syn::parse2(item).unwrap();
    match lower_fn(&item) {
        Ok(f) => f,
        Err(e) => panic!("{:?}", e.messages()),
    }
}

fn errors(item: proc_macro2::TokenStream) -> Vec<String> {
    let item: syn::ItemFn = syn::parse2(item).unwrap();
    match lower_fn(&item) {
        Ok(f) => panic!("lowered:\n{}", oxla_core::text::print(&f)),
        Err(e) => e.messages(),
    }
}

fn the_loop(f: &Function) -> &oxla_core::ops::control::Loop {
    let loops: Vec<_> = f
        .eqns
        .iter()
        .filter_map(|e| match &e.op {
            Op::Loop(l) => Some(&**l),
            _ => None,
        })
        .collect();
    assert_eq!(loops.len(), 1, "{}", oxla_core::text::print(f));
    loops[0]
}

fn scalar(x: f64) -> Tensor {
    Tensor::scalar(DType::F64, x)
}

#[test]
fn a_for_loop_carries_the_variables_it_assigns_and_reads_the_rest_as_constants() {
    let f = lower(quote! {
        fn f(x: f64, y: f64, n: usize) -> f64 {
            let mut a = x;
            let unused = y * 3.0;
            let mut b = y;
            let c = x + 1.0;
            for i in 0..n {
                a = a * c + (i as f64);
                b += a;
            }
            a * b + unused
        }
    });
    let l = the_loop(&f);
    assert_eq!(l.kind, LoopKind::For);
    assert_eq!(l.checkpoint, Checkpoint::All);
    // Read: `c` only (`x`, `y`, `unused` are not read inside).
    assert_eq!(l.n_consts, 1, "{}", oxla_core::text::print(&l.body));
    assert_eq!(l.n_carries(), 2);
    let rust = |x: f64, y: f64, n: usize| {
        let mut a = x;
        let unused = y * 3.0;
        let mut b = y;
        let c = x + 1.0;
        for i in 0..n {
            a = a * c + (i as f64);
            b += a;
        }
        a * b + unused
    };
    for n in [0usize, 1, 5] {
        let out = interp::eval(
            &f,
            &[
                scalar(0.3),
                scalar(-0.7),
                Tensor::scalar(DType::I64, n as f64),
            ],
        )
        .unwrap();
        assert_eq!(out[0].data[0], rust(0.3, -0.7, n), "n = {n}");
    }
}

#[test]
fn inclusive_ranges_and_checkpoint_markers() {
    let f = lower(quote! {
        fn f(x: f64, m: usize) -> f64 {
            let mut s = 0.0;
            for k in oxla::checkpoint_every(3, 1..=m) {
                s += x * (k as f64);
            }
            s
        }
    });
    let l = the_loop(&f);
    assert_eq!(l.checkpoint, Checkpoint::Every(3));
    let out = interp::eval(&f, &[scalar(2.0), Tensor::scalar(DType::I64, 4.0)]).unwrap();
    assert_eq!(out[0].data[0], 2.0 * (1.0 + 2.0 + 3.0 + 4.0));
    let f = lower(quote! {
        fn f(x: f64) -> f64 {
            let mut y = x;
            while oxla::checkpoint(y > 1.0) {
                y = y * 0.5;
            }
            y
        }
    });
    let l = the_loop(&f);
    assert_eq!((l.kind, l.checkpoint), (LoopKind::While, Checkpoint::Sqrt));
    let out = interp::eval(&f, &[scalar(10.0)]).unwrap();
    assert_eq!(out[0].data[0], 0.625);
}

#[test]
fn a_while_loop_and_its_condition_share_their_constants() {
    let f = lower(quote! {
        fn f(a: f64, b: f64) -> f64 {
            let mut x = a;
            let mut k = 0.0;
            while x < b {
                x = x * 2.0 + a;
                k += 1.0;
            }
            x + k
        }
    });
    let l = the_loop(&f);
    let cond = l.cond.as_ref().unwrap();
    assert_eq!(cond.params.len(), l.n_consts + l.n_carries());
    // `a` (body) and `b` (condition).
    assert_eq!(l.n_consts, 2);
    let rust = |a: f64, b: f64| {
        let mut x = a;
        let mut k = 0.0;
        while x < b {
            x = x * 2.0 + a;
            k += 1.0;
        }
        x + k
    };
    let out = interp::eval(&f, &[scalar(0.5), scalar(40.0)]).unwrap();
    assert_eq!(out[0].data[0], rust(0.5, 40.0));
}

#[test]
fn nested_loops_thread_their_constants_through_the_outer_body() {
    let f = lower(quote! {
        fn f(x: f64, n: usize) -> f64 {
            let mut s = 0.0;
            for i in 0..n {
                let mut p = 1.0;
                for _ in 0..=i {
                    p *= x;
                }
                s += p;
            }
            s
        }
    });
    let l = the_loop(&f);
    let inner = l
        .body
        .eqns
        .iter()
        .filter(|e| matches!(e.op, Op::Loop(_)))
        .count();
    assert_eq!(inner, 1);
    let out = interp::eval(&f, &[scalar(0.5), Tensor::scalar(DType::I64, 3.0)]).unwrap();
    assert_eq!(out[0].data[0], 0.5 + 0.25 + 0.125);
}

#[test]
fn a_loop_that_assigns_nothing_outside_has_no_carries() {
    let f = lower(quote! {
        fn f(x: f64) -> f64 {
            for _ in 0..3 {
                let mut t = x;
                t += 1.0;
            }
            x
        }
    });
    assert_eq!(the_loop(&f).n_carries(), 0);
}

#[test]
fn unsupported_loops_are_spanned_errors_naming_what_is_supported() {
    let cases = [
        (
            quote! { fn f(x: f64) -> f64 { let mut y = x; loop { y = y * 0.5; } y } },
            "`loop` is not supported",
        ),
        (
            quote! { fn f(x: f64) -> f64 { let mut y = x; for _ in 0..3 { y = if y > 1.0 { break } else { y * 0.5 }; } y } },
            "`break` and `continue` are supported as statements",
        ),
        (
            quote! { fn f(x: f64) -> f64 { let mut y = x; for _ in 0..3 { if y > 1.0 { break 'a; } } y } },
            "`break` with a label or a value is not supported",
        ),
        (
            quote! { fn f(x: f64) -> f64 { let mut y = x; for _ in 0..3 { let z = y * 2.0; if z > 1.0 { return z; } y = z; } y } },
            "`return` inside a loop is supported as a statement of the loop's own body",
        ),
        (
            quote! { fn f(x: f64) -> f64 { let mut y = x; 'outer: for _ in 0..3 { y = y * 0.5; } y } },
            "loop labels",
        ),
        (
            quote! { fn f(x: &[f64]) -> f64 { let mut s = 0.0; for v in x.windows(2) { s += v; } s } },
            "runs over a range `a..b` or over an array",
        ),
        (
            quote! { fn f(x: f64) -> f64 { let mut y = x; for _ in 0..x { y = y * 0.5; } y } },
            "a loop bound is an integer scalar",
        ),
        (
            quote! { fn f(x: f64) -> f64 { let mut y = x; for _ in 0.. { y = y * 0.5; } y } },
            "needs both bounds",
        ),
        (
            quote! { fn f(x: f64) -> f64 { let mut y = x; while y { y = y * 0.5; } y } },
            "a `while` condition is a scalar comparison or bool",
        ),
        (
            quote! { fn f(x: f64) -> f64 { let y = x; for _ in 0..3 { y = y * 0.5; } y } },
            "cannot assign twice to immutable variable `y`",
        ),
        (
            quote! { fn f(x: f64) -> f64 { let mut y = x; for _ in oxla::checkpoint_every(0, 0..3) { y = y * 0.5; } y } },
            "positive integer literal",
        ),
    ];
    for (item, want) in cases {
        let msgs = errors(item.clone());
        assert!(
            msgs.iter().any(|m| m.contains(want)),
            "{item}: want {want:?}, got {msgs:?}"
        );
    }
}

#[test]
fn a_loop_used_as_a_value_says_it_is_a_statement() {
    let msgs = errors(
        quote! { fn f(x: f64) -> f64 { let mut y = x; let z = for _ in 0..2 { y = y * 2.0; }; y } },
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("a loop is a statement, not a value")),
        "{msgs:?}"
    );
}
