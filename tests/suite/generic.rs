//! Functions generic over their float type (`fn f<T: oxla::Float>(x: T) -> T`):
//! both instances against plain Rust, gradients against central finite
//! differences (f64) and the f32 gradient against the f64 one; array
//! functions on the kernel path; vmap; a generic helper.

use oxla::ndarray::{array, Array1, Array2, ArrayView1, ArrayView2};
use oxla::Float;

/// Central finite difference of `f` at `x` (f64).
fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-6;
    (f(x + h) - f(x - h)) / (2.0 * h)
}

/// The f32 result against the f64 one, within f32's precision.
fn close32(a: f32, b: f64, what: &str) {
    assert!(
        (a as f64 - b).abs() <= 1e-5 * (1.0 + b.abs()),
        "{what}: f32 {a} vs f64 {b}"
    );
}

#[oxla::transforms(
    grad(softplus_grad),
    value_and_grad(softplus_vg),
    jvp(softplus_jvp),
    vjp(softplus_vjp)
)]
#[oxla::jit]
fn softplus<T: oxla::Float>(x: T) -> T {
    (T::one() + x.exp()).ln()
}

#[test]
fn a_scalar_function_runs_at_f32_and_f64() {
    for x in [-3.0f64, -0.4, 0.0, 1.5, 7.0] {
        let want = (1.0 + x.exp()).ln();
        assert!((softplus(x) - want).abs() < 1e-14, "{x}");
        close32(softplus(x as f32), want, "softplus");
        let g64: f64 = softplus_grad(x);
        let fd = central(softplus, x);
        assert!((g64 - fd).abs() < 1e-7, "{g64} vs {fd}");
        let g32: f32 = softplus_grad(x as f32);
        close32(g32, g64, "grad");
        let (v, g) = softplus_vg(x as f32);
        close32(v, want, "value_and_grad value");
        close32(g, g64, "value_and_grad grad");
        // JVP against VJP.
        let (_, t) = softplus_jvp(x, 1.0);
        let (_, ct) = softplus_vjp(x, 1.0);
        assert!((t - ct).abs() < 1e-14 && (t - g64).abs() < 1e-14);
    }
}

// Literals, `T::from`, `T::zero()`, casts and constants take the instance's type.
const SCALE: f64 = 0.25;

#[oxla::hessian(poly_hess, wrt = x, of = poly)]
#[oxla::grad(poly_grad, wrt = x)]
fn poly<T>(x: T, n: i32) -> T
where
    T: Float,
{
    let a = 2.0 * x * x + T::from(0.5) * x - T::zero();
    let b = (n as T) * x.powi(3) * SCALE;
    a + b + T::from(3).unwrap() + x.sin() * T::PI()
}

fn poly_plain(x: f64, n: i32) -> f64 {
    2.0 * x * x + 0.5 * x + n as f64 * x.powi(3) * SCALE + 3.0 + x.sin() * std::f64::consts::PI
}

#[test]
fn literals_helpers_casts_and_constants_take_the_instance_type() {
    for x in [-1.3f64, 0.2, 2.0] {
        let want = poly_plain(x, 3);
        assert!((poly(x, 3) - want).abs() < 1e-12);
        close32(poly(x as f32, 3), want, "poly");
        let g: f64 = poly_grad(x, 3);
        let fd = central(|x| poly_plain(x, 3), x);
        assert!((g - fd).abs() < 1e-6, "{g} vs {fd}");
        close32(poly_grad(x as f32, 3), g, "poly_grad");
        let h: f64 = poly_hess(x, 3);
        let fd2 = central(|x| poly_grad(x, 3), x);
        assert!((h - fd2).abs() < 1e-5, "{h} vs {fd2}");
    }
}

// An array function: slices on the kernel path.
#[oxla::grad(sq_grad)]
#[oxla::jit]
fn weighted_sq<T: oxla::Float>(w: &[T], x: &[T]) -> T {
    let r = w * x - 1.0;
    sum(r * r) / T::from(2.0)
}

fn weighted_sq_plain(w: &[f64], x: &[f64]) -> f64 {
    w.iter()
        .zip(x)
        .map(|(w, x)| (w * x - 1.0).powi(2))
        .sum::<f64>()
        / 2.0
}

#[test]
fn a_slice_function_and_its_gradient_at_both_types() {
    let w = [0.5f64, -1.0, 2.0, 0.25];
    let x = [1.0f64, 0.3, -0.7, 4.0];
    let (w32, x32): (Vec<f32>, Vec<f32>) = (
        w.iter().map(|&v| v as f32).collect(),
        x.iter().map(|&v| v as f32).collect(),
    );
    let want = weighted_sq_plain(&w, &x);
    assert!((weighted_sq(&w, &x) - want).abs() < 1e-12);
    close32(weighted_sq(&w32, &x32), want, "value");
    let (gw, gx): (Vec<f64>, Vec<f64>) = sq_grad(&w, &x);
    let (gw32, gx32): (Vec<f32>, Vec<f32>) = sq_grad(&w32, &x32);
    for i in 0..w.len() {
        let fd = central(
            |v| {
                let mut w = w;
                w[i] = v;
                weighted_sq_plain(&w, &x)
            },
            w[i],
        );
        assert!((gw[i] - fd).abs() < 1e-6, "{} vs {fd}", gw[i]);
        close32(gw32[i], gw[i], "gw");
        close32(gx32[i], gx[i], "gx");
    }
}

// ndarray views in, an owned array out; vmap over rows.
#[oxla::vmap(row_scores, in_axes = (None, 0))]
#[oxla::jit]
fn score<T: oxla::Float>(w: ArrayView1<T>, x: ArrayView1<T>) -> T {
    (&w * &x).sum().tanh()
}

#[oxla::jacrev(affine_jac, wrt = x)]
fn affine<T: oxla::Float>(a: ArrayView2<T>, x: ArrayView1<T>) -> Array1<T> {
    a.dot(&x).exp()
}

#[test]
fn views_vmap_and_jacobians_at_both_types() {
    let w = array![0.3f64, -0.2, 0.5];
    let xs: Array2<f64> = array![[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]];
    let rows: Array1<f64> = row_scores(w.view(), xs.view());
    let rows32: Array1<f32> = row_scores(w.mapv(|v| v as f32).view(), xs.mapv(|v| v as f32).view());
    for i in 0..2 {
        let want = (&w * &xs.row(i)).sum().tanh();
        assert!((rows[i] - want).abs() < 1e-12);
        assert!((score(w.view(), xs.row(i)) - want).abs() < 1e-12);
        close32(rows32[i], want, "vmap");
    }
    let a = array![[0.1f64, 0.2, -0.3], [0.4, -0.5, 0.6]];
    let x = array![0.7f64, -0.1, 0.2];
    let j: Array2<f64> = affine_jac(a.view(), x.view());
    let j32: Array2<f32> = affine_jac(a.mapv(|v| v as f32).view(), x.mapv(|v| v as f32).view());
    let y = affine(a.view(), x.view());
    for r in 0..2 {
        for c in 0..3 {
            // d exp(a·x)_r / dx_c = exp(a·x)_r a_rc.
            let want = y[r] * a[[r, c]];
            assert!((j[[r, c]] - want).abs() < 1e-12);
            close32(j32[[r, c]], j[[r, c]], "jacrev");
        }
    }
}

// A generic helper, inlined at each caller's type.
#[oxla::func]
fn logistic<T: oxla::Float>(x: T) -> T {
    1.0 / (1.0 + (-x).exp())
}

#[oxla::grad(swish_grad)]
fn swish<T: oxla::Float>(x: T) -> T {
    x * logistic(x)
}

#[oxla::grad(swish64_grad)]
fn swish64(x: f64) -> f64 {
    x * logistic(x)
}

#[test]
fn a_generic_helper_takes_its_callers_type() {
    for x in [-2.0f64, 0.1, 3.0] {
        let s = 1.0 / (1.0 + (-x).exp());
        assert!((swish(x) - x * s).abs() < 1e-14);
        assert!((swish64(x) - x * s).abs() < 1e-14);
        close32(swish(x as f32), x * s, "swish");
        close32(logistic(x as f32), s, "helper called from Rust");
        let g: f64 = swish_grad(x);
        assert!((g - central(|x| x / (1.0 + (-x).exp()), x)).abs() < 1e-7);
        assert!((swish64_grad(x) - g).abs() < 1e-15);
        close32(swish_grad(x as f32), g, "swish_grad");
    }
}

// References to arrays, fixed-size arrays, a tuple result with an integer.
#[oxla::vjp(mixed_vjp)]
#[oxla::jit]
fn mixed_kinds<T: oxla::Float>(a: &Array2<T>, p: [T; 3], q: &[[T; 3]; 2]) -> (T, Array1<T>, i64) {
    let s = a.sum() * p[0] + q[1][2] * p[2];
    let rows = a.sum_axis(oxla::ndarray::Axis(1)) * p[1];
    (s, rows, argmax(a))
}

#[test]
fn references_fixed_arrays_and_tuples_at_both_types() {
    let a = array![[1.0f64, -2.0, 0.5], [3.0, 0.25, -1.0]];
    let p = [0.5f64, 2.0, -1.5];
    let q = [[0.0f64, 1.0, 2.0], [3.0, 4.0, 5.0]];
    let (s, rows, i) = mixed_kinds(&a, p, &q);
    let want_s = a.sum() * p[0] + q[1][2] * p[2];
    assert!((s - want_s).abs() < 1e-12);
    assert_eq!(i, 3);
    for r in 0..2 {
        assert!((rows[r] - a.row(r).sum() * p[1]).abs() < 1e-12);
    }
    let a32 = a.mapv(|v| v as f32);
    let p32 = p.map(|v| v as f32);
    let q32 = q.map(|r| r.map(|v| v as f32));
    let (s32, rows32, i32_) = mixed_kinds(&a32, p32, &q32);
    close32(s32, want_s, "s");
    close32(rows32[1], rows[1], "rows");
    assert_eq!(i32_, 3);
    // The VJP of the scalar result with respect to `p`: (Σa, 0, q[1][2]),
    // at both types.
    let ct_rows = Array1::<f64>::zeros(2);
    let out = mixed_vjp(&a, &p, &q, 1.0, ct_rows.view(), 0);
    let ct_rows32 = Array1::<f32>::zeros(2);
    let out32 = mixed_vjp(&a32, &p32, &q32, 1.0, ct_rows32.view(), 0);
    let (dp, dp32) = (&out.4, &out32.4);
    let want = [a.sum(), 0.0, q[1][2]];
    for k in 0..3 {
        assert!((dp[k] - want[k]).abs() < 1e-12, "{dp:?}");
        close32(dp32[k], dp[k], "vjp");
    }
}

// An associated function of an `impl` block.
struct Model;

impl Model {
    #[oxla::grad(energy_grad)]
    fn energy<T: oxla::Float>(x: ArrayView1<T>) -> T {
        (&x * &x).sum() * 0.5
    }
}

#[test]
fn an_associated_generic_function() {
    let x = array![1.0f64, -2.0, 3.0];
    assert!((Model::energy(x.view()) - 7.0).abs() < 1e-12);
    let g: Array1<f64> = Model::energy_grad(x.view());
    assert_eq!(g, x);
    let x32 = x.mapv(|v| v as f32);
    let g32: Array1<f32> = Model::energy_grad(x32.view());
    assert_eq!(g32, x32);
}

// `name_into`: array results written into the caller's buffers.
#[oxla::jvp(scaled_jvp)]
#[oxla::jit]
fn scaled<T>(x: ArrayView1<T>, k: T) -> (Array1<T>, T)
where
    T: oxla::Float,
{
    let y = &x * k;
    (y.exp(), y.sum())
}

#[oxla::jit]
fn halves<T: oxla::Float>(x: &[T]) -> Vec<T> {
    x * 0.5
}

#[oxla::grad(halves_sum_grad)]
fn halves_sum<T: oxla::Float>(x: ArrayView1<T>) -> T {
    (&x * 0.5).sum()
}

#[test]
fn into_siblings_write_the_callers_buffers_at_both_types() {
    let x = array![0.5f64, -1.0, 2.0];
    let (y, s) = scaled(x.view(), 0.5);
    let mut out = Array1::<f64>::zeros(3);
    let s2 = scaled_into(x.view(), 0.5, &mut out);
    assert_eq!(out, y);
    assert_eq!(s2, s);
    let x32 = x.mapv(|v| v as f32);
    let mut out32 = Array1::<f32>::zeros(3);
    let s32 = scaled_into(x32.view(), 0.5f32, &mut out32);
    close32(s32, s, "scaled_into");
    for i in 0..3 {
        close32(out32[i], y[i], "scaled_into out");
    }
    let mut buf = [0.0f32; 3];
    halves_into(&[2.0f32, 4.0, -6.0], &mut buf);
    assert_eq!(buf, [1.0, 2.0, -3.0]);
    let mut g = Array1::<f64>::zeros(3);
    halves_sum_grad_into(x.view(), &mut g);
    assert_eq!(g, array![0.5, 0.5, 0.5]);
    // A transform's `_into`: two destinations, two scalar results.
    let t = array![1.0f64, 0.0, -1.0];
    let (y, s, ty, ts) = scaled_jvp(x.view(), 0.5, t.view(), 0.25);
    let (mut o0, mut o2) = (Array1::<f64>::zeros(3), Array1::<f64>::zeros(3));
    let (s2, ts2) = scaled_jvp_into(x.view(), 0.5, t.view(), 0.25, &mut o0, &mut o2);
    assert_eq!((o0, o2, s2, ts2), (y, ty.clone(), s, ts));
    let t32 = t.mapv(|v| v as f32);
    let (mut p0, mut p2) = (Array1::<f32>::zeros(3), Array1::<f32>::zeros(3));
    let (_, ts32) = scaled_jvp_into(x32.view(), 0.5, t32.view(), 0.25, &mut p0, &mut p2);
    close32(ts32, ts, "jvp_into tangent");
    for i in 0..3 {
        close32(p2[i], ty[i], "jvp_into tangent out");
    }
}
