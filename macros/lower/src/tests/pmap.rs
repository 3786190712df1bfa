//! `#[pmap]`, `#[vmap(axis_name = …)]` and the collectives in bodies: the
//! IR the macros generate (the ops, `#[transforms(pmap(…))]` against the
//! attribute alone), its values under the reference interpreter against
//! the same thing computed per device in plain Rust, gradients through
//! collectives inside a pmap against the full-batch gradient, which
//! functions are emitted, and the errors (an unbound axis at its name,
//! malformed arguments).

use crate::codegen::CodegenOptions;
use crate::errors::Errors;
use crate::parse::attr::{take_oxla_attrs, TransformKind};
use crate::stack::{expand_stack, GeneratedFn};
use oxla_core::ops::collective::free_axes;
use oxla_core::{DType, Function, Tensor};
use proc_macro2::TokenStream;
use quote::quote;

/// Devices in the value tests.
const N: usize = 4;

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

/// The errors of expanding `src` (attributes and stack).
fn expand_errors_str(src: &str) -> Errors {
    let mut item: syn::ItemFn = syn::parse_str(src).expect("test input parses");
    let mut errors = Errors::new();
    let stack = take_oxla_attrs(&mut item.attrs, &mut errors);
    if errors.is_empty() {
        match expand_stack(&item, &stack) {
            Ok(_) => panic!("expected errors"),
            Err(e) => errors.extend(e),
        }
    }
    errors
}

fn expand_errors(ts: TokenStream) -> Vec<String> {
    expand_errors_str(&ts.to_string()).messages()
}

fn assert_one(msgs: &[String], needle: &str) {
    assert!(
        msgs.iter().any(|m| m.contains(needle)),
        "no error containing {needle:?} in {msgs:#?}"
    );
}

fn get<'a>(gens: &'a [GeneratedFn], name: &str) -> &'a Function {
    &gens
        .iter()
        .find(|g| g.name == name)
        .unwrap_or_else(|| panic!("no function `{name}`"))
        .function
}

fn text(f: &Function) -> String {
    oxla_core::text::print(f)
}

/// Distinct values, `x[k] = sin(1.3 k + seed) + 0.1 k`.
fn data(n: usize, seed: f64) -> Vec<f64> {
    (0..n)
        .map(|k| (1.3 * k as f64 + seed).sin() + 0.1 * k as f64)
        .collect()
}

fn tensor(shape: &[usize], seed: f64) -> Tensor {
    Tensor::new(
        DType::F64,
        shape.to_vec(),
        data(shape.iter().product(), seed),
    )
}

fn run(f: &Function, args: &[Tensor]) -> Vec<Tensor> {
    oxla_core::interp::eval(f, args).unwrap_or_else(|e| panic!("eval of `{}`: {e}", f.name))
}

fn close(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-12 * (1.0 + w.abs()),
            "{what}, element {k}: {g} vs {w}"
        );
    }
}

// ---- the collectives under #[pmap] --------------------------------------------

/// Each elementwise collective, `all_gather`, `ppermute`, `axis_index` and
/// `axis_size` of a `[N, M]` argument's rows, against plain Rust.
#[test]
fn pmap_of_each_collective_matches_plain_rust() {
    let gens = expand(quote! {
        #[pmap(p, axis_name = i)]
        fn f(x: ArrayView1<f64>) -> (
            Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>,
            Array2<f64>, Array2<f64>, Array1<f64>, f64, f64,
        ) {
            (
                psum(&x, i),
                pmean(&x, i),
                pmax(&x, i),
                pmin(x.clone(), "i"),
                all_gather(&x, i),
                all_gather(&x, i, 1),
                ppermute(&x, i, [(0, 1), (1, 2), (2, 3), (3, 0)]),
                axis_index(i) as f64,
                axis_size(i) as f64,
            )
        }
    });
    let f = get(&gens, "f");
    let p = get(&gens, "p");
    // The annotated function leaves `i` to the pmap; the pmap binds it.
    assert_eq!(free_axes(f).into_iter().collect::<Vec<_>>(), ["i"]);
    assert!(free_axes(p).is_empty());
    let body = text(f);
    for op in [
        "psum[i]",
        "pmax[i]",
        "pmin[i]",
        "all_gather[i,0]",
        "all_gather[i,1]",
        "ppermute[i;0>1;1>2;2>3;3>0]",
        "axis_index[i]",
        "dim_size[axis__i]",
    ] {
        assert!(body.contains(op), "no `{op}` in\n{body}");
    }
    assert!(text(p).contains("pmap[i"), "{}", text(p));
    // The device axis leads each mapped argument and result.
    assert_eq!(p.ty(p.params[0]).shape.rank(), 2);

    let m = 3;
    let x = tensor(&[N, m], 0.4);
    let row = |d: usize| &x.data[d * m..(d + 1) * m];
    let outs = run(p, std::slice::from_ref(&x));
    let col = |j: usize| (0..N).map(move |d| row(d)[j]);
    let sums: Vec<f64> = (0..m).map(|j| col(j).sum()).collect();
    let maxs: Vec<f64> = (0..m).map(|j| col(j).fold(f64::MIN, f64::max)).collect();
    let mins: Vec<f64> = (0..m).map(|j| col(j).fold(f64::MAX, f64::min)).collect();
    let every = |v: &[f64]| -> Vec<f64> { (0..N).flat_map(|_| v.to_vec()).collect() };
    close("psum", &outs[0].data, &every(&sums));
    let means: Vec<f64> = sums.iter().map(|s| s / N as f64).collect();
    close("pmean", &outs[1].data, &every(&means));
    close("pmax", &outs[2].data, &every(&maxs));
    close("pmin", &outs[3].data, &every(&mins));
    // Stacked along axis 0: every device holds x; along axis 1, its transpose.
    close("all_gather", &outs[4].data, &every(&x.data));
    let transposed: Vec<f64> = (0..m).flat_map(|j| col(j).collect::<Vec<_>>()).collect();
    close("all_gather axis 1", &outs[5].data, &every(&transposed));
    // Device d + 1 gets device d's row.
    let permuted: Vec<f64> = (0..N).flat_map(|d| row((d + N - 1) % N).to_vec()).collect();
    close("ppermute", &outs[6].data, &permuted);
    let index: Vec<f64> = (0..N).map(|d| d as f64).collect();
    close("axis_index", &outs[7].data, &index);
    close("axis_size", &outs[8].data, &[N as f64; N]);
}

/// `psum_scatter` and `all_to_all` of each device's `[N, M]` block.
#[test]
fn pmap_of_psum_scatter_and_all_to_all_matches_plain_rust() {
    let gens = expand(quote! {
        #[pmap(p, axis_name = i)]
        fn f(x: ArrayView2<f64>) -> (Array1<f64>, Array2<f64>, Array2<f64>) {
            (psum_scatter(&x, i), all_to_all(&x, i, 0, 0), all_to_all(&x, i, 0, 1))
        }
    });
    let f = get(&gens, "f");
    for op in [
        "psum_scatter[i,0]",
        "all_to_all[i,0,0]",
        "all_to_all[i,0,1]",
    ] {
        assert!(text(f).contains(op), "no `{op}` in\n{}", text(f));
    }
    let p = get(&gens, "p");
    let m = 3;
    let x = tensor(&[N, N, m], 1.1);
    let at = |e: usize, j: usize, k: usize| x.data[(e * N + j) * m + k];
    let outs = run(p, std::slice::from_ref(&x));
    // Device d: the sum over devices of their block's row d.
    let scatter: Vec<f64> = (0..N)
        .flat_map(|d| (0..m).map(move |k| (0..N).map(|e| at(e, d, k)).sum::<f64>()))
        .collect();
    close("psum_scatter", &outs[0].data, &scatter);
    // Device j, at e along the new axis: device e's row j.
    let a2a: Vec<f64> = (0..N)
        .flat_map(|j| (0..N).flat_map(move |e| (0..m).map(move |k| at(e, j, k))))
        .collect();
    close("all_to_all", &outs[1].data, &a2a);
    // The new axis last: [m, N] per device.
    let a2a_1: Vec<f64> = (0..N)
        .flat_map(|j| (0..m).flat_map(move |k| (0..N).map(move |e| at(e, j, k))))
        .collect();
    close("all_to_all concat 1", &outs[2].data, &a2a_1);
}

/// `in_axes`/`out_axes` as for `#[vmap]`: the device axis where they say,
/// a shared argument, a replicated result.
#[test]
fn pmap_in_axes_and_out_axes() {
    let gens = expand(quote! {
        #[pmap(p, axis_name = i, in_axes = (1, None), out_axes = (1, None))]
        fn f(x: ArrayView1<f64>, w: ArrayView1<f64>) -> (Array1<f64>, f64) {
            let y = &x * &w;
            (y.clone(), psum(sum(&y), i))
        }
    });
    let p = get(&gens, "p");
    let m = 3;
    // x: [m, N], the device axis second; w shared.
    let x = tensor(&[m, N], 0.2);
    let w = tensor(&[m], 2.5);
    let outs = run(p, &[x.clone(), w.clone()]);
    let y: Vec<f64> = (0..m)
        .flat_map(|k| (0..N).map(move |d| (k, d)))
        .map(|(k, d)| x.data[k * N + d] * w.data[k])
        .collect();
    assert_eq!(outs[0].shape, [m, N]);
    close("y at out_axes 1", &outs[0].data, &y);
    close("replicated total", &outs[1].data, &[y.iter().sum::<f64>()]);
}

// ---- #[transforms(pmap(..))], stacking, named vmap --------------------------

#[test]
fn transforms_entry_is_the_attribute_alone() {
    let body = quote! {
        fn f(x: ArrayView1<f64>, w: f64) -> Array1<f64> {
            pmean(&x * w, i) + axis_index(i) as f64
        }
    };
    let alone = expand(quote!(#[pmap(p, axis_name = i, in_axes = (0, None))] #body));
    let listed = expand(quote! {
        #[transforms(vmap(v, in_axes = (0, None), of = q), pmap(p, axis_name = "i", in_axes = (0, None)))]
        #[pmap(q, axis_name = i, in_axes = (0, None), out_axes = 0, of = sumf)]
        #[jit(sumf)]
        fn f(x: ArrayView1<f64>, w: f64) -> Array1<f64> {
            pmean(&x * w, i) + axis_index(i) as f64
        }
    });
    assert_eq!(text(get(&alone, "p")), text(get(&listed, "p")));
    // `of = sumf` (a `#[jit]` copy): the same body, named after its input.
    let q = text(get(&listed, "q"))
        .replace("fn q", "fn p")
        .replace("fn sumf", "fn f");
    assert_eq!(text(get(&listed, "p")), q);
}

#[test]
fn named_vmap_reduces_a_collective_over_its_batch() {
    let gens = expand(quote! {
        #[vmap(v, axis_name = j)]
        fn f(x: f64) -> (f64, f64) {
            (x / psum(x, j), axis_index(j) as f64 * pmax(x, j))
        }
    });
    let v = get(&gens, "v");
    assert!(crate::stack::unbound_axes(v).is_empty());
    let t = text(v);
    assert!(!t.contains("psum") && !t.contains("pmap"), "{t}");
    let n = 5;
    let x = tensor(&[n], 0.9);
    let outs = run(v, std::slice::from_ref(&x));
    let total: f64 = x.data.iter().sum();
    let max = x.data.iter().cloned().fold(f64::MIN, f64::max);
    let want0: Vec<f64> = x.data.iter().map(|v| v / total).collect();
    let want1: Vec<f64> = (0..n).map(|k| k as f64 * max).collect();
    close("x / psum", &outs[0].data, &want0);
    close("axis_index * pmax", &outs[1].data, &want1);
    // A vmap without a name leaves the axis free: an error at it.
    let m = expand_errors(quote! {
        #[vmap(v)]
        fn f(x: f64) -> f64 { x / psum(x, j) }
    });
    assert_one(&m, "the axis `j` is not bound in `v`");
}

/// Data parallelism: `#[grad]` below a `#[pmap]` over the shards, each
/// device's loss its share of the full mean (`axis_size`): the per-device
/// gradients sum to the full batch's.
#[test]
fn grad_inside_pmap_sums_to_the_full_batch_gradient() {
    let gens = expand(quote! {
        #[pmap(step, axis_name = i, in_axes = (None, 0, 0), of = loss_grad)]
        #[grad(loss_grad, wrt = w)]
        fn loss(w: f64, x: ArrayView1<f64>, y: ArrayView1<f64>) -> f64 {
            let r = w * &x - &y;
            sum(&r * &r) / (x.len() as f64 * axis_size(i) as f64)
        }
    });
    // `loss_grad` leaves `i` free, for `step` to bind.
    assert!(!free_axes(get(&gens, "loss_grad")).is_empty());
    let step = get(&gens, "step");
    assert!(free_axes(step).is_empty());
    let m = 3;
    let w = 0.7;
    let x = tensor(&[N, m], 0.3);
    let y = tensor(&[N, m], 2.0);
    let wt = Tensor::new(DType::F64, vec![], vec![w]);
    let per_device = &run(step, &[wt, x.clone(), y.clone()])[0];
    assert_eq!(per_device.shape, [N]);
    // d/dw of Σ (w x - y)² / (N m) over the whole batch.
    let full: f64 = x
        .data
        .iter()
        .zip(&y.data)
        .map(|(x, y)| 2.0 * (w * x - y) * x)
        .sum::<f64>()
        / (N * m) as f64;
    close(
        "Σ per-device gradients",
        &[per_device.data.iter().sum()],
        &[full],
    );
}

/// The data-parallel step as JAX writes it: each device's gradient of its
/// shard's mean, `pmean`'d, is the full batch's gradient (a call of the
/// generated `loss_grad` inside the pmap'd function).
#[test]
fn pmean_of_the_per_device_gradient_is_the_full_batch_gradient() {
    let file: syn::File = syn::parse2(quote! {
        #[grad(loss_grad, wrt = w)]
        fn loss(w: f64, x: ArrayView1<f64>, y: ArrayView1<f64>) -> f64 {
            let r = w * &x - &y;
            sum(&r * &r) / x.len() as f64
        }

        #[pmap(step, axis_name = i, in_axes = (None, 0, 0), out_axes = None)]
        fn local(w: f64, x: ArrayView1<f64>, y: ArrayView1<f64>) -> f64 {
            pmean(loss_grad(w, x, y), i)
        }
    })
    .unwrap();
    let gens = crate::collect_from_files(&[file]);
    let names: Vec<String> = gens.iter().map(|g| g.name.to_string()).collect();
    // `local` itself leaves `i` free: not a function of its own.
    assert_eq!(names, ["loss", "loss_grad", "step"]);
    let step = &gens[2].function;
    let m = 3;
    let w = -0.4;
    let x = tensor(&[N, m], 0.1);
    let y = tensor(&[N, m], 1.7);
    let wt = Tensor::new(DType::F64, vec![], vec![w]);
    let got = &run(step, &[wt, x.clone(), y.clone()])[0];
    assert_eq!(got.shape, Vec::<usize>::new());
    let full: f64 = x
        .data
        .iter()
        .zip(&y.data)
        .map(|(x, y)| 2.0 * (w * x - y) * x)
        .sum::<f64>()
        / (N * m) as f64;
    close("pmean'd gradient", &got.data, &[full]);
}

// ---- what is emitted ------------------------------------------------------------

fn expansion(kind: TransformKind, args: TokenStream, item: TokenStream) -> String {
    crate::expand_attribute_with(kind, args, item, &CodegenOptions::default()).to_string()
}

/// The annotated function, whose collectives only the pmap binds, is not
/// emitted as a function (its IR constant is, and a stand-in whose call is
/// an error naming `p`); the pmap'd one is, with the device axis added to
/// its array parameter.
#[test]
fn a_function_with_free_axes_is_not_emitted_as_a_function() {
    let out = expansion(
        TransformKind::Pmap,
        quote!(p, axis_name = i),
        quote! {
            fn f(x: ArrayView1<f64>) -> Array1<f64> { psum(&x, i) }
        },
    );
    assert!(!out.contains("compile_error"), "{out}");
    assert!(out.contains("const F_IR"), "{out}");
    assert!(out.contains("const P_IR"), "{out}");
    assert!(!out.contains("fn f ("), "{out}");
    assert!(out.contains("trait __oxla_unbound_f"), "{out}");
    assert!(out.contains("call `p` instead"), "{out}");
    assert!(out.contains("fn p <"), "{out}");
    // p's parameter has the device axis: a 2-d view.
    let p_sig = &out[out.find("fn p <").unwrap()..];
    let p_sig = &p_sig[..p_sig.find("->").unwrap()];
    assert!(p_sig.contains("Ix2"), "{p_sig}");
    // The checks of the body's built-in names go with the stand-in.
    assert!(out.contains("__oxla_check_psum"), "{out}");
}

// ---- errors -------------------------------------------------------------------

#[test]
fn an_unbound_axis_is_an_error_at_its_name() {
    let src = "#[pmap(p, axis_name = i)]\nfn f(x: f64) -> f64 {\n    psum(x, k) + pmax(x, i)\n}";
    let e = expand_errors_str(src);
    let msgs = e.messages();
    assert_eq!(msgs.len(), 1, "{msgs:#?}");
    assert_one(&msgs, "the axis `k` is not bound in `p`");
    assert_one(&msgs, "add `axis_name = k` to a `#[pmap]` or `#[vmap]`");
    let start = e.iter().next().unwrap().span().start();
    assert_eq!(
        (start.line, start.column),
        (3, 12),
        "the error points at `k`"
    );
    // No attribute at all binds it.
    let m = expand_errors(quote! {
        #[jit]
        fn f(x: f64) -> f64 { psum(x, i) }
    });
    assert_one(
        &m,
        "the axis `i` is not bound: no attribute of `f` binds it",
    );
    // A gradient of a function with a collective, not under a pmap.
    let m = expand_errors(quote! {
        #[grad(g)]
        fn f(x: f64) -> f64 { pmean(x * x, i) }
    });
    assert_one(&m, "the axis `i` is not bound in `g` (`#[grad]` of `f`)");
    // A pmap over another axis, and the inner function's own axis.
    let m = expand_errors(quote! {
        #[pmap(outer, axis_name = j, of = inner)]
        #[pmap(inner, axis_name = i)]
        fn f(x: f64) -> f64 { psum(x, i) + psum(x, j) + psum(x, k) }
    });
    assert_one(&m, "the axis `k` is not bound in `outer`");
    assert_eq!(m.len(), 1, "{m:#?}");
}

#[test]
fn nested_pmaps_bind_both_axes() {
    let gens = expand(quote! {
        #[pmap(outer, axis_name = j, of = inner)]
        #[pmap(inner, axis_name = i)]
        fn f(x: f64) -> f64 { psum(x, i) * axis_size(j) as f64 }
    });
    let outer = get(&gens, "outer");
    assert!(free_axes(outer).is_empty());
    let (a, b) = (3, 2);
    let x = tensor(&[b, a], 0.5);
    let got = &run(outer, std::slice::from_ref(&x))[0];
    // Row sums over `i` (the inner, last axis), times the outer count.
    let want: Vec<f64> = (0..b)
        .flat_map(|r| {
            let s: f64 = x.data[r * a..(r + 1) * a].iter().sum();
            vec![s * b as f64; a]
        })
        .collect();
    close("nested", &got.data, &want);
}

#[test]
fn malformed_collectives_and_attributes() {
    let m = expand_errors(quote! {
        #[pmap(p)]
        fn f(x: f64) -> f64 { psum(x, i) }
    });
    assert_one(&m, "`#[pmap]` needs `axis_name = i`");
    let m = expand_errors(quote! {
        #[pmap(p, axis_name = 3)]
        fn f(x: f64) -> f64 { psum(x, i) }
    });
    assert_one(&m, "`axis_name` is an identifier or a string literal");
    let m = expand_errors(quote! {
        #[pmap(p, axis_name = i, in_axes = (0, None))]
        fn f(x: f64) -> f64 { psum(x, i) }
    });
    assert_one(&m, "`in_axes` has 2 entries but `f` has 1 parameters (x)");
    let m = expand_errors(quote! {
        #[pmap(p, axis_name = i, in_axes = None)]
        fn f(x: f64) -> f64 { psum(x, i) }
    });
    assert_one(&m, "maps no argument");
    let m = expand_errors(quote! {
        #[pmap(p, axis_name = i)]
        fn f(x: ArrayView1<f64>, k: usize) -> Array1<f64> {
            let a = psum(&x, i + 1);
            let b = ppermute(&x, i, perm);
            let c = ppermute(&x, i, [(0, 1), (0, 2)]);
            let d = all_gather(&x, i, k);
            let e = all_to_all(&x, i, 0, 1);
            let g = psum(&x);
            let h = psum_scatter(x.sum(), i);
            let l = psum(k, i);
            a + b + c + d + e + g + h + l
        }
    });
    assert_one(&m, "the axis of `psum` is the `axis_name` of an enclosing `#[pmap]` or `#[vmap]`, written as an identifier or a string literal");
    assert_one(
        &m,
        "`ppermute` takes its permutation as a literal array of `(source, destination)` pairs",
    );
    assert_one(&m, "`ppermute`: source 0 appears twice in the permutation");
    assert_one(&m, "`all_gather` takes the new axis as an integer literal");
    assert_one(
        &m,
        "`all_to_all`: the concat axis 1 is out of range for an operand of shape [n_x]",
    );
    assert_one(&m, "`psum` takes an operand and the axis: `psum(x, i)`");
    assert_one(
        &m,
        "`psum_scatter` scatters an axis of its operand across the devices, but this is a scalar",
    );
    assert_one(&m, "`psum` takes a float scalar or array, got i64");
    // An unknown function's error lists the collectives.
    let m = expand_errors(quote! {
        #[jit]
        fn f(x: f64) -> f64 { pmeen(x, i) }
    });
    assert_one(&m, "psum(x, i), pmean(x, i)");
}
