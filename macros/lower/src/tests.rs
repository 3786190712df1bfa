//! Unit tests: lowering (IR structure, length unification, evaluation with the
//! reference op rules), every error message, the attribute grammar, and the
//! code generation pieces that do not need the transforms. The other test
//! modules, one per part of the crate, are its children.

mod control;
mod custom;
mod errors;
mod factorizations;
mod fuzz;
mod generic;
mod loops;
mod nd;
mod of;
mod paths;
mod pmap;
mod scale;
mod slicing;
mod tree;
mod updates;

use crate::codegen::{aot_items, ir_const_name, CodegenOptions};
use crate::collect::collect_from_file;
use crate::errors::Errors;
use crate::parse::attr::{parse_args, take_oxla_attrs, InAxes, TransformKind};
use crate::stack::{expand_stack, Origin};
use crate::{expand_attribute_with, is_straight_line, lower_fn};
use oxla_core::{DType, Function, Tensor};
use proc_macro2::{Span, TokenStream};
use quote::quote;
use std::collections::BTreeMap;
use std::fmt::Write as _;

fn item(ts: TokenStream) -> syn::ItemFn {
    syn::parse2(ts).expect("test input parses")
}

/// `ts` lowered, panicking on errors (the unit tests' shared helper).
pub(crate) fn lower(ts: TokenStream) -> Function {
    match lower_fn(&item(ts)) {
        Ok(f) => f,
        Err(e) => panic!("unexpected errors: {e}"),
    }
}

/// The errors lowering `ts` gives, panicking when it lowers.
pub(crate) fn lower_errors(ts: TokenStream) -> Vec<String> {
    match lower_fn(&item(ts)) {
        Ok(_) => panic!("expected errors"),
        Err(e) => e.messages(),
    }
}

/// A compact text of `f` for tests (independent of `oxla_core::text`).
pub(crate) fn dump(f: &Function) -> String {
    let mut s = String::new();
    let params: Vec<String> = f
        .params
        .iter()
        .zip(&f.param_names)
        .map(|(v, n)| format!("{n}={v}: {}", f.ty(*v)))
        .collect();
    let _ = writeln!(s, "fn {}({})", f.name, params.join(", "));
    for e in &f.eqns {
        let ins: Vec<String> = e.ins.iter().map(|v| v.to_string()).collect();
        let sep = if ins.is_empty() { "" } else { " " };
        let outs: Vec<String> = e.outs.iter().map(|o| o.to_string()).collect();
        let tys: Vec<String> = e.outs.iter().map(|o| f.ty(*o).to_string()).collect();
        let _ = writeln!(
            s,
            "  {} = {}{sep}{} : {}",
            outs.join(", "),
            e.op,
            ins.join(" "),
            tys.join(", ")
        );
        // The functions a loop or a cond holds, indented.
        for g in oxla_core::text::nested_functions(&e.op) {
            for line in dump(g).lines() {
                let _ = writeln!(s, "    {line}");
            }
        }
    }
    let outs: Vec<String> = f.outs.iter().map(|v| v.to_string()).collect();
    let _ = write!(s, "  -> {}", outs.join(", "));
    s
}

/// Evaluate `f` with core's reference interpreter; `args` are flat values
/// (a leading symbolic dimension is the argument's length).
pub(crate) fn eval(f: &Function, args: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let mut env: BTreeMap<String, u64> = BTreeMap::new();
    for (v, a) in f.params.iter().zip(args) {
        if let Some(oxla_core::Dim::Sym(s)) = f.shape(*v).0.first() {
            env.insert(s.clone(), a.len() as u64);
        }
    }
    let tensors: Vec<Tensor> = f
        .params
        .iter()
        .zip(args)
        .map(|(v, a)| {
            let shape = f.shape(*v).concrete(&env).unwrap();
            Tensor::new(f.dtype(*v), shape, a.clone())
        })
        .collect();
    let outs = oxla_core::interp::eval(f, &tensors).unwrap();
    outs.into_iter().map(|t| t.data).collect()
}

// ---- lowering ----------------------------------------------------------------

#[test]
fn lowers_scalar_function() {
    let f = lower(quote! {
        fn f(x: f32, y: f32) -> f32 {
            let z = x * y;
            z.exp() + 2
        }
    });
    assert_eq!(
        dump(&f),
        "fn f(x=%0: f32[], y=%1: f32[])
  %2 = mul %0 %1 : f32[]
  %3 = exp %2 : f32[]
  %4 = literal[2.0] : f32[]
  %5 = add %3 %4 : f32[]
  -> %5"
    );
    assert!(is_straight_line(&f));
    let out = eval(&f, &[vec![0.5], vec![2.0]]);
    assert!((out[0][0] - (1f64.exp() + 2.0)).abs() < 1e-5);
}

#[test]
fn slice_params_get_length_symbols_and_scalars_broadcast() {
    let f = lower(quote! {
        fn f(a: f32, x: &[f32]) -> Vec<f32> {
            a * x + 1.0
        }
    });
    assert_eq!(
        dump(&f),
        "fn f(a=%0: f32[], x=%1: f32[n_x])
  %2 = broadcast[] %0 : f32[n_x]
  %3 = mul %2 %1 : f32[n_x]
  %4 = literal[1.0] : f32[]
  %5 = broadcast[] %4 : f32[n_x]
  %6 = add %3 %5 : f32[n_x]
  -> %6"
    );
    assert!(!is_straight_line(&f));
    assert_eq!(
        eval(&f, &[vec![2.0], vec![1.0, 2.0, 3.0]]),
        vec![vec![3.0, 5.0, 7.0]]
    );
}

#[test]
fn combining_arrays_unifies_their_lengths_everywhere() {
    let f = lower(quote! {
        fn f(x: &[f64], y: &[f64], z: &[f64]) -> f64 {
            let s = x * 2.0;
            let d = dot(s, y);
            d + sum(z + y)
        }
    });
    // `n_y` became `n_x` at the dot, then `n_z` became `n_x` at `z + y` (the
    // symbol of the earlier parameter is kept):
    // every type in the function, the broadcast of 2.0 included, says `n_x`.
    assert_eq!(
        f.symbols().into_iter().collect::<Vec<_>>(),
        vec!["n_x".to_string()]
    );
    for v in &f.params {
        assert_eq!(f.ty(*v).to_string(), "f64[n_x]");
    }
    assert!(
        dump(&f).contains("broadcast[] %3 : f64[n_x]"),
        "{}",
        dump(&f)
    );
    let out = eval(&f, &[vec![1.0, 2.0], vec![3.0, 4.0], vec![5.0, 6.0]]);
    assert_eq!(out, vec![vec![2.0 * (3.0 + 8.0) + (8.0 + 10.0)]]);
}

#[test]
fn if_else_lowers_to_select_on_an_array_and_to_cond_on_a_scalar() {
    let f = lower(quote! {
        fn relu(x: &[f32]) -> Vec<f32> {
            if x > 0.0 { x } else { x * 0.1 }
        }
    });
    let d = dump(&f);
    assert!(d.contains("gt"), "{d}");
    assert!(d.contains("select"), "{d}");
    let out = eval(&f, &[vec![-1.0, 2.0]]);
    assert!(
        (out[0][0] + 0.1).abs() < 1e-6 && out[0][1] == 2.0,
        "{out:?}"
    );

    let g = lower(quote! {
        fn g(a: f32, b: f32) -> f32 {
            if (a <= b) { let c = a * 2.0; c } else if a == 3.0 { b } else { -a }
        }
    });
    let d = dump(&g);
    assert!(d.contains("cond") && !d.contains("select"), "{d}");
    assert_eq!(eval(&g, &[vec![1.0], vec![5.0]]), vec![vec![2.0]]);
    assert_eq!(eval(&g, &[vec![3.0], vec![1.0]]), vec![vec![1.0]]);
    assert_eq!(eval(&g, &[vec![4.0], vec![1.0]]), vec![vec![-4.0]]);
}

/// Every i32 exponent is accepted, `i32::MIN` included (its magnitude does
/// not fit in i32, so it is negated after parsing).
#[test]
fn powi_takes_every_i32_exponent() {
    let f = lower(quote! {
        fn f(x: f64) -> f64 { x.powi(-2147483648) + x.powi(2147483647) + x.powi(-(3)) }
    });
    let d = dump(&f);
    for op in ["powi[-2147483648]", "powi[2147483647]", "powi[-3]"] {
        assert!(d.contains(op), "{op} missing in\n{d}");
    }
    let m = lower_errors(quote! { fn f(x: f64) -> f64 { x.powi(-2147483649) } });
    assert_one(&m, "`powi` takes an integer literal exponent");
}

#[test]
fn methods_functions_literals_and_return() {
    let f = lower(quote! {
        fn f(x: f32, y: f32) -> f32 {
            let a: f32 = x.powi(3) + x.sin() * x.cos() - x.tanh();
            let b = (x.sqrt().ln()).max(y).min(10);
            return a / b - -2.5;
        }
    });
    let d = dump(&f);
    for op in [
        "powi[3]",
        "sin",
        "cos",
        "tanh",
        "sqrt",
        "log",
        "max",
        "min",
        "div",
        "literal[-2.5]",
    ] {
        assert!(d.contains(op), "{op} missing in\n{d}");
    }
    let (x, y) = (2.0f64, 0.1f64);
    let a = x.powi(3) + x.sin() * x.cos() - x.tanh();
    let b = x.sqrt().ln().max(y).min(10.0);
    let out = eval(&f, &[vec![x], vec![y]]);
    assert!((out[0][0] - (a / b + 2.5)).abs() < 1e-4, "{out:?}");
}

#[test]
fn tuple_results_and_oxla_paths() {
    let f = lower(quote! {
        fn stats(x: &[f32]) -> (f32, Vec<f32>) {
            let m = oxla::sum(x) / 4;
            (m, x - m)
        }
    });
    assert_eq!(f.outs.len(), 2);
    assert_eq!(f.ty(f.outs[0]).to_string(), "f32[]");
    assert_eq!(f.ty(f.outs[1]).to_string(), "f32[n_x]");
    let out = eval(&f, &[vec![1.0, 2.0, 3.0, 6.0]]);
    assert_eq!(out, vec![vec![3.0], vec![-2.0, -1.0, 0.0, 3.0]]);
}

#[test]
fn shadowing_and_block_scopes() {
    let f = lower(quote! {
        fn f(x: f64) -> f64 {
            let y = x + 1;
            let y = { let x = y * 2; x + 1 };
            y + x
        }
    });
    assert_eq!(f.ty(f.params[0]).dtype, DType::F64);
    assert_eq!(
        eval(&f, &[vec![1.0]]),
        vec![vec![(1.0 + 1.0) * 2.0 + 1.0 + 1.0]]
    );
}

// ---- lowering errors -----------------------------------------------------------

fn assert_one(msgs: &[String], needle: &str) {
    assert!(
        msgs.iter().any(|m| m.contains(needle)),
        "no error containing {needle:?} in {msgs:#?}"
    );
}

#[test]
fn error_unsupported_statement() {
    let m = lower_errors(quote! {
        fn f(x: f32) -> f32 {
            let mut y = x;
            loop { y = y * 0.5; }
            y
        }
    });
    assert_one(
        &m,
        "unsupported statement: `loop` is not supported: write `while cond",
    );
    assert_one(
        &m,
        "supported statements are `let` and `let mut` bindings, assignments",
    );
    let m = lower_errors(quote! { fn f(x: f32) -> f32 { let y = x; y = y + 1.0; x = y; y } });
    assert_one(
        &m,
        "cannot assign twice to immutable variable `y`: declare it `let mut y`",
    );
    assert_one(&m, "cannot assign to immutable argument `x`");
    let m = lower_errors(quote! { fn f(x: f32) -> f32 { fn g() {} x } });
    assert_one(&m, "unsupported statement: items cannot be declared");
    let m = lower_errors(quote! { fn f(x: f32) -> f32 { x; } });
    assert_one(&m, "must end with its result");
}

#[test]
fn error_unknown_method_and_function() {
    let m = lower_errors(quote! { fn f(x: f32) -> f32 { x.foo() + x.log(2.0) + bar(x) } });
    assert_one(&m, "unknown method `foo`: supported methods are exp, ln, sin, cos, tanh, sqrt, powi(<integer literal>), powf(e), max(e), min(e), exp_m1, floor, ceil, round, round_ties_even, trunc, signum, abs, square, recip, clamp(lo, hi), ln_1p");
    assert_one(&m, "unknown method `log` (the natural logarithm is `ln`)");
    assert_one(
        &m,
        "unknown function `bar`: supported functions are sum(x), mean(x)",
    );
    let m = lower_errors(quote! { fn f(x: f32, n: f32) -> f32 { x.powi(n) + x.exp(1.0) } });
    assert_one(&m, "`powi` takes an integer literal exponent");
    assert_one(&m, "`exp` takes no arguments");
}

#[test]
fn error_side_effects() {
    let m = lower_errors(quote! {
        fn f(x: f32) -> f32 {
            println!("{}", x);
            let y = unsafe { x };
            let z = &mut 1.0;
            y
        }
    });
    assert_one(
        &m,
        "macros are not supported in oxla functions: they must be pure (`println!` is a macro)",
    );
    assert_one(&m, "`unsafe` is not supported: oxla functions must be pure");
    assert_one(&m, "`&mut` is not supported");
}

#[test]
fn error_parameter_and_return_types() {
    let m = lower_errors(quote! { fn f(a: u8, b: &mut [f32], c: Vec<f32>) -> f32 { 1.0 } });
    assert_one(
        &m,
        "an integer scalar parameter of type `u8` is not supported: integer scalars are i32, i64, usize or u32",
    );
    assert_one(&m, "`&mut` parameters are not supported");
    assert_one(&m, "unsupported parameter type `Vec < f32 >`");
    let m = lower_errors(quote! { fn f(x: f32) -> i32 { x } });
    assert_one(
        &m,
        "the declared result holds i32 but the function computes f32 values here; declare a float",
    );
    let m = lower_errors(quote! { fn f(x: f32) -> u8 { x } });
    assert_one(
        &m,
        "unsupported return type `u8`: supported return types: a float, i32, i64 or bool, `Vec<T>`, `Array1<T>`",
    );
    let m = lower_errors(quote! { fn f(x: f32) { x } });
    assert_one(&m, "must return a value");
    let m = lower_errors(quote! { fn f(x: &[f32]) -> f32 { x * 2.0 } });
    assert_one(
        &m,
        "the declared result is a scalar but the function computes an array",
    );
    let m = lower_errors(quote! { fn f(x: f32) -> (f32, f32) { x } });
    assert_one(
        &m,
        "this returns 1 values but the declared return type has 2",
    );
    let m = lower_errors(quote! { fn f<T>(x: f32, self_: f32) -> f32 { x } });
    assert_one(
        &m,
        "generic functions are supported over one float type only",
    );
}

#[test]
fn error_mixed_float_types() {
    let m = lower_errors(quote! { fn f(x: f32, y: &[f64]) -> f32 { x } });
    assert_one(
        &m,
        "mixed float types: parameter `y` is f64 but parameter `x` is f32",
    );
    let m = lower_errors(quote! { fn f(x: f64) -> f64 { x + 1.0f32 } });
    assert_one(
        &m,
        "literal suffix `f32` does not match the function's float type f64",
    );
}

#[test]
fn error_other_expressions() {
    let m = lower_errors(quote! {
        fn f(x: &[f32], y: f32) -> f32 {
            let a = x[0];
            let b = y as u8;
            let c = if y { 1.0 } else { 2.0 };
            let d = if y < 1.0 { 1.0 };
            let e = x as f32;
            let g = z + 1.0;
            let h = f32::consts::GOLDEN;
            y
        }
    });
    assert_one(&m, "a literal index needs an axis of static size");
    assert_one(
        &m,
        "unsupported cast to `u8`: a cast goes to the function's float type (f32), i32 or i64",
    );
    assert_one(
        &m,
        "an `if` condition is a comparison (`<`, `<=`, `>`, `>=`, `==`, `!=`) or a bool, not f32[]",
    );
    assert_one(&m, "`if` without `else` gives no value");
    assert_one(&m, "`as` casts a number, but this is an array of shape [n_x]: cast its elements with `x.mapv(|v| v as T)`");
    assert_one(&m, "cannot find `z` in this oxla function");
    assert_one(&m, "unsupported path `f32::consts::GOLDEN`");
    // Every error is reported, not just the first.
    assert!(m.len() >= 7, "{m:#?}");
}

#[test]
fn errors_are_spanned_on_the_offending_token() {
    let src = "fn f(x: f32) -> f32 {\n    x.foo()\n}";
    let item: syn::ItemFn = syn::parse_str(src).unwrap();
    let e = lower_fn(&item).unwrap_err();
    let err = e.iter().next().unwrap();
    let start = err.span().start();
    assert_eq!(
        (start.line, start.column),
        (2, 6),
        "the error points at `foo`"
    );
}

// ---- attributes ----------------------------------------------------------------

fn attr_errors(kind: TransformKind, args: TokenStream) -> Vec<String> {
    let mut errors = Errors::new();
    let r = parse_args(kind, args, Span::call_site(), &mut errors);
    assert_eq!(r.is_none(), !errors.is_empty());
    errors.messages()
}

#[test]
fn parses_attribute_arguments() {
    let mut errors = Errors::new();
    let a = parse_args(
        TransformKind::Grad,
        quote!(g, wrt = (x, y)),
        Span::call_site(),
        &mut errors,
    )
    .unwrap();
    assert_eq!(a.name.unwrap().to_string(), "g");
    assert_eq!(
        a.wrt
            .unwrap()
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>(),
        ["x", "y"]
    );
    let a = parse_args(
        TransformKind::Vmap,
        quote!(b, in_axes = (0, None, 0)),
        Span::call_site(),
        &mut errors,
    )
    .unwrap();
    assert_eq!(
        a.in_axes.unwrap().0,
        InAxes::Each(vec![Some(0), None, Some(0)])
    );
    let a = parse_args(
        TransformKind::Vmap,
        quote!(b, in_axes = None),
        Span::call_site(),
        &mut errors,
    )
    .unwrap();
    assert_eq!(a.in_axes.unwrap().0, InAxes::All(None));
    let a = parse_args(TransformKind::Jit, quote!(), Span::call_site(), &mut errors).unwrap();
    assert!(a.name.is_none());
    assert!(errors.is_empty(), "{errors}");

    let mut attrs: Vec<syn::Attribute> = vec![
        syn::parse_quote!(#[oxla::vmap(v)]),
        syn::parse_quote!(#[inline]),
        syn::parse_quote!(#[::oxla::grad(g, wrt = x)]),
        syn::parse_quote!(#[other::grad]),
    ];
    let stack = take_oxla_attrs(&mut attrs, &mut errors);
    assert_eq!(
        stack.iter().map(|a| a.kind).collect::<Vec<_>>(),
        [TransformKind::Vmap, TransformKind::Grad]
    );
    assert_eq!(attrs.len(), 2);
}

#[test]
fn error_bad_attribute_arguments() {
    assert_one(
        &attr_errors(TransformKind::Grad, quote!()),
        "`#[grad]` needs the name of the function to generate",
    );
    assert_one(
        &attr_errors(TransformKind::Grad, quote!(g, with = x)),
        "unknown argument `with`: `#[grad]` accepts: `wrt = x` or `wrt = (x, y)`; `of = f` or `of = grad(…)`",
    );
    assert_one(
        &attr_errors(TransformKind::Jit, quote!(g, wrt = x)),
        "unknown argument `wrt`: `#[jit]` accepts: `of = f` or `of = grad(…)`",
    );
    assert_one(
        &attr_errors(TransformKind::Grad, quote!("g")),
        "bad argument to `#[grad]`: the first argument must be the name",
    );
    assert_one(
        &attr_errors(TransformKind::Grad, quote!(g, wrt = 1)),
        "`wrt` must name parameters",
    );
    assert_one(
        &attr_errors(TransformKind::Grad, quote!(g, wrt)),
        "expected `=` after `wrt`",
    );
    assert_one(
        &attr_errors(TransformKind::Grad, quote!(g h)),
        "expected `,` after the name",
    );
}

#[test]
fn error_unsupported_in_axes() {
    let m = attr_errors(TransformKind::Vmap, quote!(b, in_axes = (0, x, None)));
    assert_one(&m, "unsupported in_axes entry `x`: each entry is an axis (0, 1, …: that axis of the argument is batched) or None (shared by every example)");
    let m = attr_errors(TransformKind::Vmap, quote!(b, in_axes = -1));
    assert_one(&m, "unsupported in_axes entry `- 1`");
}

// ---- the stack -------------------------------------------------------------------

#[test]
fn jit_stack_and_names() {
    let f = item(quote! { pub fn f(x: &[f32]) -> f32 { sum(x) } });
    let mut errors = Errors::new();
    let stack = vec![
        parse_args(
            TransformKind::Jit,
            quote!(f_fast),
            Span::call_site(),
            &mut errors,
        )
        .unwrap(),
        parse_args(TransformKind::Jit, quote!(), Span::call_site(), &mut errors).unwrap(),
    ];
    let gens = expand_stack(&f, &stack).unwrap();
    assert_eq!(
        gens.iter().map(|g| g.name.to_string()).collect::<Vec<_>>(),
        ["f", "f_fast"]
    );
    assert_eq!(gens[0].origin, Origin::Original);
    assert_eq!(
        gens[1].origin,
        Origin::Transform {
            kind: TransformKind::Jit,
            input: "f".into()
        }
    );
    assert_eq!(gens[1].function.name, "f_fast");
    assert_eq!(gens[1].function.eqns, gens[0].function.eqns);
}

#[test]
fn error_wrt_names_a_missing_parameter() {
    let f = item(quote! { fn loss(w: f32, x: f32) -> f32 { w * x } });
    let mut errors = Errors::new();
    let stack = vec![parse_args(
        TransformKind::Grad,
        quote!(g, wrt = (w, z)),
        Span::call_site(),
        &mut errors,
    )
    .unwrap()];
    let e = expand_stack(&f, &stack).unwrap_err();
    assert_one(
        &e.messages(),
        "`wrt` names `z`, which is not a parameter of `loss`; its parameters are: w, x",
    );
}

#[test]
fn error_grad_of_array_result_and_duplicate_names() {
    let f = item(quote! { fn f(x: &[f32]) -> Vec<f32> { x * x } });
    let mut errors = Errors::new();
    let stack = vec![
        parse_args(
            TransformKind::Vmap,
            quote!(f, in_axes = (0, 0)),
            Span::call_site(),
            &mut errors,
        )
        .unwrap(),
        parse_args(
            TransformKind::Grad,
            quote!(g),
            Span::call_site(),
            &mut errors,
        )
        .unwrap(),
    ];
    let e = expand_stack(&f, &stack).unwrap_err();
    let m = e.messages();
    assert_one(
        &m,
        "`f` is already defined by this function or its attributes",
    );
    assert_one(
        &m,
        "`#[grad]` needs a function that returns one scalar, but `f` returns an array (f32[n_x])",
    );
}

#[test]
fn error_in_axes_length() {
    let f = item(quote! { fn f(x: f32, y: f32) -> f32 { x * y } });
    let mut errors = Errors::new();
    let stack = vec![parse_args(
        TransformKind::Vmap,
        quote!(b, in_axes = (0,)),
        Span::call_site(),
        &mut errors,
    )
    .unwrap()];
    let e = expand_stack(&f, &stack).unwrap_err();
    assert_one(
        &e.messages(),
        "`in_axes` has 1 entries but `f` has 2 parameters (x, y)",
    );
}

#[test]
fn collects_annotated_functions_from_a_file() {
    let file: syn::File = syn::parse_quote! {
        #[oxla::jit]
        fn a(x: &[f32]) -> f32 { sum(x) }
        fn plain(x: f32) -> f32 { x }
        mod inner {
            #[jit(b_fast)]
            pub fn b(x: f64) -> f64 { x.exp() }
            #[jit]
            fn broken(x: u8) -> f32 { 1.0 }
        }
    };
    let gens = collect_from_file(&file);
    let names: Vec<String> = gens.iter().map(|g| g.name.to_string()).collect();
    assert_eq!(names, ["a", "b", "b_fast"]);
}

// ---- code generation ---------------------------------------------------------------

#[test]
fn ir_constant_names() {
    assert_eq!(ir_const_name("loss_grad"), "LOSS_GRAD_IR");
    assert_eq!(ir_const_name("perExample2"), "PER_EXAMPLE2_IR");
}

#[test]
fn straight_line_rust_for_scalar_functions() {
    let f = lower(quote! {
        fn f(x: f32, unused: f32) -> f32 {
            let y = if x > 1.0 { x.max(2.0) } else { -x };
            y.powi(2)
        }
    });
    let ts = crate::codegen::scalar_body_for_tests(&f);
    let s = ts.to_string();
    assert!(s.contains("let v0 = x ;"), "{s}");
    assert!(
        !s.contains("= unused"),
        "unused parameters are not bound: {s}"
    );
    assert!(
        s.contains("let v2 : :: core :: primitive :: f32 = 1f32 ;"),
        "{s}"
    );
    assert!(
        s.contains("let v3 : :: core :: primitive :: bool = v0 > v2 ;"),
        "{s}"
    );
    // A scalar `if` is a Rust `if`: only the taken branch runs; each
    // branch is a block of its own on the values it reads.
    assert!(s.contains("let (v4 ,) = if v3 {"), "{s}");
    // `max` propagates NaN from either operand, like the IR.
    assert!(
        s.contains("if v0 > v2 || v0 . is_nan () { v0 } else { v2 }"),
        "{s}"
    );
    assert!(
        s.contains("let v2 : :: core :: primitive :: f32 = - v0 ;"),
        "{s}"
    );
    assert!(s.contains(". powi (2)"), "{s}");
    // It is valid Rust.
    let body: syn::Block = syn::parse2(quote!({ #ts })).expect("generated body parses");
    assert!(!body.stmts.is_empty());
}

#[test]
fn aot_declarations() {
    let (items, r) = aot_items(&["oxla_k_0123".to_string()]);
    let s = items.to_string();
    assert!(s.contains("unsafe extern \"C\""), "{s}");
    assert!(
        s.contains("fn oxla_k_0123_v3 (args : * const * mut :: core :: primitive :: u8 , sizes : * const :: core :: primitive :: i64) ;"),
        "{s}"
    );
    assert!(s.contains("fn oxla_k_0123_base"), "{s}");
    assert!(s.contains("fn oxla_k_0123_v4"), "{s}");
    assert!(
        s.contains("static __OXLA_AOT : [:: oxla :: __private :: AotKernel ; 1]"),
        "{s}"
    );
    assert!(
        s.contains("name : \"oxla_k_0123\" , v4 : oxla_k_0123_v4 , v3 : oxla_k_0123_v3 , base : oxla_k_0123_base"),
        "{s}"
    );
    assert_eq!(r.to_string(), "& __OXLA_AOT");
}

#[test]
fn on_errors_the_original_signature_is_emitted_with_the_errors() {
    let out = expand_attribute_with(
        TransformKind::Grad,
        quote!(g, wrt = nope),
        quote! {
            #[oxla::vmap(v, in_axes = (-1,))]
            #[inline]
            fn f(x: f32) -> f32 { x.foo() }
        },
        &CodegenOptions::default(),
    );
    let s = out.to_string();
    // The signature stays (callers and the IDE see `f`), the body does not:
    // rustc would report its own errors on code oxla already reported.
    assert!(
        s.contains("# [inline] # [allow (unused_variables , unreachable_code)] # [allow (clippy :: unnecessary_cast , clippy :: approx_constant , clippy :: excessive_precision , clippy :: too_many_arguments , clippy :: type_complexity)] fn f (x : f32) -> f32 { # [oxla :: vmap (__oxla_stacked)] const _ : () = () ; :: core :: panic ! (\"oxla: this function did not compile; see the errors above\") }"),
        "{s}"
    );
    assert!(!s.contains("x . foo ()"), "{s}");
    assert!(
        !s.contains("in_axes = ("),
        "inner oxla attributes are removed: {s}"
    );
    // ... and re-emitted as markers (in the body: `const _` is not allowed
    // in an `impl` block), which expand to nothing, so that their imports
    // count as used.
    assert!(
        s.contains("# [oxla :: vmap (__oxla_stacked)] const _ : () = () ;"),
        "{s}"
    );
    let marker = expand_attribute_with(
        TransformKind::Vmap,
        quote!(__oxla_stacked),
        quote!(
            const _: () = ();
        ),
        &CodegenOptions::default(),
    );
    assert!(marker.is_empty());
    assert_eq!(s.matches("compile_error").count(), 3, "{s}");
    // Not a function at all.
    let out = expand_attribute_with(
        TransformKind::Jit,
        quote!(),
        quote!(
            struct S;
        ),
        &CodegenOptions::default(),
    );
    assert!(out.to_string().contains("applies to a function"), "{out}");
}

// ---- whole expansions (with the real transforms) ---------------------------------------

fn expand(
    kind: TransformKind,
    args: TokenStream,
    item: TokenStream,
    opts: &CodegenOptions,
) -> String {
    let out = expand_attribute_with(kind, args, item, opts);
    assert!(!out.to_string().contains("compile_error"), "{out}");
    // The expansion is valid Rust items.
    let file: syn::File = syn::parse2(out.clone()).expect("expansion parses as items");
    assert!(!file.items.is_empty());
    out.to_string()
}

#[test]
fn scalar_grad_expands_to_straight_line_rust() {
    let s = expand(
        TransformKind::Grad,
        quote!(df, wrt = x),
        quote! { pub fn f(x: f64, y: f64) -> f64 { x * x * y + y.sin() } },
        &CodegenOptions::default(),
    );
    assert!(s.contains("pub const F_IR : & str ="), "{s}");
    assert!(s.contains("pub const DF_IR : & str ="), "{s}");
    assert!(s.contains("pub fn f (x : f64 , y : f64) -> f64 {"), "{s}");
    assert!(s.contains("pub fn df (x : :: core :: primitive :: f64 , y : :: core :: primitive :: f64) -> :: core :: primitive :: f64"), "{s}");
    assert!(!s.contains("CompiledFn"), "no runtime compilation: {s}");
    assert!(s.contains(". sin ()"), "{s}");
}

/// A view parameter (any rank) keeps the general call's `Arg`s; the lean
/// call takes scalars and slices only.
#[test]
fn view_parameters_take_the_general_call() {
    let src = quote! {
        fn loss(w: ArrayView1<f32>, x: ArrayView2<f32>, b: f32) -> f32 {
            sum(x.dot(&w) + b)
        }
    };
    let s = expand(
        TransformKind::Jit,
        quote!(),
        src,
        &CodegenOptions::default(),
    );
    assert!(
        s.contains("__OXLA_COMPILED . call (& [:: oxla :: __private :: Arg :: view ("),
        "{s}"
    );
    assert!(!s.contains("call_flat"), "{s}");
}

#[test]
fn array_function_expands_to_a_compiled_fn_call() {
    let src = quote! {
        fn fused(x: &[f32], y: &[f32], s: f32) -> (f32, Vec<f32>) {
            let z = x * s + y;
            (sum(z), z)
        }
    };
    let s = expand(
        TransformKind::Jit,
        quote!(),
        src.clone(),
        &CodegenOptions::default(),
    );
    assert!(
        s.contains(
            "const FUSED_IR : & str = \"fn fused(x %0: f32[n_x], y %1: f32[n_x], s %2: f32[])"
        ),
        "{s}"
    );
    // The compiled program is a `static` in the body, holding the IR text.
    assert!(s.contains("static __OXLA_COMPILED : :: oxla :: __private :: CompiledFn = { :: oxla :: __private :: CompiledFn :: new (\"fn fused(x %0"), "{s}");
    // Slices and scalars: the lean call's arguments.
    assert!(s.contains("__OXLA_COMPILED . call_flat (& [:: oxla :: __private :: Flat :: slice (x) , :: oxla :: __private :: Flat :: slice (y) , :: oxla :: __private :: Flat :: scalar (& s)] , | __oxla_outs |"), "{s}");
    assert!(s.contains("(__oxla_outs . scalar :: < :: core :: primitive :: f32 > (0) , __oxla_outs . vec :: < :: core :: primitive :: f32 > (1) ,)"), "{s}");
    // The sibling writing the array result into the caller's slice (its own
    // `static`, the runtime shares the program) returns the scalar result.
    assert!(s.contains("fn fused_into < 'oxla > (x : & [f32] , y : & [f32] , s : f32 , out1 : & 'oxla mut [:: core :: primitive :: f32]) -> :: core :: primitive :: f32"), "{s}");
    assert!(s.contains("__OXLA_COMPILED . call_into ("), "{s}");
    assert!(
        s.contains("& [:: core :: option :: Option :: None , __oxla_dest1 . raw ()]"),
        "{s}"
    );

    // With a manifest that lists every kernel, the kernels are bound AOT.
    let f = lower_fn(&item(src.clone())).unwrap();
    let f = oxla_core::transforms::simplify(&f);
    let syms = crate::aot_symbols(&f);
    assert!(!syms.is_empty());
    let all = CodegenOptions {
        aot_manifest: Some(syms.iter().cloned().collect()),
        aot_required: true,
        ..CodegenOptions::default()
    };
    let s = expand(TransformKind::Jit, quote!(), src.clone(), &all);
    assert!(s.contains("unsafe extern \"C\""), "{s}");
    assert!(s.contains(&format!("{}_v3", syms[0])), "{s}");
    assert!(s.contains("\\n}\\n\" , & __OXLA_AOT)"), "{s}");
    assert!(!s.contains("deprecated"), "{s}");
    // A manifest missing one of them: JIT, and a warning naming the function.
    let some = CodegenOptions {
        aot_manifest: Some(syms[1..].iter().cloned().collect()),
        aot_required: false,
        ..CodegenOptions::default()
    };
    let s = expand(TransformKind::Jit, quote!(), src.clone(), &some);
    assert!(!s.contains("extern"), "{s}");
    assert!(
        s.contains("deprecated")
            && s.contains("did not compile the kernels of `fused`, so it runs on the JIT"),
        "{s}"
    );
    // The same, when the build script requires its kernels: an error.
    let required = CodegenOptions {
        aot_required: true,
        ..some
    };
    let s = expand_attribute_with(TransformKind::Jit, quote!(), src.clone(), &required).to_string();
    assert!(
        s.contains("compile_error")
            && s.contains("did not compile the kernels of `fused`, so it runs on the JIT"),
        "{s}"
    );
    // Without a build script: the JIT, silently.
    let s = expand(
        TransformKind::Jit,
        quote!(),
        src,
        &CodegenOptions::default(),
    );
    assert!(!s.contains("extern") && !s.contains("deprecated"), "{s}");
}

#[test]
fn stacks_compose_bottom_up() {
    let f = item(quote! {
        fn loss(w: &[f64], x: &[f64], y: f64) -> f64 { (dot(w, x) - y).powi(2) }
    });
    let mut errors = Errors::new();
    let mut stack = vec![
        parse_args(
            TransformKind::Vmap,
            quote!(per_example, in_axes = (None, 0, 0)),
            Span::call_site(),
            &mut errors,
        )
        .unwrap(),
        parse_args(
            TransformKind::Grad,
            quote!(loss_grad, wrt = w),
            Span::call_site(),
            &mut errors,
        )
        .unwrap(),
    ];
    let gens = expand_stack(&f, &stack).unwrap();
    assert_eq!(
        gens[2].origin,
        Origin::Transform {
            kind: TransformKind::Vmap,
            input: "loss_grad".into()
        }
    );
    assert_eq!(gens[1].function.outs.len(), 1);
    // per_example(w, xs, ys) -> one gradient per example: [b, n] flat.
    assert_eq!(gens[2].function.shape(gens[2].function.outs[0]).rank(), 2);

    // Every attribute transforms the one below it: a batch of JVPs.
    let g = item(quote! { fn g(x: f64, y: f64) -> f64 { x.sin() * y } });
    stack = vec![
        parse_args(
            TransformKind::Vmap,
            quote!(g_jvps, in_axes = (None, None, 0, 0)),
            Span::call_site(),
            &mut errors,
        )
        .unwrap(),
        parse_args(
            TransformKind::Jvp,
            quote!(g_jvp),
            Span::call_site(),
            &mut errors,
        )
        .unwrap(),
    ];
    let gens = expand_stack(&g, &stack).unwrap();
    let inputs: Vec<String> = gens[1..]
        .iter()
        .map(|gen| match &gen.origin {
            Origin::Transform { input, .. } => input.clone(),
            Origin::Original => String::new(),
        })
        .collect();
    assert_eq!(inputs, ["g", "g_jvp"]);
    assert_eq!(gens[1].function.param_names, ["x", "y", "t_x", "t_y"]);
    let batched = &gens[2].function;
    assert_eq!(batched.param_names, ["x", "y", "t_x", "t_y"]);
    assert!(batched.outs.iter().all(|o| batched.shape(*o).rank() == 1));
    assert!(errors.is_empty());
}

#[test]
fn signature_checks_still_run_when_the_body_has_errors() {
    let f = item(quote! { fn f(x: f32) -> f32 { x.cbrt() } });
    let mut errors = Errors::new();
    let stack = vec![
        parse_args(
            TransformKind::Vmap,
            quote!(b, in_axes = (0, 0)),
            Span::call_site(),
            &mut errors,
        )
        .unwrap(),
        parse_args(
            TransformKind::Grad,
            quote!(g, wrt = q),
            Span::call_site(),
            &mut errors,
        )
        .unwrap(),
    ];
    let m = expand_stack(&f, &stack).unwrap_err().messages();
    assert_one(&m, "unknown method `cbrt`");
    assert_one(&m, "`wrt` names `q`, which is not a parameter of `f`");
    // The vmap's input is `g`, not `f`: not checked against `f`.
    assert_eq!(m.len(), 2, "{m:#?}");
}

// ---- casts, integer and bool scalars ------------------------------------------------

fn convert_targets(f: &Function) -> Vec<(DType, DType)> {
    f.eqns
        .iter()
        .filter_map(|e| match e.op {
            oxla_core::Op::Convert { dtype } => Some((f.dtype(e.ins[0]), dtype)),
            _ => None,
        })
        .collect()
}

#[test]
fn casts_lower_to_convert() {
    let f = lower(quote! {
        fn f(x: f32, n: usize, k: i32, flag: bool) -> (i32, f32, f32, bool) {
            let q = (x * 10.0) as i32;
            let same = x as f32;
            (q, n as f32 + k as f32 + same, flag as i32 as f32, x < 1.0)
        }
    });
    let types: Vec<DType> = f.params.iter().map(|p| f.dtype(*p)).collect();
    assert_eq!(types, [DType::F32, DType::I64, DType::I32, DType::Bool]);
    // `x as f32` is the identity; `flag as i32 as f32` converts the bool
    // directly, so no integer is computed from it.
    assert_eq!(
        convert_targets(&f),
        [
            (DType::F32, DType::I32),
            (DType::I64, DType::F32),
            (DType::I32, DType::F32),
            (DType::Bool, DType::I32),
            (DType::Bool, DType::F32),
        ]
    );
    let outs: Vec<DType> = f.outs.iter().map(|v| f.dtype(*v)).collect();
    assert_eq!(outs, [DType::I32, DType::F32, DType::F32, DType::Bool]);
    assert!(is_straight_line(&f));
    // The reference rules give Rust's `as`.
    let got = eval(&f, &[vec![f64::NAN], vec![3.0], vec![-2.0], vec![1.0]]);
    assert_eq!((got[0][0], got[2][0], got[3][0]), (0.0, 1.0, 0.0));
    assert!(got[1][0].is_nan());
    let got = eval(&f, &[vec![-2.55], vec![3.0], vec![-2.0], vec![0.0]]);
    assert_eq!(
        got,
        [vec![-25.0], vec![-1.55f32 as f64], vec![0.0], vec![1.0]]
    );
    let got = eval(&f, &[vec![1e30], vec![3.0], vec![-2.0], vec![0.0]]);
    assert_eq!(got[0], [i32::MAX as f64]);
}

#[test]
fn a_cast_result_feeding_arithmetic_is_a_stored_buffer() {
    let f = lower(quote! {
        fn f(x: &[f32]) -> f32 {
            let q = x.mapv(|v| v as i32);
            q.mapv(|v| v as f32).sum()
        }
    });
    let p = oxla_core::kernel::fusion::fuse(&f).expect("fuses");
    // One kernel stores the i32 (converting), the next loads it widened.
    let ints: Vec<usize> = p
        .buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| b.dtype == DType::I32 && b.param.is_none())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(ints.len(), 1, "{}", p.text());
    assert_eq!(p.launches.len(), 2, "{}", p.text());
}

#[test]
fn cast_errors() {
    let m = lower_errors(quote! {
        fn f(x: f32, v: &[f32]) -> f32 {
            let a = x as f64;
            let c = x as bool;
            let d = v.mapv(|e| e.exp());
            let e = x.mapv(|e| e as i32);
            let g = x as usize;
            x
        }
    });
    assert_one(&m, "a cast to f64 in a function whose float type is f32");
    assert_one(&m, "Rust has no cast to bool");
    assert_one(&m, "`mapv` takes only a cast, `x.mapv(|v| v as T)`");
    assert_one(&m, "`mapv` applies to arrays: cast a number with `x as T`");
    assert_one(&m, "unsupported cast to `usize`");
    let m = lower_errors(quote! {
        fn f(flag: bool) -> f32 { flag as f32 }
    });
    assert_one(
        &m,
        "Rust casts a bool only to an integer: write `b as i32 as f32`",
    );
    let m = lower_errors(quote! {
        fn f(x: f32) -> usize { x as i64 }
    });
    assert_one(
        &m,
        "a `usize` result is not supported: integer results are i32 or i64",
    );
}

#[test]
fn wrt_an_integer_scalar_is_an_error() {
    let f = item(quote! { fn f(x: f32, n: usize) -> f32 { x * (n as f32) } });
    let mut errors = Errors::new();
    let stack = vec![parse_args(
        TransformKind::Grad,
        quote!(df, wrt = n),
        Span::call_site(),
        &mut errors,
    )
    .unwrap()];
    let e = expand_stack(&f, &stack).unwrap_err();
    assert_one(&e.messages(), "`wrt` names `n`, an integer parameter");
}

#[test]
fn transforms_of_functions_with_integer_and_bool_results() {
    // jvp and vjp of a function with a bool and an integer result: those
    // results carry no tangent (a symbolic zero) and take no cotangent
    // that reaches a float.
    for kind in [TransformKind::Jvp, TransformKind::Vjp] {
        let out = expand_attribute_with(
            kind,
            quote!(t),
            quote! {
                fn f(x: &[f32], n: usize) -> (Vec<f32>, Vec<bool>, Vec<i32>) {
                    let y = x * (n as f32);
                    (y, x > 0.0, y.mapv(|v| v as i32))
                }
            },
            &CodegenOptions::default(),
        )
        .to_string();
        assert!(out.contains("fn t"), "{kind:?}: {out}");
        assert!(!out.contains("internal error"), "{kind:?}: {out}");
        assert!(!out.contains("compile_error"), "{kind:?}: {out}");
    }
}

#[test]
fn error_bool_operators_on_numbers() {
    let m = lower_errors(
        quote! { fn f(x: f32, y: f32) -> f32 { let b = x && (y > 0.0); let c = !y; x } },
    );
    assert_one(
        &m,
        "`!`, `&&` and `||` take bools (comparisons, `true`, `false`), got f32",
    );
    assert_eq!(m.len(), 2, "{m:?}");
}
