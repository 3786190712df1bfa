//! Unit tests of the n-d surface: parameter and result types and the IR
//! types they lower to, numpy broadcasting, and the array vocabulary
//! (`vocab.rs`), each evaluated with the reference interpreter against a
//! computation written out here with loops.

use crate::tests::{lower, lower_errors as errors};
use oxla_core::interp;
use oxla_core::{DType, Function, Tensor};

fn assert_error(msgs: &[String], needle: &str) {
    assert!(
        msgs.iter().any(|m| m.contains(needle)),
        "no error containing {needle:?} in {msgs:#?}"
    );
}

fn param_types(f: &Function) -> Vec<String> {
    f.params.iter().map(|p| f.ty(*p).to_string()).collect()
}

/// Deterministic test data: `n` values in about [-2, 2].
fn data(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 4.0 - 2.0
        })
        .collect()
}

fn t64(shape: &[usize], seed: u64) -> Tensor {
    let n = shape.iter().product();
    Tensor::new(DType::F64, shape.to_vec(), data(n, seed))
}

fn run(f: &Function, args: &[Tensor]) -> Vec<Tensor> {
    interp::eval(f, args).unwrap_or_else(|e| panic!("eval: {e}"))
}

fn close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "element {i}: {g} vs {w}"
        );
    }
}

#[test]
fn parameter_types_lower_to_shapes() {
    let f = lower(quote::quote! {
        fn f<'a>(
            a: ArrayView2<'a, f32>,
            b: &Array3<f32>,
            c: &[f32],
            d: [[f32; 3]; 2],
            e: &[f32; 4],
            g: ndarray::ArrayView<'_, f32, ndarray::Ix1>,
            s: f32,
        ) -> f32 {
            sum(a) + sum(b) + sum(c) + sum(d) + sum(e) + sum(g) + s
        }
    });
    assert_eq!(
        param_types(&f),
        [
            "f32[a_0,a_1]",
            "f32[b_0,b_1,b_2]",
            "f32[n_c]",
            "f32[2,3]",
            "f32[4]",
            "f32[n_g]",
            "f32[]"
        ]
    );
    let f = lower(quote::quote! {
        fn h(x: ArrayView1<half::bf16>) -> Array1<half::bf16> { x * 2.0 }
    });
    assert_eq!(param_types(&f), ["bf16[n_x]"]);
    assert_eq!(f.ty(f.outs[0]).to_string(), "bf16[n_x]");
}

#[test]
fn unsupported_array_types_are_named() {
    let m = errors(quote::quote! { fn f(x: ArrayViewD<f32>) -> f32 { sum(x) } });
    assert_error(&m, "`ArrayViewD` has a rank known only at run time");
    let m = errors(quote::quote! { fn f(x: Array2<f32>) -> f32 { sum(x) } });
    assert_error(
        &m,
        "an owned array parameter is not supported: take a view (`ArrayView2<T>`)",
    );
    let m = errors(quote::quote! { fn f(x: ArrayView2<u8>) -> f32 { 1.0 } });
    assert_error(
        &m,
        "`u8` is not supported here: integer arrays hold i32 or i64",
    );
    let m = errors(quote::quote! { fn f(x: ArrayView2<String>) -> f32 { 1.0 } });
    assert_error(&m, "unsupported element type `String`");
    let m = errors(quote::quote! { fn f(x: [f32; N]) -> f32 { 1.0 } });
    assert_error(&m, "must be an integer literal");
    let m = errors(quote::quote! { fn f(x: ArrayView2<f32>) -> Array1<f32> { x * 2.0 } });
    assert_error(
        &m,
        "the declared result has rank 1 but the function computes an array of rank 2",
    );
}

#[test]
fn numpy_broadcasting_of_a_row_and_a_column() {
    // x: [m, n]; b: [n] (a row); c: [m, 1] (a column, static size 1).
    let f = lower(quote::quote! {
        fn f(x: ArrayView2<f64>, b: &[f64], c: &[[f64; 1]; 3]) -> Array2<f64> {
            x + b - c * 2.0
        }
    });
    // The row's length is the matrix's second axis; the column fixes m = 3.
    assert_eq!(param_types(&f), ["f64[3,x_1]", "f64[x_1]", "f64[3,1]"]);
    let (m, n) = (3, 4);
    let (x, b, c) = (t64(&[m, n], 1), t64(&[n], 2), t64(&[m, 1], 3));
    let out = run(&f, &[x.clone(), b.clone(), c.clone()]);
    let want: Vec<f64> = (0..m * n)
        .map(|k| {
            let (i, j) = (k / n, k % n);
            x.data[k] + b.data[j] - c.data[i] * 2.0
        })
        .collect();
    assert_eq!(out[0].shape, [m, n]);
    close(&out[0].data, &want, 1e-15);

    let m = errors(quote::quote! {
        fn f(x: [[f64; 3]; 2], y: [f64; 4]) -> Array2<f64> { x + y }
    });
    assert_error(
        &m,
        "cannot broadcast arrays of shapes [2,3] and [4] together",
    );
}

fn matmul_ref(a: &Tensor, b: &Tensor) -> Vec<f64> {
    let (m, k) = (a.shape[0], a.shape[1]);
    let n = b.shape[1];
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k).map(|p| a.data[i * k + p] * b.data[p * n + j]).sum();
        }
    }
    out
}

#[test]
fn dot_has_ndarray_semantics() {
    let f = lower(quote::quote! {
        fn f(a: ArrayView2<f64>, b: ArrayView2<f64>, v: &[f64], w: &[f64])
            -> (Array2<f64>, Array1<f64>, Array1<f64>, f64, Array2<f64>)
        {
            (a.dot(&b), a.dot(&v), w.dot(&b), dot(v, v), a.t().dot(&a))
        }
    });
    // The contracted sizes are unified: a is m×k, b is k×n, v has k, w has m... no:
    // `w.dot(&b)` contracts w with b's rows (k), so w has length k too.
    assert_eq!(
        param_types(&f),
        ["f64[a_0,a_1]", "f64[a_1,b_1]", "f64[a_1]", "f64[a_1]"]
    );
    let (m, k, n) = (3, 5, 2);
    let (a, b) = (t64(&[m, k], 4), t64(&[k, n], 5));
    let (v, w) = (t64(&[k], 6), t64(&[k], 7));
    let out = run(&f, &[a.clone(), b.clone(), v.clone(), w.clone()]);
    close(&out[0].data, &matmul_ref(&a, &b), 1e-14);
    let col = |t: &Tensor| Tensor::new(DType::F64, vec![t.numel(), 1], t.data.clone());
    let row = |t: &Tensor| Tensor::new(DType::F64, vec![1, t.numel()], t.data.clone());
    close(&out[1].data, &matmul_ref(&a, &col(&v)), 1e-14);
    close(&out[2].data, &matmul_ref(&row(&w), &b), 1e-14);
    let vv: f64 = v.data.iter().map(|x| x * x).sum();
    close(&out[3].data, &[vv], 1e-14);
    let at = Tensor::new(
        DType::F64,
        vec![k, m],
        (0..k * m).map(|q| a.data[(q % m) * k + q / m]).collect(),
    );
    assert_eq!(out[4].shape, [k, k]);
    close(&out[4].data, &matmul_ref(&at, &a), 1e-14);

    let m = errors(quote::quote! {
        fn f(a: [[f64; 2]; 3], b: [[f64; 2]; 3]) -> Array2<f64> { a.dot(&b) }
    });
    assert_error(&m, "the contracted axes have sizes 2 and 3");
}

#[test]
fn matmul_batches_over_leading_axes() {
    let f = lower(quote::quote! {
        fn f(a: ArrayView3<f64>, b: ArrayView3<f64>, w: ArrayView2<f64>)
            -> (Array3<f64>, Array3<f64>, Array3<f64>)
        {
            (matmul(a, b), matmul(a, w), matmul(w.t(), b))
        }
    });
    let (s, m, k, n) = (2, 3, 4, 5);
    // w is k×k here: it multiplies a (…×k) on the right and b (k×…) on the left.
    let (a, b, w) = (t64(&[s, m, k], 8), t64(&[s, k, n], 9), t64(&[k, k], 10));
    let out = run(&f, &[a.clone(), b.clone(), w.clone()]);
    let slice = |t: &Tensor, i: usize| {
        let per: usize = t.shape[1..].iter().product();
        Tensor::new(
            DType::F64,
            t.shape[1..].to_vec(),
            t.data[i * per..(i + 1) * per].to_vec(),
        )
    };
    let wt = Tensor::new(
        DType::F64,
        vec![k, k],
        (0..k * k).map(|q| w.data[(q % k) * k + q / k]).collect(),
    );
    assert_eq!(out[0].shape, [s, m, n]);
    assert_eq!(out[1].shape, [s, m, k]);
    assert_eq!(out[2].shape, [s, k, n]);
    for i in 0..s {
        let per = |o: &Tensor| o.data.len() / s;
        close(
            &out[0].data[i * per(&out[0])..(i + 1) * per(&out[0])],
            &matmul_ref(&slice(&a, i), &slice(&b, i)),
            1e-14,
        );
        close(
            &out[1].data[i * per(&out[1])..(i + 1) * per(&out[1])],
            &matmul_ref(&slice(&a, i), &w),
            1e-14,
        );
        close(
            &out[2].data[i * per(&out[2])..(i + 1) * per(&out[2])],
            &matmul_ref(&wt, &slice(&b, i)),
            1e-14,
        );
    }
}

#[test]
fn reductions_over_axes_and_kept_dims() {
    let f = lower(quote::quote! {
        fn f(x: ArrayView2<f64>) -> (Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, f64, f64, Array2<f64>) {
            (
                x.sum_axis(Axis(0)),
                x.mean_axis(Axis(1)),
                x.max_axis(Axis(1)),
                x.min_axis(Axis(0)),
                x.mean(),
                max(x),
                x - x.max_axis(Axis(1)).insert_axis(Axis(1)),
            )
        }
    });
    let (m, n) = (4, 3);
    let x = t64(&[m, n], 11);
    let out = run(&f, std::slice::from_ref(&x));
    let at = |i: usize, j: usize| x.data[i * n + j];
    let col_sum: Vec<f64> = (0..n).map(|j| (0..m).map(|i| at(i, j)).sum()).collect();
    let row_mean: Vec<f64> = (0..m)
        .map(|i| (0..n).map(|j| at(i, j)).sum::<f64>() / n as f64)
        .collect();
    let row_max: Vec<f64> = (0..m)
        .map(|i| (0..n).map(|j| at(i, j)).fold(f64::NEG_INFINITY, f64::max))
        .collect();
    let col_min: Vec<f64> = (0..n)
        .map(|j| (0..m).map(|i| at(i, j)).fold(f64::INFINITY, f64::min))
        .collect();
    let mean = x.data.iter().sum::<f64>() / (m * n) as f64;
    let max = x.data.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    close(&out[0].data, &col_sum, 1e-14);
    close(&out[1].data, &row_mean, 1e-14);
    close(&out[2].data, &row_max, 0.0);
    close(&out[3].data, &col_min, 0.0);
    close(&out[4].data, &[mean], 1e-14);
    close(&out[5].data, &[max], 0.0);
    let centered: Vec<f64> = (0..m * n).map(|k| x.data[k] - row_max[k / n]).collect();
    close(&out[6].data, &centered, 0.0);

    let m =
        errors(quote::quote! { fn f(x: ArrayView2<f64>) -> Array1<f64> { x.sum_axis(Axis(2)) } });
    assert_error(&m, "axis 2 is out of range for an array of rank 2");
    let m = errors(quote::quote! { fn f(x: ArrayView2<f64>) -> Array1<f64> { x.sum_axis(1) } });
    assert_error(&m, "`sum_axis` takes an axis as `Axis(k)`");
    let m = errors(
        quote::quote! { fn f(x: ArrayView2<f64>) -> Array1<f64> { x.remove_axis(Axis(0)) } },
    );
    assert_error(
        &m,
        "`remove_axis` removes an axis of size 1, but axis 0 has size x_0",
    );
}

#[test]
fn logsumexp_and_softmax_are_stable() {
    let f = lower(quote::quote! {
        fn f(x: ArrayView2<f64>) -> (Array1<f64>, f64, Array2<f64>, Array2<f64>) {
            (logsumexp(x, Axis(1)), logsumexp(x), softmax(x, Axis(1)), log_softmax(x, Axis(1)))
        }
    });
    let (m, n) = (3, 4);
    // Large entries: a naive exp overflows.
    let mut x = t64(&[m, n], 12);
    for v in x.data.iter_mut() {
        *v *= 400.0;
    }
    x.data[0] = f64::NEG_INFINITY;
    let out = run(&f, std::slice::from_ref(&x));
    let at = |i: usize, j: usize| x.data[i * n + j];
    for i in 0..m {
        let mx = (0..n).map(|j| at(i, j)).fold(f64::NEG_INFINITY, f64::max);
        let s: f64 = (0..n).map(|j| (at(i, j) - mx).exp()).sum();
        let lse = mx + s.ln();
        close(&out[0].data[i..i + 1], &[lse], 1e-14);
        for j in 0..n {
            let sm = (at(i, j) - mx).exp() / s;
            close(&out[2].data[i * n + j..i * n + j + 1], &[sm], 1e-14);
            let lsm = at(i, j) - lse;
            if lsm.is_finite() {
                close(&out[3].data[i * n + j..i * n + j + 1], &[lsm], 1e-14);
            } else {
                assert_eq!(out[3].data[i * n + j], lsm);
            }
        }
    }
    assert!(out[1].data[0].is_finite());
    // A row of -inf gives -inf, not NaN.
    let g = lower(quote::quote! { fn g(x: [f64; 3]) -> f64 { logsumexp(x) } });
    let ninf = Tensor::new(DType::F64, vec![3], vec![f64::NEG_INFINITY; 3]);
    assert_eq!(run(&g, &[ninf])[0].data, [f64::NEG_INFINITY]);
    let inf = Tensor::new(DType::F64, vec![3], vec![1.0, f64::INFINITY, 2.0]);
    assert_eq!(run(&g, &[inf])[0].data, [f64::INFINITY]);
}

#[test]
fn take_records_an_index_check_per_index_parameter() {
    use crate::lower::{lower_fn_checked, IndexCheck};
    use oxla_core::Dim;
    let (f, checks) = lower_fn_checked(
        &syn::parse2(quote::quote! {
            fn f(t: ArrayView2<f32>, ids: ArrayView1<i32>, s: ArrayView2<f32>) -> Array2<f32> {
                t.select(Axis(0), &ids) + take(t, &argmax(s, Axis(1)), Axis(0))
            }
        })
        .unwrap(),
    )
    .unwrap();
    // The parameter `ids`, bounded by `t`'s first axis; the computed
    // indices (`argmax`) are not a parameter and record nothing.
    let bound = f.shape(f.params[0]).0[0].clone();
    assert!(matches!(bound, Dim::Sym(_)), "{bound}");
    assert_eq!(
        checks,
        vec![IndexCheck {
            param: "ids".into(),
            bound
        }]
    );
    // Result: t.shape[..0] ++ ids.shape ++ t.shape[1..].
    let out = f.shape(f.outs[0]);
    assert_eq!(out.0[1], f.shape(f.params[0]).0[1]);
    assert_eq!(out.0[0], f.shape(f.params[1]).0[0]);
}
