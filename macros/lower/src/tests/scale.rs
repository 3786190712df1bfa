//! Scale (issue 20): expansion time and the size of what is generated grow
//! in proportion to the user's function, and deep nesting in the user's
//! code is lowered without deep recursion.

use crate::codegen::CodegenOptions;
use crate::expand_attribute_with;
use crate::parse::attr::TransformKind;
use proc_macro2::TokenStream;
use std::time::{Duration, Instant};

/// The expansion of `item` under `kind` (as text: a `TokenStream` stays on
/// its thread), checked free of errors.
fn expand(kind: TransformKind, args: &str, item: &str) -> String {
    let item: TokenStream = item.parse().unwrap();
    let out = expand_attribute_with(
        kind,
        args.parse().unwrap(),
        item,
        &CodegenOptions::default(),
    );
    let text = out.to_string();
    assert!(!text.contains("compile_error"), "{text}");
    text
}

/// Run `f` on a thread of its own (a big stack: the test is about time),
/// failing when it takes longer than `limit` (what used to take minutes
/// fails in `limit`, not after it).
pub(crate) fn within<T: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let _ = tx.send(f());
        })
        .unwrap();
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("{what}: not done in {limit:?}"))
}

/// The fastest of three expansions (the least disturbed by other work).
fn expansion_time(kind: TransformKind, args: &'static str, item: String) -> Duration {
    within(Duration::from_secs(60), "an expansion", move || {
        (0..3)
            .map(|_| {
                let t = Instant::now();
                expand(kind, args, &item);
                t.elapsed()
            })
            .min()
            .unwrap()
    })
}

/// `let mut y = x; if y > c0 { y = y * 1.01; if y > c1 { … } else { … } }
/// else { y = y + 0.01; y }`, nested to depth `d` (each branch one
/// arithmetic step).
pub(crate) fn nested_if(d: usize) -> String {
    let mut body = "y".to_string();
    for k in (0..d).rev() {
        let c = 1.0 / (k as f64 + 2.0);
        body = format!("if y > {c:?} {{ y = y * 1.01; {body} }} else {{ y = y + 0.01; y }}");
    }
    format!("fn f(x: f64) -> f64 {{ let mut y = x; {body} }}")
}

/// `if x > c_k { y = y * 1.01 } else { y = y + 0.01 }`, `d` times in
/// sequence.
pub(crate) fn if_chain(d: usize) -> String {
    let mut s = String::from("fn f(x: f64) -> f64 { let mut y = x; ");
    for k in 0..d {
        let c = k as f64 / d as f64;
        s += &format!("if x > {c:?} {{ y = y * 1.01; }} else {{ y = y + 0.01; }} ");
    }
    s + "y }"
}

/// Twice the size takes less than 3 times as long (linear: 2, quadratic:
/// 4), in one of three measurements: other work on a shared machine slows
/// one expansion and not the other, never the linear code into a quadratic
/// ratio three times in a row.
/// Returns the passing measurement.
pub(crate) fn assert_linear(
    what: &str,
    measure: impl Fn() -> (Duration, Duration),
) -> (Duration, Duration) {
    let mut seen = Vec::new();
    for _ in 0..3 {
        let (small, large) = measure();
        let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-4);
        println!("{what}: {small:?}, twice the size {large:?} (x{ratio:.2})");
        if ratio < 3.0 {
            return (small, large);
        }
        seen.push(format!("x{ratio:.2} ({small:?}, {large:?})"));
    }
    panic!("{what}: twice the size took {}", seen.join(", then "));
}

/// Nested scalar `if`s under `#[grad]` took time exponential-looking in the
/// depth (depth 64: a minute; depth 200: not done in 300 s): the CSE key
/// printed every nested branch, every level re-simplified and re-verified
/// the levels below it, a tangent cond's transpose took the JVP of the
/// JVP (one more tangent param per level), and every transform copied the
/// branches whole.
#[test]
fn nested_scalar_ifs_under_grad_expand_in_linear_time() {
    assert_linear("nested ifs of depth 64 under grad", || {
        (
            expansion_time(TransformKind::Grad, "df", nested_if(64)),
            expansion_time(TransformKind::Grad, "df", nested_if(128)),
        )
    });
    let t = expansion_time(TransformKind::Grad, "df", nested_if(200));
    println!("depth 200 under grad: {t:?}");
    assert!(t < Duration::from_secs(20), "depth 200: {t:?}");
    assert_linear("nested ifs of depth 64 under jit", || {
        (
            expansion_time(TransformKind::Jit, "", nested_if(64)),
            expansion_time(TransformKind::Jit, "", nested_if(128)),
        )
    });
}

#[test]
fn chains_of_scalar_ifs_under_grad_expand_in_linear_time() {
    assert_linear("256 ifs in sequence under grad", || {
        (
            expansion_time(TransformKind::Grad, "df", if_chain(256)),
            expansion_time(TransformKind::Grad, "df", if_chain(512)),
        )
    });
}

/// The gradient's IR grows with the depth, not with its square: the
/// transpose of a tangent cond's branch is the branch transposed, not the
/// transpose of its JVP (whose params grew by one per level: `t_t_t_y`).
#[test]
fn the_gradient_of_nested_ifs_grows_linearly() {
    let ir = |d: usize| {
        let item: syn::ItemFn = syn::parse_str(&nested_if(d)).unwrap();
        let f = crate::lower_fn(&item).unwrap();
        let g = oxla_core::transforms::grad(&f, &[0]).unwrap();
        oxla_core::text::print(&g)
    };
    let (small, large) = (ir(32), ir(64));
    assert!(!large.contains("t_t_"), "{large}");
    let ratio = large.len() as f64 / small.len() as f64;
    assert!(ratio < 2.3, "{} then {} chars", small.len(), large.len());
}

/// A function whose body nests `n` deep: a sum of `n` terms, `n` nested
/// parentheses, `n` minus signs, `n` chained `.sin()` calls.
pub(crate) fn deep_body(name: &str, n: usize) -> String {
    let body = match name {
        "sum" => {
            let mut s = String::from("x");
            for i in 0..n {
                s += &format!(" + x * {i}.0");
            }
            s
        }
        "parens" => format!("{}x * 2.0{}", "(".repeat(n), ") + 1.0".repeat(n)),
        "neg" => format!("{}x", "-".repeat(n)),
        "sin" => format!("x{}", ".sin()".repeat(n)),
        _ => unreachable!(),
    };
    format!("fn f(x: f64) -> f64 {{ {body} }}")
}

/// How deeply the groups (`()`, `[]`, `{}`) of `ts` nest, without recursion.
pub(crate) fn group_depth(ts: TokenStream) -> usize {
    let mut deepest = 0;
    let mut open = vec![(ts.into_iter(), 0usize)];
    while let Some((it, d)) = open.last_mut() {
        let d = *d;
        match it.next() {
            Some(proc_macro2::TokenTree::Group(g)) => {
                deepest = deepest.max(d + 1);
                open.push((g.stream().into_iter(), d + 1));
            }
            Some(_) => {}
            None => {
                open.pop();
            }
        }
    }
    deepest
}

/// A sum of 5,000 terms, 1,000 nested parentheses, 5,000 minus signs and
/// 5,000 chained `.sin()` calls under `#[grad]` expand on a 6 MiB stack
/// (rustc gives its thread, which runs proc macros, 8 MiB), where the
/// lowering recursed once per term and overflowed. (syn's own parser
/// still recurses once per parenthesis: about 4 MiB for 1,000; pairs of
/// minus signs are dropped before it parses.) What is generated nests no
/// deeper than a few groups: straight-line code is one `let` per value.
#[test]
fn deep_expressions_expand_on_a_small_stack() {
    for (case, n) in [
        ("sum", 5000),
        ("parens", 1000),
        ("neg", 5000),
        ("sin", 5000),
    ] {
        let item = deep_body(case, n);
        let run = move || {
            let t = Instant::now();
            let out = expand(TransformKind::Grad, "df", &item);
            let elapsed = t.elapsed();
            (group_depth(out.parse().unwrap()), elapsed)
        };
        let (depth, elapsed) = std::thread::Builder::new()
            .stack_size(6 << 20)
            .spawn(run)
            .unwrap()
            .join()
            .unwrap();
        println!("{case} ({n}): expanded in {elapsed:?}, groups nest {depth} deep");
        assert!(
            depth <= 4,
            "{case}: the generated code nests {depth} groups deep"
        );
    }
}

/// Pairs of unary minus signs are dropped before parsing, keeping the
/// value: an odd number negates, a binary minus stays.
#[test]
fn runs_of_minus_signs_keep_their_parity() {
    let fold = |s: &str| {
        crate::lower::control::flow::fold_double_negation(s.parse().unwrap())
            .to_string()
            .replace(' ', "")
    };
    assert_eq!(fold("- - x"), "x");
    assert_eq!(fold("- - - x"), "-x");
    assert_eq!(fold("y - - x"), "y--x");
    assert_eq!(fold("y - - - x"), "y-x");
    assert_eq!(fold("f(- - x) -> f64"), "f(x)->f64");
    assert_eq!(fold("a -= - - b"), "a-=b");
    assert_eq!(fold("x? - - - y"), "x?-y");
}
