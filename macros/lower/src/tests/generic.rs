//! Functions generic over their float type (see `generic`): the instances'
//! source and IR, the values of both instances, what the build script
//! collects and what the expansion binds to, and the errors.

use crate::collect::collect_from_file;
use crate::errors::Errors;
use crate::generic::{float_param, instantiate};
use crate::parse::attr::{take_oxla_attrs, TransformKind};
use crate::stack::expand_stack;
use crate::tests::eval;
use crate::{aot_symbols, expand_attribute_with, CodegenOptions};
use oxla_core::DType;
use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

fn item(ts: TokenStream) -> syn::ItemFn {
    syn::parse2(ts).expect("test input parses")
}

/// The float parameter's errors (none expected: its name).
fn param_errors(ts: TokenStream) -> Vec<String> {
    let mut errors = Errors::new();
    let t = float_param(&item(ts), &mut errors);
    assert_eq!(t.is_none(), !errors.is_empty());
    errors.messages()
}

fn assert_one(msgs: &[String], needle: &str) {
    assert!(
        msgs.iter().any(|m| m.contains(needle)),
        "no error containing {needle:?} in {msgs:#?}"
    );
}

fn squash(ts: impl ToTokens) -> String {
    ts.to_token_stream().to_string().replace(' ', "")
}

#[test]
fn an_instance_replaces_the_type_parameter_everywhere() {
    let f = item(quote! {
        fn f<'a, T>(x: &'a [T], y: T, n: i32) -> Vec<T>
        where
            T: oxla::Float,
        {
            let k: T = T::from(0.5) + T::from(2).unwrap() + T::zero() * T::one();
            let m = T::from(y * 2.0) + (n as T) + T::EPSILON + T::exp(y) + T::PI();
            x * k + m
        }
    });
    let mut errors = Errors::new();
    let t = float_param(&f, &mut errors).expect("a float parameter");
    assert_eq!(t, "T");
    let inst = instantiate(&f, &t, DType::F32);
    let sig = squash(&inst.sig);
    assert_eq!(sig, "fnf<'a>(x:&'a[f32],y:f32,n:i32)->Vec<f32>");
    let body = squash(&inst.block);
    assert!(body.contains("letk:f32=0.5+2.0+0.0*1.0;"), "{body}");
    assert!(
        body.contains("((y*2.0)asf32)+(nasf32)+f32::EPSILON+f32::exp(y)+f32::consts::PI"),
        "{body}"
    );
    let g = item(quote! {
        fn g<T: Float>(x: T) -> T { x * T::from(std::f64::consts::LN_2) }
    });
    let body = squash(&instantiate(&g, &t, DType::F32).block);
    assert_eq!(body, "{x*f32::consts::LN_2}");
    // Each instance lowers to its own float type.
    for dtype in [DType::F32, DType::F64] {
        let g = crate::lower::lower_fn(&instantiate(&f, &t, dtype)).expect("lowers");
        assert!(g.params.iter().take(2).all(|p| g.dtype(*p) == dtype));
        assert_eq!(g.dtype(g.outs[0]), dtype);
    }
}

#[test]
fn both_instances_compute_the_same_values_and_derivatives() {
    let mut f = item(quote! {
        #[oxla::grad(g)]
        fn f<T: Float>(x: &[T], s: T) -> T {
            let y = (x * s).tanh() + 1.0;
            sum(y * y) / T::from(3.0)
        }
    });
    let mut errors = Errors::new();
    let stack = take_oxla_attrs(&mut f.attrs, &mut errors);
    let t = float_param(&f, &mut errors).unwrap();
    let x = vec![0.3, -1.2, 2.0];
    let s = 0.7;
    let mut results = Vec::new();
    for dtype in [DType::F32, DType::F64] {
        let gens = expand_stack(&instantiate(&f, &t, dtype), &stack).expect("expands");
        let names: Vec<String> = gens.iter().map(|g| g.name.to_string()).collect();
        assert_eq!(names, ["f", "g"]);
        let value = eval(&gens[0].function, &[x.clone(), vec![s]]);
        let grads = eval(&gens[1].function, &[x.clone(), vec![s]]);
        results.push((value, grads));
    }
    let plain = |x: &[f64], s: f64| -> f64 {
        x.iter()
            .map(|v| ((v * s).tanh() + 1.0).powi(2))
            .sum::<f64>()
            / 3.0
    };
    let (v32, g32) = &results[0];
    let (v64, g64) = &results[1];
    assert!((v64[0][0] - plain(&x, s)).abs() < 1e-12);
    assert!((v32[0][0] - v64[0][0]).abs() < 1e-5);
    // d/ds by central differences; the f32 gradient within f32 precision.
    let h = 1e-6;
    let fd = (plain(&x, s + h) - plain(&x, s - h)) / (2.0 * h);
    assert!((g64[1][0] - fd).abs() < 1e-6, "{} vs {fd}", g64[1][0]);
    for (a, b) in g32.iter().flatten().zip(g64.iter().flatten()) {
        assert!((a - b).abs() < 1e-5 * (1.0 + b.abs()), "{a} vs {b}");
    }
}

#[test]
fn the_build_script_collects_both_instances_and_the_expansion_binds_them() {
    let src = quote! {
        #[oxla::grad(g)]
        pub fn f<T: oxla::Float>(x: &[T]) -> T {
            sum(x.exp()) / 2.0
        }
    };
    let file: syn::File = syn::parse2(src.clone()).unwrap();
    let gens = collect_from_file(&file);
    let names: Vec<String> = gens.iter().map(|g| g.name.to_string()).collect();
    assert_eq!(names, ["f", "g", "f", "g"]);
    let dtypes: Vec<DType> = gens
        .iter()
        .map(|g| g.function.dtype(g.function.params[0]))
        .collect();
    assert_eq!(dtypes, [DType::F32, DType::F32, DType::F64, DType::F64]);
    let syms: Vec<String> = gens.iter().flat_map(|g| aot_symbols(&g.function)).collect();
    assert!(!aot_symbols(&gens[0].function).is_empty());
    // The instances' kernels differ (their element types do).
    for s in aot_symbols(&gens[0].function) {
        assert!(!aot_symbols(&gens[2].function).contains(&s), "{s}");
    }
    // With every symbol in the manifest, each instance binds its kernels,
    // and nothing is reported.
    let mut item = item(src.clone());
    item.attrs.clear();
    // `#[grad(g)]` on `item` with the build script's manifest holding `manifest`.
    let expand = |manifest: &[String]| {
        let opts = CodegenOptions {
            aot_manifest: Some(manifest.iter().cloned().collect()),
            aot_required: true,
            ..CodegenOptions::default()
        };
        expand_attribute_with(
            TransformKind::Grad,
            quote!(g),
            item.to_token_stream(),
            &opts,
        )
        .to_string()
    };
    let out = expand(&syms);
    for s in &syms {
        assert!(out.contains(&format!("{s}_v3")), "{s} in {out}");
    }
    assert!(!out.contains("compile_error"), "{out}");
    let flat = out.replace(' ', "");
    assert!(
        flat.contains("pubfng<T:::oxla::__private::Float>(x:&[T])->::std::vec::Vec<T>"),
        "{flat}"
    );
    assert!(flat.contains("pubfnf<T:oxla::Float>(x:&[T])->T"), "{flat}");
    assert!(
        flat.contains("::oxla::__private::generic::is_f32::<T>()"),
        "{flat}"
    );
    // One kernel missing: required, so an error naming the function.
    let out = expand(&syms[1..]);
    assert!(out.contains("did not compile the kernels of `f`"), "{out}");
}

#[test]
fn a_scalar_instance_is_straight_line_rust() {
    let src = quote! {
        fn f<T: oxla::Float>(x: T) -> T { (T::one() + x.exp()).ln() }
    };
    let out = expand_attribute_with(
        TransformKind::Jvp,
        quote!(f_jvp),
        src,
        &CodegenOptions::default(),
    )
    .to_string();
    assert!(!out.contains("CompiledFn"), "{out}");
    // Both instances, each in its own block, and the generic signatures.
    let flat = out.replace(' ', "");
    assert!(flat.contains("fnf(x:f32)->f32"), "{flat}");
    assert!(flat.contains("fnf(x:f64)->f64"), "{flat}");
    assert!(
        flat.contains("fnf_jvp<T:::oxla::__private::Float>(x:T,t_x:T)->(T,T)"),
        "{flat}"
    );
}

#[test]
fn errors_name_the_supported_form() {
    let m = param_errors(quote! { fn f<T: oxla::Float, U: oxla::Float>(x: T, y: U) -> T { x } });
    assert_one(
        &m,
        "a second type parameter is not supported (`T` is the float type)",
    );
    let m = param_errors(quote! { fn f<T: num_traits::Float>(x: T) -> T { x } });
    assert_one(
        &m,
        "`T: num_traits::Float`: the float type parameter's bound is `oxla::Float`",
    );
    let m = param_errors(quote! { fn f<T: oxla::Float + Copy>(x: T) -> T { x } });
    assert_one(&m, "`T: Copy`");
    let m = param_errors(quote! { fn f<T>(x: T) -> T { x } });
    assert_one(&m, "`T` needs the bound `oxla::Float`");
    let m = param_errors(quote! { fn f<const N: usize>(x: [f32; N]) -> f32 { x[0] } });
    assert_one(&m, "const generic parameters are not supported");
    let m = param_errors(quote! { fn f<T: oxla::Float>(x: T, y: &[f64]) -> T { x } });
    assert_one(&m, "mixed float types: this function is generic over `T`, its one float type; write `T` instead of `f64`");
    let m = param_errors(quote! { fn f<T: oxla::Float>(x: T) -> f32 { x } });
    assert_one(&m, "write `T` instead of `f32`");
    let m = param_errors(quote! { fn f<T>(x: T) -> T where T: oxla::Float, i32: Copy { x } });
    assert_one(&m, "this `where` clause is not supported");
    let m = param_errors(quote! { fn f(x: f32) -> f32 where { x } });
    assert_one(
        &m,
        "an oxla function may be generic over its one float type only",
    );
    // `T: Float` in a `where` clause is the bound.
    assert!(param_errors(quote! { fn f<T>(x: T) -> T where T: Float { x } }).is_empty());
    // Errors of the body are reported once, not per instance.
    let mut f = item(quote! { fn f<T: oxla::Float>(x: T) -> T { x.frobnicate() } });
    let stack = take_oxla_attrs(&mut f.attrs, &mut Errors::new());
    let out = crate::generic::collect(&f, &stack).unwrap_err().messages();
    assert_eq!(out.len(), 1, "{out:#?}");
    assert_one(&out, "unknown method `frobnicate`");
    // An unknown `T::name(x)` is reported as written.
    let f = item(quote! { fn f<T: oxla::Float>(x: T) -> T { T::frobnicate(x) } });
    let out = crate::generic::collect(&f, &[]).unwrap_err().messages();
    assert_one(&out, "unknown function `T::frobnicate`");
    let f = item(quote! { fn f<T: oxla::Float>(x: T) -> T { x * Self::K } });
    let out = crate::generic::collect(&f, &[]).unwrap_err().messages();
    assert_one(&out, "`Self::K` in a generic function is not supported");
}
