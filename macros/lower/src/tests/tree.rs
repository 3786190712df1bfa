//! Unit tests of parameter structs: the derive's steps, the flattening of a
//! function taking and returning structs, the resolution through the
//! struct's macro, the build script's view, and the errors.

use crate::errors::Errors;
use crate::parse::attr::take_oxla_attrs;
use crate::resolve::helpers::{with_helpers, HelperTable};
use crate::stack::{expand_stack, GeneratedFn};
use crate::tree::{expand_derive, flatten_fn, Flattened};
use proc_macro2::TokenStream;
use quote::quote;

fn structs() -> Vec<syn::ItemStruct> {
    vec![
        syn::parse_quote!(
            struct Dense {
                w: Array2<f32>,
                b: Array1<f32>,
            }
        ),
        syn::parse_quote!(
            struct Net {
                first: Dense,
                second: Dense,
                t: f32,
            }
        ),
        syn::parse_quote!(
            struct Deep {
                layers: [Dense; 2],
                gains: [f32; 3],
            }
        ),
    ]
}

/// The structs found by name (the build script's view; the macro's, by
/// path through each struct's macro, is tested below).
fn table() -> HelperTable {
    HelperTable::by_name(Vec::new()).with_trees(structs())
}

/// `ts` flattened against `table()`, then expanded.
fn flat_expand(ts: TokenStream) -> Result<Vec<GeneratedFn>, Vec<String>> {
    let mut item: syn::ItemFn = syn::parse2(ts).expect("test input parses");
    let mut errors = Errors::new();
    let stack = take_oxla_attrs(&mut item.attrs, &mut errors);
    assert!(errors.is_empty(), "{errors}");
    let (r, unknown) = with_helpers(&table(), || match flatten_fn(&item, &stack) {
        Flattened::Flat(flat, e) if e.is_empty() => {
            expand_stack(&flat.item, &flat.stack).map_err(|e| e.messages())
        }
        Flattened::Flat(_, e) | Flattened::Err(e) => Err(e.messages()),
        Flattened::None => panic!("no struct parameter"),
        Flattened::Unknown => Err(vec!["a struct is unknown".to_string()]),
    });
    if !unknown.is_empty() {
        panic!("unknown: {unknown:?}");
    }
    r
}

fn errors_of(ts: TokenStream) -> Vec<String> {
    match flat_expand(ts) {
        Ok(_) => panic!("expected errors"),
        Err(e) => e,
    }
}

fn assert_one(msgs: &[String], needle: &str) {
    assert!(
        msgs.iter().any(|m| m.contains(needle)),
        "no error containing {needle:?} in {msgs:#?}"
    );
}

#[test]
fn each_leaf_is_one_parameter_named_by_its_path() {
    let gens = flat_expand(quote! {
        #[value_and_grad(vg, wrt = net)]
        fn f(net: &Net, x: ArrayView2<f32>) -> f32 {
            sum((x.dot(&net.first.w) + &net.first.b).tanh().dot(&net.second.w) * net.t)
        }
    })
    .expect("expands");
    assert_eq!(
        gens[0].function.param_names,
        [
            "net__first__w",
            "net__first__b",
            "net__second__w",
            "net__second__b",
            "net__t",
            "x"
        ]
    );
    // The value and one gradient per leaf, each shaped as its leaf.
    let vg = &gens[1].function;
    assert_eq!(vg.outs.len(), 6);
    let ranks: Vec<usize> = vg.outs.iter().map(|v| vg.shape(*v).rank()).collect();
    assert_eq!(ranks, [0, 2, 1, 2, 1, 0]);
}

#[test]
fn vmap_shares_a_struct_between_examples() {
    let gens = flat_expand(quote! {
        #[vmap(v, in_axes = (None, 0))]
        fn f(d: &Dense, x: ArrayView1<f32>) -> Array1<f32> { x.dot(&d.w) + &d.b }
    })
    .expect("expands");
    let v = &gens[1].function;
    let ranks: Vec<usize> = v.params.iter().map(|p| v.shape(*p).rank()).collect();
    assert_eq!(ranks, [2, 1, 2], "the leaves unbatched, x batched");
}

#[test]
fn vmap_of_grad_wrt_a_struct_batches_each_leaf() {
    let gens = flat_expand(quote! {
        #[transforms(vmap(v, in_axes = (None, 0), of = grad(wrt = d)))]
        fn f(d: &Dense, x: ArrayView1<f32>) -> f32 { sum((x.dot(&d.w) + &d.b).tanh()) }
    })
    .expect("expands");
    let v = &gens[1].function;
    let ins: Vec<usize> = v.params.iter().map(|p| v.shape(*p).rank()).collect();
    assert_eq!(ins, [2, 1, 2], "the leaves shared, x batched");
    let outs: Vec<usize> = v.outs.iter().map(|o| v.shape(*o).rank()).collect();
    assert_eq!(outs, [3, 2], "each leaf's gradient with a batch axis");
}

#[test]
fn vmap_batches_a_struct_leaf_by_leaf() {
    let gens = flat_expand(quote! {
        #[vmap(v)]
        fn f(d: &Dense, x: ArrayView1<f32>) -> f32 { sum(&d.b * x) }
    })
    .expect("expands");
    let v = &gens[1].function;
    let ranks: Vec<usize> = v.params.iter().map(|p| v.shape(*p).rank()).collect();
    assert_eq!(ranks, [3, 2, 2], "every leaf and x batched");
}

#[test]
fn arrays_of_structs_index_by_literals() {
    let gens = flat_expand(quote! {
        #[grad(g, wrt = d)]
        fn f(d: &Deep, x: ArrayView1<f32>) -> f32 {
            let second = &d.layers[1];
            sum(x.dot(&d.layers[0].w) + &second.b) * d.gains[2]
        }
    })
    .expect("expands");
    assert_eq!(
        gens[0].function.param_names,
        [
            "d__layers__0__w",
            "d__layers__0__b",
            "d__layers__1__w",
            "d__layers__1__b",
            "d__gains__0",
            "d__gains__1",
            "d__gains__2",
            "x"
        ]
    );
    let e = errors_of(quote! {
        #[jit]
        fn f(d: &Deep) -> f32 { d.gains[3] }
    });
    assert_one(&e, "index 3 is out of range: `d.gains` has 3 elements");
    let e = errors_of(quote! {
        #[jit]
        fn f(d: &Deep) -> f32 { sum(&d.layers.w) }
    });
    assert_one(&e, "`d.layers` is an array of 2 elements, which have the field `w`: index it with a literal, `d.layers[0].w`");
    let e = errors_of(quote! {
        #[jit]
        fn f(d: &Deep) -> f32 { sum(d.layers) }
    });
    assert_one(&e, "this is an array of 2 parts of a struct");
}

#[test]
fn a_struct_result_is_its_leaves_in_field_order() {
    let gens = flat_expand(quote! {
        #[jit]
        fn f(d: &Dense, s: f32) -> (f32, Dense) {
            (s, Dense { b: &d.b * s, w: &d.w + s })
        }
    })
    .expect("expands");
    let f = &gens[0].function;
    let ranks: Vec<usize> = f.outs.iter().map(|v| f.shape(*v).rank()).collect();
    assert_eq!(ranks, [0, 2, 1]);
}

#[test]
fn a_struct_argument_passes_its_leaves_to_a_helper() {
    let helper: syn::ItemFn = syn::parse_quote! {
        fn dense(l: &Dense, x: ArrayView2<f32>) -> Array2<f32> {
            x.dot(&l.w) + &l.b
        }
    };
    let item: syn::ItemFn = syn::parse_quote! {
        fn f(net: &Net, x: ArrayView2<f32>) -> f32 {
            sum(dense(&net.second, dense(&net.first, x)))
        }
    };
    let table = HelperTable::by_name(vec![helper]).with_trees(structs());
    let (gens, unknown) = with_helpers(&table, || crate::tree::expand_stack_flat(&item, &[]));
    assert!(unknown.is_empty(), "{unknown:?}");
    let gens = gens.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(gens[0].function.params.len(), 6);
}

#[test]
fn wrt_a_struct_names_its_leaves_and_other_parameters_stay() {
    let gens = flat_expand(quote! {
        #[grad(g, wrt = (x, d))]
        fn f(d: &Dense, x: ArrayView2<f32>) -> f32 {
            sum(x.dot(&d.w) + &d.b)
        }
    })
    .expect("expands");
    let g = &gens[1].function;
    let ranks: Vec<usize> = g.outs.iter().map(|v| g.shape(*v).rank()).collect();
    assert_eq!(
        ranks,
        [2, 2, 1],
        "x first, then d's leaves, as `wrt` lists them"
    );
}

#[test]
fn errors_name_the_fields_and_what_is_supported() {
    let e = errors_of(quote! {
        #[jit]
        fn f(d: &Dense) -> f32 { sum(&d.w9) }
    });
    assert_one(&e, "`Dense` has no field `w9`: its fields are `w`, `b`");
    let e = errors_of(quote! {
        #[jit]
        fn f(net: &Net) -> f32 { sum(&net.first.w.x) }
    });
    assert_one(
        &e,
        "`net.first.w` is an array or a scalar, not a struct: it has no field `x`",
    );
    let e = errors_of(quote! {
        #[jit]
        fn f(net: &Net) -> f32 { sum(net.first) }
    });
    assert_one(&e, "this is a `Dense` struct: use its fields (`w`, `b`)");
    let e = errors_of(quote! {
        #[hessian(h)]
        fn f(d: &Dense) -> f32 { sum(&d.w) }
    });
    assert_one(
        &e,
        "`#[hessian]` with respect to the parameter struct `d` is not supported yet",
    );
    let e = errors_of(quote! {
        #[vmap(v, in_axes = (1, None))]
        fn f(d: &Dense, x: ArrayView1<f32>) -> f32 { sum(&d.b * x) }
    });
    assert_one(
        &e,
        "a struct is batched along the leading axis of every leaf: give `d` `in_axes` 0",
    );
    let e = errors_of(quote! {
        #[vmap(v2, in_axes = (0, None))]
        #[vmap(v1, in_axes = (0, None))]
        fn f(d: &Dense, x: ArrayView1<f32>) -> f32 { sum(&d.b * x) }
    });
    assert_one(&e, "`d` is already a batch of structs");
    // The gradient with respect to `d` is a struct, not a scalar.
    let e = errors_of(quote! {
        #[grad(d2, wrt = d)]
        #[grad(d1, wrt = d)]
        fn f(d: &Dense) -> f32 { sum(&d.w) }
    });
    assert_one(&e, "`#[grad]` needs a function that returns one scalar");
    let e = errors_of(quote! {
        #[jit]
        fn f(d: &Dense) -> Dense { Dense { w: &d.w * 2.0 } }
    });
    assert_one(&e, "missing field `b` of `Dense`");
    let e = errors_of(quote! {
        #[jit]
        fn f(d: &Dense) -> Dense { Net { w: &d.w * 2.0 } }
    });
    assert_one(&e, "expected a `Dense`, found a `Net`");
}

#[test]
fn an_unknown_struct_defers_to_its_macro() {
    let out = crate::expand_attribute_with(
        crate::TransformKind::Grad,
        quote!(g),
        quote!(
            fn f(p: &crate::m::Params, x: f32) -> f32 {
                p.a * x
            }
        ),
        &crate::CodegenOptions::default(),
    )
    .to_string()
    .replace(' ', "");
    assert!(
        out.starts_with("crate::m::Params!{(::oxla::__private::__resolve){grad(g){"),
        "{out}"
    );
}

#[test]
fn the_struct_macro_answer_completes_the_expansion() {
    let payload = quote!({ struct Params { a: f32, b: f32 } } {});
    let state = quote! {
        grad(g) { fn f(p: &Params, x: f32) -> f32 { p.a * x + p.b } } {} (Params) { #payload }
    };
    let out = crate::expand_resolve(state, &crate::CodegenOptions::default()).to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert!(out.contains("fn g"), "{out}");
    assert!(out.contains("__oxla_flat"), "{out}");
    assert!(out.contains("__from_leaves"), "{out}");
}

#[test]
fn the_derive_asks_for_nested_structs_then_emits_its_macro() {
    let out = expand_derive(quote!(
        pub struct Net {
            first: layers::Dense,
            t: f32,
        }
    ))
    .to_string()
    .replace(' ', "");
    assert!(
        out.starts_with("layers::Dense!{(::oxla::__private::__resolve){tree(){"),
        "{out}"
    );
    // With `Dense` known, the impl, the macro and its re-export.
    let state = quote! {
        tree () { pub struct Net { first: layers::Dense, t: f32 } } {}
        (layers::Dense) { { struct Dense { w: Array2<f32>, b: Array1<f32> } } {} }
    };
    let out = crate::expand_resolve(state, &crate::CodegenOptions::default())
        .to_string()
        .replace(' ', "");
    assert!(out.contains("impl::oxla::__private::TreeforNet"), "{out}");
    assert!(out.contains("macro_rules!__oxla_tree_Net_"), "{out}");
    assert!(out.contains("pubuse__oxla_tree_Net_"), "{out}");
    assert!(out.contains("asNet;"), "{out}");
    // The payload carries `Dense`'s definition for the functions using `Net`.
    assert!(out.contains("(layers::Dense){{structDense{"), "{out}");
}

#[test]
fn the_derive_refuses_a_mixed_struct() {
    let out = expand_derive(quote!(
        struct P {
            a: f32,
            b: Array1<f64>,
            n: usize,
        }
    ))
    .to_string();
    assert!(out.contains("mixed float types"), "{out}");
    assert!(out.contains("unsupported field type `usize`"), "{out}");
    assert!(!out.contains("macro_rules"), "{out}");
}

#[test]
fn the_build_script_flattens_as_the_macro_does() {
    let file: syn::File = syn::parse_quote! {
        #[derive(oxla::Tree, Clone)]
        pub struct Dense { w: Array2<f64>, b: Array1<f64> }

        #[oxla::func]
        pub fn dense(l: &Dense, x: ArrayView2<f64>) -> Array2<f64> { x.dot(&l.w) + &l.b }

        #[oxla::value_and_grad(vg, wrt = l)]
        pub fn f(l: &Dense, x: ArrayView2<f64>) -> f64 { sum(dense(l, x)) }
    };
    let gens = crate::collect_from_files(&[file]);
    let names: Vec<String> = gens.iter().map(|g| g.name.to_string()).collect();
    assert_eq!(names, ["f", "vg", "dense"]);
    assert_eq!(gens[1].function.param_names, ["l__w", "l__b", "x"]);
}
