//! Control flow: `let mut`, assignment, `if` that assigns, early `return`,
//! `match` on integers. Each form's IR, its values (with the reference op
//! rules, against the same function in plain Rust) and its errors.

use crate::tests::{dump, eval};
use crate::tests::{lower, lower_errors as errors};
use oxla_core::{DType, Function, Tensor};
use quote::quote;

fn assert_one(msgs: &[String], needle: &str) {
    assert!(
        msgs.iter().any(|m| m.contains(needle)),
        "no error containing {needle:?} in {msgs:#?}"
    );
}

/// `f` at each of `xs` against `reference`.
fn check_scalar(f: &Function, xs: &[f64], reference: impl Fn(f64) -> f64) {
    for &x in xs {
        let got = eval(f, &[vec![x]])[0][0];
        let want = reference(x);
        assert!(
            (got - want).abs() <= 1e-12 * want.abs().max(1.0),
            "at {x}: {got} vs {want}\n{}",
            dump(f)
        );
    }
}

#[test]
fn let_mut_and_compound_assignment_rebind_in_ssa() {
    let f = lower(quote! {
        fn f(x: f64) -> f64 {
            let mut y = x;
            y += 1.0;
            y *= x;
            y -= 2.0;
            y /= 4.0;
            y = y * y;
            y
        }
    });
    assert_eq!(
        dump(&f),
        "fn f(x=%0: f64[])
  %1 = literal[1.0] : f64[]
  %2 = add %0 %1 : f64[]
  %3 = mul %2 %0 : f64[]
  %4 = literal[2.0] : f64[]
  %5 = sub %3 %4 : f64[]
  %6 = literal[4.0] : f64[]
  %7 = div %5 %6 : f64[]
  %8 = mul %7 %7 : f64[]
  -> %8"
    );
    check_scalar(&f, &[-1.5, 0.0, 2.0], |x| {
        let mut y = x;
        y += 1.0;
        y *= x;
        y -= 2.0;
        y /= 4.0;
        y = y * y;
        y
    });
}

#[test]
fn assignment_on_arrays_broadcasts_the_right_side_and_unifies_lengths() {
    let f = lower(quote! {
        fn f(x: &[f64], w: &[f64]) -> Vec<f64> {
            let mut acc = x * 2.0;
            acc += 1.0;
            acc = acc * w;
            acc
        }
    });
    // The assignment unified `n_w` with `n_x`.
    assert_eq!(
        f.symbols().into_iter().collect::<Vec<_>>(),
        vec!["n_x".to_string()]
    );
    assert_eq!(
        eval(&f, &[vec![1.0, 2.0], vec![3.0, -1.0]]),
        vec![vec![9.0, -5.0]]
    );
}

#[test]
fn an_inner_let_shadows_and_assignment_reaches_the_owning_scope() {
    let f = lower(quote! {
        fn f(x: f64) -> f64 {
            let mut y = x;
            {
                let y = 100.0;
                let unused = y + 1.0;
            }
            {
                y += 1.0;
                let mut z = y;
                z *= 3.0;
                y = z;
            }
            y
        }
    });
    check_scalar(&f, &[0.5, -2.0], |x| (x + 1.0) * 3.0);
}

#[test]
fn if_that_assigns_gives_the_variable_as_a_result_of_the_cond() {
    let f = lower(quote! {
        fn f(x: f64) -> f64 {
            let mut y = x;
            let mut z = 1.0;
            if x > 0.0 {
                y = x * 2.0;
            } else if x < -1.0 {
                y *= -1.0;
                z = 5.0;
            }
            if x > 3.0 { z += x; }
            y + z
        }
    });
    let d = dump(&f);
    // Scalar conditions: conds, no selects. The outer `if` gives y and z
    // (its else branch holds the `else if`, which gives them too); the
    // last gives z.
    assert_eq!(d.matches("cond[").count(), 3, "{d}");
    assert!(!d.contains("select"), "{d}");
    let top: Vec<usize> = f
        .eqns
        .iter()
        .filter(|e| matches!(e.op, oxla_core::Op::Cond(_)))
        .map(|e| e.outs.len())
        .collect();
    assert_eq!(top, [2, 1], "{d}");
    check_scalar(&f, &[-3.0, -0.5, 0.0, 1.0, 4.0], |x| {
        let mut y = x;
        let mut z = 1.0;
        if x > 0.0 {
            y = x * 2.0;
        } else if x < -1.0 {
            y *= -1.0;
            z = 5.0;
        }
        if x > 3.0 {
            z += x;
        }
        y + z
    });
}

#[test]
fn if_with_values_and_assignments_and_nested_ifs() {
    let f = lower(quote! {
        fn f(x: f64) -> f64 {
            let mut a = 0.0;
            let v = if x < 1.0 {
                a = 2.0;
                if x < 0.0 { a -= x; }
                x * a
            } else {
                x
            };
            v + a
        }
    });
    check_scalar(&f, &[-2.0, 0.5, 3.0], |x| {
        let mut a = 0.0;
        let v = if x < 1.0 {
            a = 2.0;
            if x < 0.0 {
                a -= x;
            }
            x * a
        } else {
            x
        };
        v + a
    });
}

#[test]
fn an_array_condition_assigns_arrays_elementwise() {
    let f = lower(quote! {
        fn f(x: &[f64]) -> Vec<f64> {
            let mut y = x * 1.0;
            if x > 0.0 { y = x * 3.0; } else { y -= 1.0; }
            y
        }
    });
    assert_eq!(eval(&f, &[vec![-1.0, 2.0]]), vec![vec![-2.0, 6.0]]);
    let m = errors(quote! {
        fn f(x: &[f64]) -> f64 {
            let mut s = 0.0;
            if x > 0.0 { s = 1.0; }
            s
        }
    });
    assert_one(&m, "`s` is f64[], but this `if` on an array condition picks elementwise, which would make it f64[n_x]");
}

#[test]
fn early_return_inside_if_becomes_the_else() {
    let f = lower(quote! {
        fn f(x: f64) -> f64 {
            let mut y = x * x;
            if x < -1.0 {
                return y;
            }
            y += 1.0;
            if x > 2.0 {
                if x > 5.0 { return 0.5; }
                y *= 2.0;
            } else {
                return y - x;
            }
            y
        }
    });
    check_scalar(&f, &[-3.0, 0.0, 1.5, 3.0, 6.0], |x| {
        let mut y = x * x;
        if x < -1.0 {
            return y;
        }
        y += 1.0;
        if x > 2.0 {
            if x > 5.0 {
                return 0.5;
            }
            y *= 2.0;
        } else {
            return y - x;
        }
        y
    });
}

#[test]
fn early_return_of_a_tuple() {
    let f = lower(quote! {
        fn f(x: f64) -> (f64, f64) {
            if x < 0.0 { return (x, -x); }
            (x * 2.0, x)
        }
    });
    assert_eq!(eval(&f, &[vec![-1.0]]), vec![vec![-1.0], vec![1.0]]);
    assert_eq!(eval(&f, &[vec![2.0]]), vec![vec![4.0], vec![2.0]]);
}

#[test]
fn match_on_an_integer_is_a_select_chain() {
    let f = lower(quote! {
        fn f(x: f64, k: i64) -> f64 {
            let mut y = x;
            let s = match k {
                0 => x,
                1 | 2 => { y = 2.0; x * 2.0 }
                -5..=-3 => x * 3.0,
                10.. => -x,
                _ => 0.5,
            };
            s + y
        }
    });
    let d = dump(&f);
    assert!(d.contains("convert"), "{d}");
    let reference = |x: f64, k: i64| {
        let mut y = x;
        let s = match k {
            0 => x,
            1 | 2 => {
                y = 2.0;
                x * 2.0
            }
            -5..=-3 => x * 3.0,
            10.. => -x,
            _ => 0.5,
        };
        s + y
    };
    for k in -7..14 {
        let got = eval(&f, &[vec![1.5], vec![k as f64]])[0][0];
        assert_eq!(got, reference(1.5, k), "k = {k}\n{d}");
    }
    // The type's bounds are never compared, so they need not be exact in
    // f32; without `_`, a gap is named.
    let m = errors(quote! {
        fn g(x: f32, k: i32) -> f32 { match k { i32::MIN..=0 => x, 1..=9 => 2.0 } }
    });
    assert_eq!(
        m,
        ["non-exhaustive patterns: `10` (of type i32) is not covered; add a `_ => …` arm"]
    );
    let h = lower(quote! {
        fn h(x: f32, k: i64) -> f32 { match k { i64::MIN..=-1 => -x, 0..=i64::MAX => x } }
    });
    assert_eq!(eval(&h, &[vec![2.0], vec![-3.0]]), vec![vec![-2.0]]);
    assert_eq!(eval(&h, &[vec![2.0], vec![0.0]]), vec![vec![2.0]]);
    // Exhaustive without `_`: the ranges cover every i32.
    let g = lower(quote! {
        fn g(x: f32, k: i32) -> f32 {
            match k { ..=0 => x, 1 => 2.0, 2.. => 3.0 }
        }
    });
    assert_eq!(eval(&g, &[vec![4.0], vec![-9.0]]), vec![vec![4.0]]);
    assert_eq!(eval(&g, &[vec![4.0], vec![1.0]]), vec![vec![2.0]]);
    assert_eq!(eval(&g, &[vec![4.0], vec![7.0]]), vec![vec![3.0]]);
}

#[test]
fn match_as_a_statement_assigns() {
    let f = lower(quote! {
        fn f(x: f64, k: i32) -> f64 {
            let mut y = x;
            match k {
                0 => y += 1.0,
                1 => { y *= 3.0; }
                _ => {}
            }
            y
        }
    });
    for (k, want) in [(0, 3.0), (1, 6.0), (5, 2.0)] {
        assert_eq!(eval(&f, &[vec![2.0], vec![k as f64]]), vec![vec![want]]);
    }
}

#[test]
fn errors_of_assignment() {
    let m = errors(quote! {
        fn f(x: f64, v: &[f64]) -> f64 {
            let mut y = x;
            y = v * 2.0;
            let mut k = x;
            k += v;
            let a = 1.0;
            a += 1.0;
            x = 2.0;
            let g = |t| { y = t; t };
            let mut w = v * 1.0;
            w[0][0] = 1.0;
            y ^= 2.0;
            q = 1.0;
            y + k + g(x)
        }
    });
    assert_one(&m, "mismatched types: `y` is f64[] but this assigns f64[n_v]; an assignment keeps the variable's type");
    assert_one(
        &m,
        "mismatched types: `k` is f64[] but this assigns f64[n_v]",
    );
    assert_one(
        &m,
        "cannot assign twice to immutable variable `a`: declare it `let mut a`",
    );
    assert_one(&m, "cannot assign to immutable argument `x`");
    assert_one(&m, "cannot assign to `y` inside a closure");
    assert_one(
        &m,
        "`x[i][j] = v` is not supported: index once with all the indices, `x[[i, j]] = v`",
    );
    assert_one(&m, "unsupported compound assignment `^=`");
    assert_one(&m, "cannot find `q` in this oxla function");
    // Integer and float do not mix either.
    let m = errors(quote! {
        fn f(x: f64, k: i64) -> f64 { let mut y = x; y = k; y }
    });
    assert_one(&m, "mismatched types: `y` is f64[] but this assigns i64[]");
}

#[test]
fn errors_of_match() {
    let m = errors(quote! {
        fn f(x: f64, k: i32) -> f64 {
            let a = match k { 0 => x, 1 => 2.0 };
            let b = match k { n if n > 2 => x, _ => 1.0 };
            let c = match x { _ => 1.0 };
            let d = match k { 0.5 => x, _ => 1.0 };
            let e = match k { 3_000_000_000 => x, _ => 1.0 };
            let g = match k { n => x };
            a + b + c + d + e + g
        }
    });
    assert_one(&m, "non-exhaustive patterns: `i32::MIN`");
    assert_one(&m, "match guards (`pattern if cond =>`) are not supported");
    // The guard's arm is reported once (its binding pattern is not).
    assert_eq!(
        m.iter()
            .filter(|e| e.contains("unsupported pattern"))
            .count(),
        1,
        "{m:#?}"
    );
    assert_one(&m, "`match` takes an integer scalar");
    assert_one(&m, "a pattern here is an integer literal");
    assert_one(&m, "literal `3000000000` out of range for i32");
    assert_one(
        &m,
        "unsupported pattern: a `match` arm takes integer literals",
    );
    let m = errors(quote! {
        fn f(x: f32, k: i64) -> f32 { match k { 20000000 => x, _ => 1.0 } }
    });
    assert_one(
        &m,
        "`20000000` is too large: an integer is compared (in a `match`, or with a literal) in the function's float type f32",
    );
}

// ---- sizes ---------------------------------------------------------------------

#[test]
fn len_as_float_is_the_dim_size_itself() {
    let f = lower(quote! {
        fn mean(x: &[f64]) -> f64 { sum(x) / x.len() as f64 }
    });
    assert_eq!(
        dump(&f),
        "fn mean(x=%0: f64[n_x])
  %1 = reduce_sum[0] %0 : f64[]
  %2 = dim_size[n_x] : f64[]
  %3 = convert %2 : i64[]
  %4 = div %1 %2 : f64[]
  -> %4"
    );
    let x = Tensor::new(DType::F64, vec![3], vec![1.0, 2.0, 6.0]);
    assert_eq!(
        oxla_core::interp::eval(&f, &[x]).unwrap()[0].data,
        vec![3.0]
    );
}

#[test]
fn sizes_of_axes_and_match_on_a_length() {
    let f = lower(quote! {
        fn f(a: ndarray::ArrayView2<f64>, v: &[f64]) -> f64 {
            let r = a.nrows() as f64;
            let c = a.ncols() as f64;
            let s = a.shape()[1] as f64 + a.len_of(Axis(0)) as f64;
            let k = match v.len() { 0 => 0.0, 1..=2 => 10.0, _ => 100.0 };
            r * 1000.0 + c * 100.0 + s + k
        }
    });
    let d = dump(&f);
    assert!(
        !d.contains("convert[f64]"),
        "a size is used as a float without a round trip:\n{d}"
    );
    for (n, k) in [(0, 0.0), (1, 10.0), (2, 10.0), (3, 100.0)] {
        let a = Tensor::new(DType::F64, vec![2, 3], vec![0.0; 6]);
        let v = Tensor::new(DType::F64, vec![n], vec![1.0; n]);
        let got = oxla_core::interp::eval(&f, &[a, v]).unwrap()[0].data[0];
        assert_eq!(got, 2000.0 + 300.0 + 5.0 + k, "{d}");
    }
    let m = errors(quote! {
        fn f(a: ndarray::ArrayView2<f64>, v: &[f64]) -> f64 {
            let n = a.len() as f64;
            let r = v.nrows() as f64;
            let s = v.shape()[1] as f64;
            n + r + s
        }
    });
    assert_one(&m, "`len` takes a 1-d array");
    assert_one(&m, "`nrows` takes a 2-d array, but this has shape [n_v]");
    assert_one(&m, "axis 1 of an array of shape [n_v]");
}

#[test]
fn an_integer_compares_with_an_integer_literal() {
    let f = lower(quote! {
        fn f(x: f64, k: i32, v: &[f64]) -> f64 {
            let mut y = x;
            if k < 0 { y = -x; }
            if v.len() >= 3 { y *= 2.0; }
            if -2 == k { y += 100.0; }
            y
        }
    });
    for (k, n, want) in [(1, 2, 1.5), (-1, 2, -1.5), (1, 3, 3.0), (-2, 4, 97.0)] {
        let args = [
            Tensor::scalar(DType::F64, 1.5),
            Tensor::scalar(DType::I32, k as f64),
            Tensor::new(DType::F64, vec![n], vec![0.0; n]),
        ];
        let got = oxla_core::interp::eval(&f, &args).unwrap()[0].data[0];
        assert_eq!(got, want, "k = {k}, n = {n}");
    }
    // A scalar function with an integer parameter stays straight-line Rust.
    let g = lower(quote! {
        fn g(x: f64, k: i64) -> f64 { match k { 0 => x, _ => if k > 5 { -x } else { x * x } } }
    });
    assert!(crate::is_straight_line(&g), "{}", dump(&g));
}

// ---- constants -----------------------------------------------------------------

#[test]
fn constants_become_hidden_scalar_parameters() {
    let item: syn::ItemFn = syn::parse2(quote! {
        fn f(x: f64) -> f64 { x * A + consts::G * A - Self::K + std::f64::consts::PI }
    })
    .unwrap();
    let (f, _, consts) = crate::lower::lower_fn_full(&item).unwrap();
    // One parameter per distinct path, after the declared ones; `PI` stays
    // a literal.
    assert_eq!(
        f.param_names,
        ["x", "__oxla_const_0", "__oxla_const_1", "__oxla_const_2"]
    );
    let paths: Vec<String> = consts
        .iter()
        .map(|c| {
            quote::ToTokens::to_token_stream(&c.path)
                .to_string()
                .replace(' ', "")
        })
        .collect();
    assert_eq!(paths, ["A", "consts::G", "Self::K"]);
    assert!(
        dump(&f).contains(&format!("literal[{}]", std::f64::consts::PI)),
        "{}",
        dump(&f)
    );
    assert_eq!(
        eval(&f, &[vec![2.0], vec![3.0], vec![10.0], vec![0.5]]),
        vec![vec![2.0 * 3.0 + 10.0 * 3.0 - 0.5 + std::f64::consts::PI]]
    );
}

#[test]
fn generated_code_reads_constants_and_keeps_the_signatures() {
    use crate::codegen::CodegenOptions;
    use crate::parse::attr::TransformKind;
    let out = crate::expand_attribute_with(
        TransformKind::Grad,
        quote!(df),
        quote! { fn f(x: f64, k: i64) -> f64 { x * x * A } },
        &CodegenOptions::default(),
    );
    let file: syn::File = syn::parse2(out.clone()).expect("the expansion parses");
    let sigs: Vec<String> = file
        .items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Fn(f) => Some(quote!(#f).to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(sigs.len(), 2, "{out}");
    for s in &sigs {
        assert!(s.contains("let __oxla_const_0 : :: core :: primitive :: f64 = (A) as :: core :: primitive :: f64 ;"), "{s}");
    }
    assert!(sigs[1].contains("fn df (x : :: core :: primitive :: f64 , k : :: core :: primitive :: i64) -> :: core :: primitive :: f64"), "{}", sigs[1]);
}

#[test]
fn errors_of_constants() {
    let m = errors(quote! { fn f(x: half::f16) -> half::f16 { x * A } });
    assert_one(&m, "a constant (`A`) in a f16 function is not supported");
    // A lower-case unknown name is still a missing variable.
    let m = errors(quote! { fn f(x: f64) -> f64 { x * a + m::b } });
    assert_one(&m, "cannot find `a` in this oxla function");
    assert_one(&m, "unsupported path `m::b`");
}

#[test]
fn an_assignment_is_not_a_value() {
    let m = errors(quote! {
        fn f(x: f64) -> f64 { let mut y = x; let z = (y = 2.0); let w = (y += 1.0); y }
    });
    assert_one(&m, "an assignment is a statement (`x = e;`), not a value");
    assert_one(&m, "an assignment is a statement (`x += e;`), not a value");
}

// ---- tuple lets and helpers returning tuples --------------------------------------

#[test]
fn tuple_let_binds_the_values_of_a_helper_a_tuple_or_branches() {
    let helper: syn::ItemFn = syn::parse2(quote! {
        fn split(x: f64, y: f64) -> (f64, f64) {
            let mut s = x + y;
            if s < 0.0 { return (-s, x * y); }
            s *= 2.0;
            (s, x - y)
        }
    })
    .unwrap();
    let table = crate::resolve::helpers::HelperTable::by_name(vec![helper]);
    let (f, unknown) = crate::resolve::helpers::with_helpers(&table, || {
        lower(quote! {
            fn f(x: f64, y: f64) -> f64 {
                let (a, mut b) = split(x, y);
                b += 1.0;
                let (c, _) = if a > 3.0 { (a, b) } else { (b, a) };
                let (p, q) = (c * 2.0, a);
                p + q + b
            }
        })
    });
    assert!(unknown.is_empty());
    let reference = |x: f64, y: f64| {
        let split = |x: f64, y: f64| {
            let mut s = x + y;
            if s < 0.0 {
                return (-s, x * y);
            }
            s *= 2.0;
            (s, x - y)
        };
        let (a, mut b) = split(x, y);
        b += 1.0;
        let (c, _) = if a > 3.0 { (a, b) } else { (b, a) };
        let (p, q) = (c * 2.0, a);
        p + q + b
    };
    for (x, y) in [(1.0, 0.5), (3.0, 2.0), (-2.0, 0.5)] {
        assert_eq!(
            eval(&f, &[vec![x], vec![y]])[0][0],
            reference(x, y),
            "({x}, {y})"
        );
    }
    let (m, _) = crate::resolve::helpers::with_helpers(&table, || {
        errors(quote! {
            fn f(x: f64, y: f64) -> f64 {
                let (a, b, c) = split(x, y);
                let d = split(x, y);
                let (e, [g]) = (x, y);
                x
            }
        })
    });
    assert_one(&m, "this gives 2 values but the pattern binds 3");
    assert_one(
        &m,
        "`split` returns 2 values: bind them with `let (a, b) = split(…);`",
    );
    assert_one(&m, "unsupported pattern in a tuple `let`");
}

// ---- `if` on a scalar: a cond ---------------------------------------------------

/// The conds at the top level of `f`.
fn conds(f: &Function) -> Vec<&oxla_core::ops::control::Cond> {
    f.eqns
        .iter()
        .filter_map(|e| match &e.op {
            oxla_core::Op::Cond(c) => Some(&**c),
            _ => None,
        })
        .collect()
}

/// Each branch reads only what it needs: the constants neither reads are
/// dropped; a branch that does not assign a variable passes its value on.
#[test]
fn a_scalar_if_is_a_cond_whose_branches_read_only_what_they_need() {
    let f = lower(quote! {
        fn f(x: f64, y: f64, unused: f64) -> f64 {
            let mut acc = y;
            let v = if x > 0.0 {
                acc += 1.0;
                x.ln()
            } else {
                0.0
            };
            v + acc + unused * 0.0
        }
    });
    let cs = conds(&f);
    assert_eq!(cs.len(), 1, "{}", dump(&f));
    let c = cs[0];
    // The constants: x (the log side) and y (the value of `acc`).
    assert_eq!(c.n_consts(), 2, "{}", dump(&f));
    // Results: the value, then `acc`.
    assert_eq!(c.then.outs.len(), 2);
    assert!(!dump(&f).contains("select"), "{}", dump(&f));
    for (x, y) in [(2.0, 0.5), (-1.0, 0.5), (0.0, -3.0)] {
        let got = eval(&f, &[vec![x], vec![y], vec![7.0]])[0][0];
        let mut acc = y;
        let v = if x > 0.0 {
            acc += 1.0;
            x.ln()
        } else {
            0.0
        };
        assert_eq!(got, v + acc, "at x = {x}");
    }
    // Its gradient is finite where the untaken side is NaN or infinite.
    let g = oxla_core::transforms::grad(&f, &[0, 1]).unwrap();
    for x in [-1.0, 0.0] {
        let args = [x, 0.5, 7.0].map(|v| Tensor::scalar(DType::F64, v));
        let d = oxla_core::interp::eval(&g, &args).unwrap();
        assert_eq!((d[0].data[0], d[1].data[0]), (0.0, 1.0), "grad at {x}");
    }
}

/// In an array function: a scalar condition chooses whole arrays (a cond
/// whose branches are array functions); a scalar branch value meeting an
/// array broadcasts in its own branch; an array condition stays a select.
#[test]
fn a_scalar_if_in_an_array_function_chooses_whole_arrays() {
    let f = lower(quote! {
        fn f(s: f64, x: &[f64]) -> Vec<f64> {
            let y = if s > 0.0 { x * s } else { 0.0 };
            let z = if x > 1.0 { x } else { y };
            if s < -1.0 { z.exp() } else { z + y }
        }
    });
    let d = dump(&f);
    assert_eq!(conds(&f).len(), 2, "{d}");
    assert_eq!(d.matches("select").count(), 1, "{d}");
    for s in [2.0, -0.5, -3.0] {
        let x = vec![-1.0, 0.5, 2.0];
        let got = eval(&f, &[vec![s], x.clone()]);
        let want: Vec<f64> = x
            .iter()
            .map(|&xi| {
                let y = if s > 0.0 { xi * s } else { 0.0 };
                let z = if xi > 1.0 { xi } else { y };
                if s < -1.0 {
                    z.exp()
                } else {
                    z + y
                }
            })
            .collect();
        assert_eq!(got[0], want, "at s = {s}\n{d}");
    }
}

/// Conds nest in loops and loops in conds; a crate constant read by one
/// branch only is a constant of the cond (and a hidden param of the
/// function); `else if` chains and `if` without `else` assign.
#[test]
fn conds_nest_with_loops_and_read_crate_constants() {
    let f = lower(quote! {
        fn f(x: f64, n: usize) -> f64 {
            let mut acc = 0.0;
            for i in 0..n {
                if acc > 2.0 {
                    acc -= K;
                } else if acc < -1.0 {
                    acc *= 0.5;
                } else {
                    acc += x * (i as f64);
                }
            }
            if x > 0.0 {
                for _ in 0..n {
                    acc = acc * 0.9 + 1.0;
                }
            }
            acc
        }
    });
    let d = dump(&f);
    assert_eq!(conds(&f).len(), 1, "{d}");
    // The loop body holds the first `if` (a cond whose else branch holds the
    // `else if`'s); the cond at the top level holds a loop.
    assert!(d.matches("cond[").count() >= 3, "{d}");
    let k = 0.75;
    for x in [0.3, 1.5, -0.4] {
        for n in [0usize, 3, 8] {
            let args = [
                Tensor::scalar(DType::F64, x),
                Tensor::scalar(DType::I64, n as f64),
                Tensor::scalar(DType::F64, k),
            ];
            let got = oxla_core::interp::eval(&f, &args).unwrap()[0].data[0];
            let mut acc = 0.0;
            for i in 0..n {
                if acc > 2.0 {
                    acc -= k;
                } else if acc < -1.0 {
                    acc *= 0.5;
                } else {
                    acc += x * (i as f64);
                }
            }
            if x > 0.0 {
                for _ in 0..n {
                    acc = acc * 0.9 + 1.0;
                }
            }
            assert_eq!(got, acc, "x = {x}, n = {n}");
        }
    }
}

#[test]
fn errors_of_a_scalar_if() {
    let m = errors(quote! {
        fn f(s: f64, x: &[f64], y: &[f64]) -> Vec<f64> {
            if s > 0.0 { x } else { y.sum() < 1.0 }
        }
    });
    assert_one(&m, "the branches give f64[n_x] and bool[]");
    let m = errors(quote! {
        fn f(s: f64, x: &[f64]) -> (f64, f64) {
            if s > 0.0 { (s, s) } else { s }
        }
    });
    assert!(!m.is_empty());
    // A closure here is a pure function of its arguments, also in an `if`.
    let m = errors(quote! {
        fn f(x: f64) -> f64 {
            let mut a = 0.0;
            let g = |t: f64| { if t > 0.0 { a = t; } t };
            g(x) + a
        }
    });
    assert_one(&m, "inside a closure");
}

/// A closure called inside a branch reads its captures through the
/// branch's constants; an `if` inside a closure body is a cond too.
#[test]
fn closures_and_scalar_ifs() {
    let f = lower(quote! {
        fn f(x: f64, y: f64) -> f64 {
            let k = y * 2.0;
            let g = |t: f64| t * k + 1.0;
            let h = |t: f64| if t > 0.0 { t.sqrt() } else { -t };
            let v = if x > 1.0 { g(x) } else { h(x) + g(0.5) };
            v + h(y)
        }
    });
    assert!(!dump(&f).contains("select"), "{}", dump(&f));
    for (x, y) in [(2.0, 0.3), (0.5, -0.7), (-3.0, 4.0)] {
        let k = y * 2.0;
        let g = |t: f64| t * k + 1.0;
        let h = |t: f64| if t > 0.0 { t.sqrt() } else { -t };
        let v = if x > 1.0 { g(x) } else { h(x) + g(0.5) };
        let got = eval(&f, &[vec![x], vec![y]])[0][0];
        assert_eq!(got, v + h(y), "at ({x}, {y})");
    }
}
