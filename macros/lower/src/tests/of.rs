//! Unit tests of what a transform applies to: the entries of
//! `#[transforms(…)]` (independent transforms of one function), `of = …` in
//! a stack and nested in an entry, and `wrt` on `jvp`/`vjp`. Values are
//! checked against central finite differences of the original function
//! (evaluated with the reference op rules) and against each other.

use crate::errors::Errors;
use crate::parse::attr::take_oxla_attrs;
use crate::stack::{expand_stack, GeneratedFn, Origin};
use crate::tests::eval;
use proc_macro2::TokenStream;
use quote::quote;

/// The functions the attributes on `ts` generate, by name.
fn expand(ts: TokenStream) -> Vec<GeneratedFn> {
    let mut item: syn::ItemFn = syn::parse2(ts).expect("test input parses");
    let mut errors = Errors::new();
    let stack = take_oxla_attrs(&mut item.attrs, &mut errors);
    assert!(errors.is_empty(), "{errors}");
    match expand_stack(&item, &stack) {
        Ok(g) => g,
        Err(e) => panic!("unexpected errors: {e}"),
    }
}

fn expand_errors(ts: TokenStream) -> Vec<String> {
    let mut item: syn::ItemFn = syn::parse2(ts).expect("test input parses");
    let mut errors = Errors::new();
    let stack = take_oxla_attrs(&mut item.attrs, &mut errors);
    if errors.is_empty() {
        match expand_stack(&item, &stack) {
            Ok(_) => panic!("expected errors"),
            Err(e) => errors.extend(e),
        }
    }
    errors.messages()
}

fn assert_one(msgs: &[String], needle: &str) {
    assert!(
        msgs.iter().any(|m| m.contains(needle)),
        "no error containing {needle:?} in {msgs:#?}"
    );
}

fn get<'a>(gens: &'a [GeneratedFn], name: &str) -> &'a GeneratedFn {
    gens.iter()
        .find(|g| g.name == name)
        .unwrap_or_else(|| panic!("no function `{name}`"))
}

/// Scalar arguments in, each result's scalars out.
fn call(g: &GeneratedFn, args: &[f64]) -> Vec<f64> {
    let args: Vec<Vec<f64>> = args.iter().map(|a| vec![*a]).collect();
    eval(&g.function, &args).into_iter().flatten().collect()
}

/// ∂f/∂args[i] by central differences (f's first result).
fn fd(f: &GeneratedFn, args: &[f64], i: usize) -> f64 {
    let h = 1e-5;
    let (mut hi, mut lo) = (args.to_vec(), args.to_vec());
    hi[i] += h;
    lo[i] -= h;
    (call(f, &hi)[0] - call(f, &lo)[0]) / (2.0 * h)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * (1.0 + a.abs().max(b.abs()))
}

fn origin_input(g: &GeneratedFn) -> String {
    match &g.origin {
        Origin::Transform { input, .. } => input.clone(),
        Origin::Original => panic!("`{}` is the original", g.name),
    }
}

#[test]
fn listed_transforms_are_independent() {
    let gens = expand(quote! {
        #[oxla::transforms(grad(g, wrt = w), value_and_grad(vg), hessian(h, wrt = w))]
        fn loss(w: f64, x: f64) -> f64 { w * w * x + (w * x).sin() }
    });
    let names: Vec<String> = gens.iter().map(|g| g.name.to_string()).collect();
    assert_eq!(names, ["loss", "g", "vg", "h"]);
    for n in ["g", "vg", "h"] {
        assert_eq!(origin_input(get(&gens, n)), "loss");
    }
    let loss = get(&gens, "loss");
    for args in [[0.3, 1.7], [-1.2, 0.4], [2.0, -0.9]] {
        let g = call(get(&gens, "g"), &args);
        let vg = call(get(&gens, "vg"), &args);
        assert_eq!(g.len(), 1);
        assert_eq!(vg.len(), 3, "value, then one gradient per parameter");
        assert!(close(g[0], fd(loss, &args, 0)), "{g:?}");
        assert!(close(vg[0], call(loss, &args)[0]));
        // The same derivative from both definitions, bit for bit is not
        // promised (different graphs), so: close.
        assert!(close(vg[1], g[0]), "{vg:?} vs {g:?}");
        assert!(close(vg[2], fd(loss, &args, 1)));
        let h = call(get(&gens, "h"), &args);
        assert!(close(h[0], fd(get(&gens, "g"), &args, 0)), "{h:?}");
    }
}

#[test]
fn stacking_still_composes() {
    let gens = expand(quote! {
        #[value_and_grad(vg)]
        #[grad(g)]
        fn f(x: f64) -> f64 { x * x * x }
    });
    assert_eq!(origin_input(get(&gens, "vg")), "g");
    // vg = value_and_grad(grad(f)) = (3x², 6x).
    assert_eq!(call(get(&gens, "vg"), &[2.0]), [12.0, 12.0]);
    assert_eq!(call(get(&gens, "g"), &[2.0]), [12.0]);
}

#[test]
fn of_names_the_input_in_a_stack() {
    let gens = expand(quote! {
        #[grad(d2, of = g)]
        #[value_and_grad(vg, of = f)]
        #[grad(g)]
        fn f(x: f64) -> f64 { x * x * x }
    });
    assert_eq!(origin_input(get(&gens, "g")), "f");
    assert_eq!(origin_input(get(&gens, "vg")), "f");
    assert_eq!(origin_input(get(&gens, "d2")), "g");
    // Without `of`, an attribute transforms the nearest one below, whatever
    // that one's own `of`: here `vg`, which returns two values.
    assert_one(
        &expand_errors(quote! {
            #[grad(d2)]
            #[value_and_grad(vg, of = f)]
            #[grad(g)]
            fn f(x: f64) -> f64 { x * x * x }
        }),
        "`#[grad]` needs a function that returns one scalar, but `vg` returns 2 values",
    );
    assert_eq!(call(get(&gens, "vg"), &[2.0]), [8.0, 12.0]);
    assert_eq!(call(get(&gens, "d2"), &[2.0]), [12.0]);
}

#[test]
fn an_entry_composes_with_a_nested_transform() {
    let gens = expand(quote! {
        #[oxla::transforms(
            vmap(per_example, in_axes = (None, 0), of = grad(wrt = w)),
            vmap(per_example_named, in_axes = (None, 0), of = grad(g, wrt = w)),
            jit(g_again, of = g),
        )]
        fn loss(w: f64, x: f64) -> f64 { (w * x).sin() }
    });
    let names: Vec<String> = gens.iter().map(|g| g.name.to_string()).collect();
    assert_eq!(
        names,
        ["loss", "per_example", "g", "per_example_named", "g_again"]
    );
    assert_eq!(origin_input(get(&gens, "per_example")), "grad(loss)");
    assert_eq!(origin_input(get(&gens, "per_example_named")), "g");
    // One example per element of `x`: d/dw sin(w x_i).
    let (w, xs) = (0.7, [0.5, -1.0, 2.0]);
    for name in ["per_example", "per_example_named"] {
        let got = eval(&get(&gens, name).function, &[vec![w], xs.to_vec()]);
        let want: Vec<f64> = xs.iter().map(|x| x * (w * x).cos()).collect();
        assert_eq!(got.len(), 1);
        for (a, b) in got[0].iter().zip(&want) {
            assert!(close(*a, *b), "{name}: {got:?} vs {want:?}");
        }
    }
}

#[test]
fn jvp_and_vjp_with_wrt() {
    let gens = expand(quote! {
        #[oxla::transforms(
            jvp(j_x, wrt = x),
            jvp(j_xy, wrt = (x, y)),
            vjp(v_y, wrt = y),
            vjp(v_yx, wrt = (y, x)),
        )]
        fn f(x: f64, y: f64, n: i64) -> f64 { x * y.sin() + x * x * (n as f64) }
    });
    let f = get(&gens, "f");
    let p = |n: &str| get(&gens, n).function.param_names.clone();
    assert_eq!(p("j_x"), ["x", "y", "n", "t_x"]);
    assert_eq!(p("j_xy"), ["x", "y", "n", "t_x", "t_y"]);
    assert_eq!(p("v_y"), ["x", "y", "n", "ct"]);
    let (x, y, n) = (0.8, -0.3, 3.0);
    let (dx, dy) = (fd(f, &[x, y, n], 0), fd(f, &[x, y, n], 1));
    // jvp: (value, tangent); the others are held constant.
    let j = call(get(&gens, "j_x"), &[x, y, n, 0.5]);
    assert!(close(j[0], call(f, &[x, y, n])[0]));
    assert!(close(j[1], 0.5 * dx), "{j:?}");
    let (tx, ty) = (0.5, -1.5);
    let jxy = call(get(&gens, "j_xy"), &[x, y, n, tx, ty]);
    assert!(close(jxy[1], tx * dx + ty * dy));
    // vjp: (value, cotangents of the listed parameters, in wrt's order).
    let u = 2.0;
    let v = call(get(&gens, "v_y"), &[x, y, n, u]);
    assert_eq!(v.len(), 2);
    assert!(close(v[1], u * dy));
    let vyx = call(get(&gens, "v_yx"), &[x, y, n, u]);
    assert_eq!(vyx.len(), 3);
    // ⟨u, J t⟩ = ⟨Jᵀ u, t⟩.
    assert!(close(u * jxy[1], vyx[2] * tx + vyx[1] * ty));
}

#[test]
fn errors_of_the_list_and_of() {
    assert_one(
        &expand_errors(quote! {
            #[oxla::transforms(grad(g), gard(h))]
            fn f(x: f64) -> f64 { x * x }
        }),
        "unknown transform `gard`: the transforms are jit, grad, value_and_grad, jvp, vjp, vmap, pmap, jacfwd, jacrev, hessian",
    );
    assert_one(
        &expand_errors(quote! {
            #[oxla::transforms(grad(g), value_and_grad(g))]
            fn f(x: f64) -> f64 { x * x }
        }),
        "`g` is already defined by this function or its attributes",
    );
    assert_one(
        &expand_errors(quote! {
            #[oxla::transforms(grad)]
            fn f(x: f64) -> f64 { x * x }
        }),
        "bad entry: write `#[transforms(grad(g, wrt = w), value_and_grad(vg), …)]`",
    );
    assert_one(
        &expand_errors(quote! {
            #[oxla::transforms(grad(wrt = x))]
            fn f(x: f64) -> f64 { x * x }
        }),
        "`#[grad]` needs the name of the function to generate",
    );
    assert_one(
        &expand_errors(quote! {
            #[oxla::transforms(jit())]
            fn f(x: f64) -> f64 { x * x }
        }),
        "`jit` in `#[transforms(…)]` needs the name of the function to generate",
    );
    assert_one(
        &expand_errors(quote! {
            #[grad(h)]
            #[grad(g, of = h)]
            fn f(x: f64) -> f64 { x * x }
        }),
        "`of = h` names no function generated before this one; it can name: f (attributes apply bottom-up",
    );
    assert_one(
        &expand_errors(quote! {
            #[vmap(v)]
            #[oxla::transforms(grad(g), value_and_grad(vg))]
            fn f(x: f64) -> f64 { x * x }
        }),
        "`#[vmap]` is stacked on `#[transforms(…)]`, which generates several functions: say which one it transforms with `of = name`",
    );
    assert_one(
        &expand_errors(quote! {
            #[grad(g, of = 1)]
            fn f(x: f64) -> f64 { x * x }
        }),
        "`of` names the function to transform",
    );
}

#[test]
fn errors_of_wrt_on_jvp_and_vjp() {
    assert_one(
        &expand_errors(quote! {
            #[jvp(j, wrt = z)]
            fn f(x: f64, y: f64) -> f64 { x * y }
        }),
        "`wrt` names `z`, which is not a parameter of `f`; its parameters are: x, y",
    );
    assert_one(
        &expand_errors(quote! {
            #[vjp(v, wrt = (x, n))]
            fn f(x: f64, n: i64) -> f64 { x * (n as f64) }
        }),
        "`wrt` names `n`, an integer parameter: integers have no derivative",
    );
    assert_one(
        &expand_errors(quote! {
            #[oxla::transforms(jacfwd(j, wrt = n))]
            fn f(x: f64, n: i64) -> f64 { x * (n as f64) }
        }),
        "`wrt` names `n`, an integer parameter",
    );
}

/// Applying an entry bottom-up is the same as writing it as its own
/// attribute on a copy of the function: the IR is identical.
#[test]
fn an_entry_equals_the_separately_written_transform() {
    let listed = expand(quote! {
        #[oxla::transforms(value_and_grad(vg, wrt = w), grad(g, wrt = w))]
        fn loss(w: f64, x: &[f64]) -> f64 { sum((w * x).tanh()) }
    });
    let alone_vg = expand(quote! {
        #[value_and_grad(vg, wrt = w)]
        fn loss(w: f64, x: &[f64]) -> f64 { sum((w * x).tanh()) }
    });
    let alone_g = expand(quote! {
        #[grad(g, wrt = w)]
        fn loss(w: f64, x: &[f64]) -> f64 { sum((w * x).tanh()) }
    });
    let text = |g: &GeneratedFn| oxla_core::text::print(&g.function);
    assert_eq!(text(get(&listed, "vg")), text(get(&alone_vg, "vg")));
    assert_eq!(text(get(&listed, "g")), text(get(&alone_g, "g")));
}

/// The build script compiles what the macro generates: the entries of
/// `#[transforms(…)]` and nested named transforms included.
#[test]
fn the_build_script_collects_every_listed_function() {
    let file: syn::File = syn::parse_quote! {
        #[oxla::transforms(grad(g), vmap(v, of = grad(g2)))]
        fn f(x: &[f32]) -> f32 { sum(x * x) }
    };
    let names: Vec<String> = crate::collect::collect_from_file(&file)
        .iter()
        .map(|g| g.name.to_string())
        .collect();
    assert_eq!(names, ["f", "g", "g2", "v"]);
}
