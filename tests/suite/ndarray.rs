//! n-d arrays end to end through the macros and the JIT: ndarray views and
//! fixed-size arrays in, arrays out; matrix products, axis reductions,
//! softmax; gradients against central differences; non-contiguous views;
//! shape errors naming the argument; vmap along other axes; Jacobians and
//! Hessians.

use oxla::ndarray::{array, s, Array1, Array2, Array3, ArrayView1, ArrayView2, Axis};
use oxla::{grad, hessian, jacfwd, jacrev, jit, value_and_grad, vmap};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn random2(rng: &mut StdRng, m: usize, n: usize) -> Array2<f64> {
    Array2::from_shape_fn((m, n), |_| rng.gen_range(-1.0..1.0))
}

fn random1(rng: &mut StdRng, n: usize) -> Array1<f64> {
    Array1::from_shape_fn(n, |_| rng.gen_range(-1.0..1.0))
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: {g} vs {w}"
        );
    }
}

/// Central differences of `f` along every coordinate of `x`.
fn fd_grad(x: &[f64], f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    let h = 1e-6;
    (0..x.len())
        .map(|i| {
            let (mut p, mut m) = (x.to_vec(), x.to_vec());
            p[i] += h;
            m[i] -= h;
            (f(&p) - f(&m)) / (2.0 * h)
        })
        .collect()
}

// ---- forward --------------------------------------------------------------

#[jit]
fn dense(x: ArrayView2<f64>, w: ArrayView2<f64>, b: ArrayView1<f64>) -> Array2<f64> {
    (x.dot(&w) + b).tanh()
}

#[test]
fn a_dense_layer_matches_loops() {
    let mut rng = StdRng::seed_from_u64(1);
    for (n, d, k) in [(5, 3, 4), (1, 1, 1), (33, 17, 9), (0, 4, 2)] {
        let (x, w, b) = (
            random2(&mut rng, n, d),
            random2(&mut rng, d, k),
            random1(&mut rng, k),
        );
        let got = dense(x.view(), w.view(), b.view());
        assert_eq!(got.dim(), (n, k));
        let want = Array2::from_shape_fn((n, k), |(i, j)| {
            ((0..d).map(|p| x[[i, p]] * w[[p, j]]).sum::<f64>() + b[j]).tanh()
        });
        assert_close(
            got.as_slice().unwrap(),
            want.as_slice().unwrap(),
            1e-13,
            "dense",
        );
    }
}

#[jit]
fn reductions(x: ArrayView2<f64>) -> (Array1<f64>, Array1<f64>, Array1<f64>, f64, Array2<f64>) {
    (
        x.sum_axis(Axis(0)),
        x.max_axis(Axis(1)),
        logsumexp(x, Axis(1)),
        x.mean(),
        softmax(x, Axis(1)),
    )
}

#[test]
fn axis_reductions_and_softmax_match_loops() {
    let mut rng = StdRng::seed_from_u64(2);
    let x = random2(&mut rng, 7, 5) * 30.0;
    let (cols, row_max, lse, mean, sm) = reductions(x.view());
    let want_cols: Vec<f64> = (0..5).map(|j| x.column(j).sum()).collect();
    let want_max: Vec<f64> = (0..7)
        .map(|i| x.row(i).fold(f64::NEG_INFINITY, |a, b| a.max(*b)))
        .collect();
    let want_lse: Vec<f64> = (0..7)
        .map(|i| {
            want_max[i]
                + x.row(i)
                    .iter()
                    .map(|v| (v - want_max[i]).exp())
                    .sum::<f64>()
                    .ln()
        })
        .collect();
    assert_close(cols.as_slice().unwrap(), &want_cols, 1e-13, "sum_axis");
    assert_close(row_max.as_slice().unwrap(), &want_max, 0.0, "max_axis");
    assert_close(lse.as_slice().unwrap(), &want_lse, 1e-13, "logsumexp");
    assert_close(&[mean], &[x.mean().unwrap()], 1e-13, "mean");
    for i in 0..7 {
        for j in 0..5 {
            let want = (x[[i, j]] - want_lse[i]).exp();
            assert_close(&[sm[[i, j]]], &[want], 1e-12, "softmax");
        }
    }
}

#[test]
fn non_contiguous_views_give_the_same_results() {
    let mut rng = StdRng::seed_from_u64(3);
    let xt = random2(&mut rng, 3, 6); // x is its transpose, 6×3
    let w = random2(&mut rng, 3, 4);
    let b = random2(&mut rng, 1, 8); // every other element is the bias
    let x = xt.t().to_owned();
    let bias = b.slice(s![0, ..;2]);
    assert!(!xt.t().is_standard_layout() && !bias.is_standard_layout());
    let want = dense(x.view(), w.view(), bias.to_owned().view());
    let got = dense(xt.t(), w.view(), bias);
    assert_eq!(got, want);
}

#[jit]
fn fixed(a: [[f64; 3]; 2], v: &[f64; 3]) -> Array1<f64> {
    a.dot(&v)
}

#[test]
fn fixed_size_arrays_are_static_shapes() {
    let a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let got = fixed(a, &[1.0, 0.5, -1.0]);
    assert_eq!(got.to_vec(), vec![1.0 + 1.0 - 3.0, 4.0 + 2.5 - 6.0]);
}

#[test]
fn a_shape_mismatch_names_the_argument_and_the_axis() {
    let x = Array2::<f64>::zeros((4, 3));
    let w = Array2::<f64>::zeros((5, 2));
    let b = Array1::<f64>::zeros(2);
    let err = std::panic::catch_unwind(|| dense(x.view(), w.view(), b.view())).unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("argument `w` of `dense`")
            && msg.contains("axis 0 is 5")
            && msg.contains("axis 1 of argument `x`"),
        "{msg}"
    );
}

// ---- gradients --------------------------------------------------------------

#[value_and_grad(mse_and_grad, wrt = (w, b))]
fn mse(w: ArrayView1<f64>, b: f64, x: ArrayView2<f64>, y: ArrayView1<f64>) -> f64 {
    let err = x.dot(&w) + b - y;
    (err * err).mean()
}

#[test]
fn linear_regression_gradient_matches_central_differences() {
    let mut rng = StdRng::seed_from_u64(4);
    let (x, y, w) = (
        random2(&mut rng, 9, 4),
        random1(&mut rng, 9),
        random1(&mut rng, 4),
    );
    let b = 0.3;
    let (value, gw, gb) = mse_and_grad(&w, b, &x, &y);
    assert_close(
        &[value],
        &[mse(w.view(), b, x.view(), y.view())],
        1e-14,
        "value",
    );
    let fd = fd_grad(w.as_slice().unwrap(), |w| {
        mse(ArrayView1::from(w), b, x.view(), y.view())
    });
    assert_close(gw.as_slice().unwrap(), &fd, 1e-7, "d/dw");
    let fdb = fd_grad(&[b], |b| mse(w.view(), b[0], x.view(), y.view()));
    assert_close(&[gb], &fdb, 1e-7, "d/db");
}

#[grad(ce_grad, wrt = (w1, w2))]
fn cross_entropy(
    w1: ArrayView2<f64>,
    w2: ArrayView2<f64>,
    x: ArrayView2<f64>,
    y: ArrayView2<f64>,
) -> f64 {
    let h = x.dot(&w1).tanh();
    let logits = h.dot(&w2);
    -(y * log_softmax(logits, Axis(1))).sum_axis(Axis(1)).mean()
}

#[test]
fn mlp_cross_entropy_gradient_matches_central_differences() {
    let mut rng = StdRng::seed_from_u64(5);
    let (n, d, h, c) = (6, 4, 5, 3);
    let (x, w1, w2) = (
        random2(&mut rng, n, d),
        random2(&mut rng, d, h),
        random2(&mut rng, h, c),
    );
    let y = Array2::from_shape_fn((n, c), |(i, j)| ((i % c) == j) as u8 as f64);
    let (g1, g2) = ce_grad(&w1, &w2, &x, &y);
    let fd1 = fd_grad(w1.as_slice().unwrap(), |p| {
        cross_entropy(
            ArrayView2::from_shape((d, h), p).unwrap(),
            w2.view(),
            x.view(),
            y.view(),
        )
    });
    let fd2 = fd_grad(w2.as_slice().unwrap(), |p| {
        cross_entropy(
            w1.view(),
            ArrayView2::from_shape((h, c), p).unwrap(),
            x.view(),
            y.view(),
        )
    });
    assert_close(g1.as_slice().unwrap(), &fd1, 1e-7, "d/dw1");
    assert_close(g2.as_slice().unwrap(), &fd2, 1e-7, "d/dw2");
}

#[grad(lse_grad)]
fn lse(x: ArrayView1<f64>) -> f64 {
    logsumexp(x)
}

#[test]
fn the_gradient_of_logsumexp_is_softmax() {
    let x = array![1.0, -2.0, 700.0, 699.5];
    let g = lse_grad(&x);
    let m = 700.0;
    let s: f64 = x.iter().map(|v| (v - m).exp()).sum();
    let want: Vec<f64> = x.iter().map(|v| (v - m).exp() / s).collect();
    assert_close(g.as_slice().unwrap(), &want, 1e-14, "softmax");
}

// ---- vmap along other axes ----------------------------------------------------

#[vmap(column_norms, in_axes = 1)]
fn norm2(v: ArrayView1<f64>) -> f64 {
    (v * v).sum()
}

#[test]
fn vmap_along_axis_one_maps_over_columns() {
    let mut rng = StdRng::seed_from_u64(6);
    let x = random2(&mut rng, 4, 7);
    let got = column_norms(&x);
    let want: Vec<f64> = (0..7)
        .map(|j| x.column(j).iter().map(|v| v * v).sum())
        .collect();
    assert_close(got.as_slice().unwrap(), &want, 1e-14, "column norms");
}

// ---- Jacobians and Hessians -----------------------------------------------------

// Stacked transforms compose (the upper one transforms the lower one's
// result), so the forward and reverse Jacobians come from two definitions.
#[jacfwd(jac_fwd)]
fn layer_out(w: ArrayView2<f64>, x: ArrayView1<f64>) -> Array1<f64> {
    w.dot(&x).tanh()
}

#[jacrev(jac_rev)]
fn layer_out_rev(w: ArrayView2<f64>, x: ArrayView1<f64>) -> Array1<f64> {
    w.dot(&x).tanh()
}

#[test]
fn jacfwd_equals_jacrev_and_central_differences() {
    let mut rng = StdRng::seed_from_u64(7);
    let (w, x) = (random2(&mut rng, 3, 4), random1(&mut rng, 4));
    let jf: Array3<f64> = jac_fwd(&w, &x);
    let jr: Array3<f64> = jac_rev(&w, &x);
    assert_eq!(jf.dim(), (3, 3, 4));
    assert_close(
        jf.as_slice().unwrap(),
        jr.as_slice().unwrap(),
        1e-13,
        "jacfwd vs jacrev",
    );
    for i in 0..3 {
        let fd = fd_grad(w.as_slice().unwrap(), |p| {
            layer_out(ArrayView2::from_shape((3, 4), p).unwrap(), x.view())[i]
        });
        assert_close(
            jf.slice(s![i, .., ..]).to_owned().as_slice().unwrap(),
            &fd,
            1e-7,
            "row of the Jacobian",
        );
    }
}

#[hessian(poly_hessian)]
fn poly(x: ArrayView1<f64>) -> f64 {
    let s = x.sum();
    (x * x * x * x).sum() + s * s + x.dot(&x) * s
}

// jacfwd over grad (stacked: the upper attribute transforms the lower one's
// result) is the Hessian again, by another route.
#[jacfwd(poly_jacfwd_grad)]
#[grad(poly_grad)]
fn poly_again(x: ArrayView1<f64>) -> f64 {
    let s = x.sum();
    (x * x * x * x).sum() + s * s + x.dot(&x) * s
}

#[test]
fn the_hessian_is_symmetric_and_matches_differences_of_the_gradient() {
    let x = array![-0.7, 1.3, 0.4];
    let h = poly_hessian(&x);
    assert_eq!(h.dim(), (3, 3));
    for i in 0..3 {
        for j in 0..3 {
            assert!((h[[i, j]] - h[[j, i]]).abs() <= 1e-12 * (1.0 + h[[i, j]].abs()));
        }
        let fd = fd_grad(x.as_slice().unwrap(), |p| poly_grad(ArrayView1::from(p))[i]);
        assert_close(
            h.row(i).to_owned().as_slice().unwrap(),
            &fd,
            1e-6,
            "Hessian row",
        );
    }
    // The closed form: 12 x_i^2 δ_ij + 2 + 2 (x_i + x_j) + 2 s δ_ij.
    let s: f64 = x.sum();
    let want = Array2::from_shape_fn((3, 3), |(i, j)| {
        let d = (i == j) as u8 as f64;
        12.0 * x[i] * x[i] * d + 2.0 + 2.0 * (x[i] + x[j]) + 2.0 * s * d
    });
    assert_close(
        h.as_slice().unwrap(),
        want.as_slice().unwrap(),
        1e-12,
        "closed form",
    );
    let h2 = poly_jacfwd_grad(&x);
    assert_close(
        h.as_slice().unwrap(),
        h2.as_slice().unwrap(),
        1e-13,
        "hessian vs jacfwd(grad)",
    );
}

/// Issue 27: `.clone()`, `.to_owned()`, `.view()` and `.into_owned()` in a
/// body are the value itself (values are immutable), as in plain Rust.
#[grad(copies_grad)]
fn copies(x: ArrayView2<f64>, w: ArrayView1<f64>) -> f64 {
    let a = x.to_owned();
    let b = a.view().dot(&w.clone());
    let c = b.clone().into_owned();
    (c.tanh() * a.sum_axis(Axis(1))).sum()
}

fn copies_plain(x: &Array2<f64>, w: &Array1<f64>) -> f64 {
    let b = x.dot(w);
    (0..x.nrows()).map(|i| b[i].tanh() * x.row(i).sum()).sum()
}

#[test]
fn copies_and_views_in_a_body_are_the_value_itself() {
    let mut rng = StdRng::seed_from_u64(27);
    let (x, w) = (random2(&mut rng, 4, 3), random1(&mut rng, 3));
    let want = copies_plain(&x, &w);
    assert!((copies(x.view(), w.view()) - want).abs() <= 1e-14);
    let (dx, dw) = copies_grad(x.view(), w.view());
    let h = 1e-6;
    for j in 0..3 {
        let (mut up, mut down) = (w.clone(), w.clone());
        up[j] += h;
        down[j] -= h;
        let fd = (copies_plain(&x, &up) - copies_plain(&x, &down)) / (2.0 * h);
        assert!((dw[j] - fd).abs() <= 1e-7, "dw[{j}] {} vs {fd}", dw[j]);
    }
    let (mut up, mut down) = (x.clone(), x.clone());
    up[[1, 2]] += h;
    down[[1, 2]] -= h;
    let fd = (copies_plain(&up, &w) - copies_plain(&down, &w)) / (2.0 * h);
    assert!((dx[[1, 2]] - fd).abs() <= 1e-7, "{} vs {fd}", dx[[1, 2]]);
}

/// Names a JAX or ndarray user types (issue 23): `clip`, `logaddexp`,
/// `outer`, `x.row(i)`, `x.column(j)`, `var`, `std` and their axis forms.
#[jit]
fn second_day(
    x: ArrayView2<f64>,
    a: ArrayView1<f64>,
    b: ArrayView1<f64>,
    i: usize,
) -> (
    Array2<f64>,
    Array1<f64>,
    Array2<f64>,
    Array1<f64>,
    Array1<f64>,
    f64,
    f64,
    Array1<f64>,
    Array1<f64>,
) {
    (
        clip(x, -0.5, 0.75),
        logaddexp(a, b),
        outer(a, b),
        x.row(i),
        x.column(1),
        x.var(0.0),
        x.std(1.0),
        x.var_axis(Axis(0), 1.0),
        x.std_axis(Axis(1), 0.0),
    )
}

#[grad(second_day_grad, wrt = (x, a))]
fn second_day_loss(x: ArrayView2<f64>, a: ArrayView1<f64>, b: ArrayView1<f64>) -> f64 {
    sum(clip(x, -0.5, 0.75) * x)
        + sum(logaddexp(a, b))
        + sum(outer(a, b).tanh())
        + x.std(1.0)
        + x.var_axis(Axis(1), 0.0).sum()
        + x.row(1).sum() * x.column(2).sum()
}

fn second_day_ref(x: &Array2<f64>, a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    let lae = |p: f64, q: f64| p.max(q) + (-(p - q).abs()).exp().ln_1p();
    let n = x.len() as f64;
    let mean = x.sum() / n;
    let std = (x.mapv(|v| (v - mean).powi(2)).sum() / (n - 1.0)).sqrt();
    let var_rows: f64 = x
        .rows()
        .into_iter()
        .map(|r| {
            let m = r.sum() / r.len() as f64;
            r.mapv(|v| (v - m).powi(2)).sum() / r.len() as f64
        })
        .sum();
    x.mapv(|v| v.clamp(-0.5, 0.75) * v).sum()
        + a.iter().zip(b).map(|(p, q)| lae(*p, *q)).sum::<f64>()
        + a.iter()
            .map(|p| b.iter().map(|q| (p * q).tanh()).sum::<f64>())
            .sum::<f64>()
        + std
        + var_rows
        + x.row(1).sum() * x.column(2).sum()
}

#[test]
fn second_day_names_match_ndarray_and_numpy() {
    let x = array![[0.9, -0.7, 0.2], [0.1, 0.6, -0.3], [1.4, -0.05, 0.5]];
    let a = array![0.3, -1.0, 2.0];
    let b = array![0.3, 4.0, -1.5];
    let (c, l, o, r, col, var, std, var0, std1) = second_day(x.view(), a.view(), b.view(), 2);
    assert_eq!(c, x.mapv(|v| v.clamp(-0.5, 0.75)));
    for k in 0..3 {
        let (p, q) = (a[k], b[k]);
        let want = p.max(q) + (-(p - q).abs()).exp().ln_1p();
        assert!((l[k] - want).abs() < 1e-15, "logaddexp {k}");
    }
    for ((i, j), v) in o.indexed_iter() {
        assert_eq!(*v, a[i] * b[j]);
    }
    assert_eq!(r, x.row(2));
    assert_eq!(col, x.column(1));
    assert!((var - x.var(0.0)).abs() < 1e-15);
    assert!((std - x.std(1.0)).abs() < 1e-15);
    assert_close(
        var0.as_slice().unwrap(),
        x.var_axis(Axis(0), 1.0).as_slice().unwrap(),
        1e-14,
        "var_axis",
    );
    assert_close(
        std1.as_slice().unwrap(),
        x.std_axis(Axis(1), 0.0).as_slice().unwrap(),
        1e-14,
        "std_axis",
    );
    // logaddexp at infinities and ties, as JAX's.
    let inf = f64::INFINITY;
    let e = second_day(
        x.view(),
        array![-inf, inf, 0.0].view(),
        array![-inf, inf, -inf].view(),
        0,
    )
    .1;
    assert_eq!(e.to_vec(), vec![-inf, inf, 0.0]);

    let want = second_day_ref(&x, &a, &b);
    assert!((second_day_loss(x.view(), a.view(), b.view()) - want).abs() < 1e-13);
    let (gx, ga) = second_day_grad(x.view(), a.view(), b.view());
    let fx = fd_grad(x.as_slice().unwrap(), |p| {
        second_day_ref(&Array2::from_shape_vec((3, 3), p.to_vec()).unwrap(), &a, &b)
    });
    assert_close(gx.as_slice().unwrap(), &fx, 1e-6, "d/dx");
    let fa = fd_grad(a.as_slice().unwrap(), |p| {
        second_day_ref(&x, &Array1::from(p.to_vec()), &b)
    });
    assert_close(ga.as_slice().unwrap(), &fa, 1e-6, "d/da");
    // At a tie the slope is ½ to each side, as JAX's logaddexp.
    assert!(
        (ga[0]
            - (0.5
                + b.iter()
                    .map(|q| q * (1.0 - (0.3 * q).tanh().powi(2)))
                    .sum::<f64>()))
        .abs()
            < 1e-12
    );
}

/// Reshapes, as ndarray and JAX spell them: a static reshape, one with a
/// run-time axis kept and a static one split, `-1` inferred, `flatten`.
#[grad(reshaped_grad, wrt = x)]
fn reshaped(x: ArrayView2<f64>, w: ArrayView1<f64>) -> f64 {
    // x: [n, 6]
    let split = x.into_shape_with_order((x.nrows(), 2, 3)).unwrap();
    let back = split.sum_axis(Axis(1)).reshape((-1, 3));
    let flat = back
        .sum_axis(Axis(0))
        .into_shape_with_order((1, 3))
        .unwrap()
        .flatten();
    (flat.tanh() * w).sum() + (split.sum_axis(Axis(2)) * x.slice(s![.., ..2])).sum()
}

#[jit]
fn static_reshapes(m: &[f64; 12]) -> (Array2<f64>, Array3<f64>, Array1<f64>) {
    (
        m.reshape((3, 4)),
        m.to_shape((2, 3, 2)).unwrap(),
        m.reshape((3, -1)).ravel(),
    )
}

#[test]
fn reshapes_match_ndarray_with_their_gradient() {
    let m: Vec<f64> = (0..12).map(|k| k as f64 * 0.5).collect();
    let arr: [f64; 12] = m.clone().try_into().unwrap();
    let (a, b, c) = static_reshapes(&arr);
    let v = Array1::from(m.clone());
    assert_eq!(a, v.clone().into_shape_with_order((3, 4)).unwrap());
    assert_eq!(b, v.clone().into_shape_with_order((2, 3, 2)).unwrap());
    assert_eq!(c, v);

    let x = Array2::from_shape_fn((3, 6), |(i, j)| (i as f64 - 1.0) * 0.4 + j as f64 * 0.1);
    let w = Array1::from_shape_fn(3, |k| (k as f64 * 0.3).cos());
    let reference = |x: &Array2<f64>| {
        let split = x.clone().into_shape_with_order((3, 2, 3)).unwrap();
        let back = split.sum_axis(Axis(1));
        let flat: Vec<f64> = back.sum_axis(Axis(0)).iter().copied().collect();
        let s1: f64 = flat.iter().zip(w.iter()).map(|(f, w)| f.tanh() * w).sum();
        let s2 = (split.sum_axis(Axis(2)) * x.slice(s![.., ..2])).sum();
        s1 + s2
    };
    assert!((reshaped(x.view(), w.view()) - reference(&x)).abs() < 1e-14);
    let g = reshaped_grad(x.view(), w.view());
    let fd = fd_grad(x.as_slice().unwrap(), |p| {
        reference(&Array2::from_shape_vec((3, 6), p.to_vec()).unwrap())
    });
    assert_close(g.as_slice().unwrap(), &fd, 1e-7, "d reshaped");
    // The reshape fixed x's second axis at 6: another width is an error at
    // the call naming the argument.
    let narrow = Array2::<f64>::zeros((3, 5));
    let msg = crate::panic_message(|| {
        reshaped(narrow.view(), w.view());
    });
    assert!(msg.contains("`x`"), "{msg}");
}

/// `jnp.meshgrid` (indexing "xy"): a field sampled on a grid, with its
/// gradient with respect to the grid's coordinates.
#[grad(grid_energy_grad, wrt = (x, y))]
fn grid_energy(x: ArrayView1<f64>, y: ArrayView1<f64>) -> f64 {
    let (xx, yy) = meshgrid(&x, &y);
    (-(&xx * &xx) - 2.0 * &yy * &yy + &xx * &yy).exp().sum()
}

#[test]
fn meshgrid_as_numpy() {
    let x = array![-1.0, 0.0, 0.5, 2.0];
    let y = array![0.3, -0.7];
    let field = |x: &[f64], y: &[f64]| {
        let mut s = 0.0;
        for yi in y {
            for xj in x {
                s += (-(xj * xj) - 2.0 * yi * yi + xj * yi).exp();
            }
        }
        s
    };
    let want = field(x.as_slice().unwrap(), y.as_slice().unwrap());
    assert!((grid_energy(x.view(), y.view()) - want).abs() < 1e-14);
    let (gx, gy) = grid_energy_grad(x.view(), y.view());
    let fx = fd_grad(x.as_slice().unwrap(), |p| field(p, y.as_slice().unwrap()));
    let fy = fd_grad(y.as_slice().unwrap(), |p| field(x.as_slice().unwrap(), p));
    assert_close(gx.as_slice().unwrap(), &fx, 1e-7, "d/dx");
    assert_close(gy.as_slice().unwrap(), &fy, 1e-7, "d/dy");
}

/// `Axis(-1)`, JAX's `axis=-1`: the last axis, for reductions, softmax,
/// argmax, cumulative sums, concatenation, stacking and roll.
#[jit]
fn last_axes(
    x: ArrayView2<f64>,
) -> (
    Array1<f64>,
    Array2<f64>,
    Array1<i64>,
    Array2<f64>,
    Array2<f64>,
    Array3<f64>,
    Array2<f64>,
) {
    (
        x.sum_axis(Axis(-1)),
        softmax(x, Axis(-1)),
        argmax(x, Axis(-1)),
        cumsum(x, Axis(-2)),
        concatenate(Axis(-1), &[x.view(), x.view()]),
        stack![Axis(-1), x, x],
        roll(x, 1, Axis(-1)),
    )
}

#[test]
fn negative_axes_count_from_the_end() {
    let x = array![[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]];
    let (s, sm, am, cs, cat, st, r) = last_axes(x.view());
    assert_eq!(s, x.sum_axis(Axis(1)));
    for i in 0..2 {
        let row = x.row(i);
        let m = row.fold(f64::NEG_INFINITY, |a, b| a.max(*b));
        let z: f64 = row.iter().map(|v| (v - m).exp()).sum();
        for j in 0..3 {
            assert!((sm[[i, j]] - (row[j] - m).exp() / z).abs() < 1e-15);
            assert_eq!(r[[i, j]], x[[i, (j + 2) % 3]]);
        }
        assert_eq!(am[i], [2, 0][i]);
    }
    assert_eq!(cs, array![[0.5, -1.0, 2.0], [2.0, -0.75, 1.5]]);
    assert_eq!(
        cat,
        oxla::ndarray::concatenate(Axis(1), &[x.view(), x.view()]).unwrap()
    );
    assert_eq!(
        st,
        oxla::ndarray::stack(Axis(2), &[x.view(), x.view()]).unwrap()
    );
}

/// Rust's iterator reductions on arrays: `x.iter().sum::<f64>()` and
/// `.product()` are the array's.
#[grad(iter_sums_grad)]
fn iter_sums(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() + x.iter().product::<f64>()
}

#[test]
fn iterator_sums_are_array_sums() {
    let x = [0.5, -2.0, 3.0];
    assert_eq!(
        iter_sums(&x),
        x.iter().sum::<f64>() + x.iter().product::<f64>()
    );
    let g = iter_sums_grad(&x);
    let want = [1.0 + (-2.0 * 3.0), 1.0 + 0.5 * 3.0, 1.0 + 0.5 * -2.0];
    assert_close(&g, &want, 1e-15, "d iter_sums");
}
