//! `powf` end to end: `x.powf(y)` with an array or scalar exponent,
//! `powf(x, y)` and `power(x, y)` with numpy broadcasting, against Rust's
//! `powf`; gradients through `#[grad]` against central differences (array
//! and straight-line scalar paths) and JAX's conventions at x = 0 and y = 0.

use oxla::ndarray::{Array1, Array2, ArrayView1, ArrayView2};

#[oxla::jit]
fn pow_arrays(x: ArrayView1<f64>, y: ArrayView1<f64>) -> Array1<f64> {
    x.powf(y)
}

#[oxla::jit]
fn pow_arrays_f32(x: ArrayView1<f32>, y: ArrayView1<f32>) -> Array1<f32> {
    powf(x, y)
}

#[oxla::jit]
fn cube(x: ArrayView1<f64>) -> Array1<f64> {
    x.powf(3.0)
}

#[oxla::jit]
fn two_to_the(y: ArrayView1<f64>) -> Array1<f64> {
    power(2.0, y)
}

/// A row of exponents broadcast over the rows of `x`.
#[oxla::jit]
fn rows_to_powers(x: ArrayView2<f64>, y: ArrayView1<f64>) -> Array2<f64> {
    power(x, y)
}

#[oxla::grad(loss_grad)]
fn loss(x: ArrayView1<f64>, y: ArrayView1<f64>) -> f64 {
    (x.powf(y) * 0.5 + power(y, 2.0) + x.powf(1.5)).sum()
}

#[oxla::grad(scalar_pow_d)]
fn scalar_pow(x: f64, y: f64) -> f64 {
    x.powf(y) + powf(y, 3.0)
}

#[oxla::grad(pow_at_d)]
fn pow_at(x: ArrayView1<f64>, y: ArrayView1<f64>) -> f64 {
    x.powf(y).sum()
}

fn ulps(got: f64, want: f64) -> f64 {
    if got == want || (got.is_nan() && want.is_nan()) {
        return 0.0;
    }
    (got - want).abs() / (want.abs() * f64::EPSILON)
}

#[test]
fn values_match_rust_powf() {
    let x = Array1::from(vec![0.5, 2.0, 3.0, 10.0, 1e-3, 7.25, 0.0, -2.0, -2.0, 1.0]);
    let y = Array1::from(vec![
        2.5,
        -1.5,
        2.0,
        0.3,
        40.0,
        -3.0,
        0.0,
        3.0,
        0.5,
        f64::NAN,
    ]);
    let got = pow_arrays(x.view(), y.view());
    for i in 0..x.len() {
        let want = x[i].powf(y[i]);
        assert!(
            ulps(got[i], want) <= 1.0,
            "pow({}, {}) = {}, std {want}",
            x[i],
            y[i],
            got[i]
        );
    }
    let (xf, yf) = (x.mapv(|v| v as f32), y.mapv(|v| v as f32));
    let got = pow_arrays_f32(xf.view(), yf.view());
    for i in 0..x.len() {
        let want = xf[i].powf(yf[i]);
        assert!(
            got[i] == want || (got[i].is_nan() && want.is_nan()),
            "f32 pow({}, {}) = {}, std {want}",
            xf[i],
            yf[i],
            got[i]
        );
    }
}

#[test]
fn integer_exponents_of_negative_bases_are_exact() {
    let x = Array1::from(vec![-3.0, -1.5, -0.0, 0.0, 7.0, -1e5]);
    let got = cube(x.view());
    for i in 0..x.len() {
        assert_eq!(
            got[i].to_bits(),
            (x[i] * x[i] * x[i]).to_bits(),
            "{}^3",
            x[i]
        );
    }
    let y = Array1::from(vec![-1074.0, -3.0, 0.0, 10.0, 1023.0, 1024.0]);
    let got = two_to_the(y.view());
    for i in 0..y.len() {
        assert_eq!(got[i], 2f64.powf(y[i]), "2^{}", y[i]);
    }
}

#[test]
fn exponents_broadcast_over_rows() {
    let x = Array2::from_shape_fn((4, 3), |(i, j)| 0.5 + i as f64 + 0.25 * j as f64);
    let y = Array1::from(vec![2.0, -0.5, 3.5]);
    let got = rows_to_powers(x.view(), y.view());
    assert_eq!(got.dim(), (4, 3));
    for ((i, j), v) in got.indexed_iter() {
        assert!(ulps(*v, x[[i, j]].powf(y[j])) <= 1.0, "[{i}, {j}]");
    }
}

/// Central difference of `f` along coordinate `i` of `v`.
fn diff(f: &dyn Fn(&Array1<f64>) -> f64, v: &Array1<f64>, i: usize) -> f64 {
    let h = 1e-6;
    let (mut p, mut m) = (v.clone(), v.clone());
    p[i] += h;
    m[i] -= h;
    (f(&p) - f(&m)) / (2.0 * h)
}

#[test]
fn gradient_matches_central_differences() {
    let x = Array1::from(vec![0.5, 1.25, 2.0, 3.5]);
    let y = Array1::from(vec![-1.5, 0.75, 2.0, 0.3]);
    let (gx, gy) = loss_grad(x.view(), y.view());
    for i in 0..x.len() {
        let fx = |v: &Array1<f64>| loss(v.view(), y.view());
        let fy = |v: &Array1<f64>| loss(x.view(), v.view());
        let (dx, dy) = (diff(&fx, &x, i), diff(&fy, &y, i));
        assert!(
            (gx[i] - dx).abs() <= 1e-7 * (1.0 + dx.abs()),
            "d/dx[{i}]: {} vs {dx}",
            gx[i]
        );
        assert!(
            (gy[i] - dy).abs() <= 1e-7 * (1.0 + dy.abs()),
            "d/dy[{i}]: {} vs {dy}",
            gy[i]
        );
        // And the closed forms.
        let want_x = 0.5 * y[i] * x[i].powf(y[i] - 1.0) + 1.5 * x[i].sqrt();
        let want_y = 0.5 * x[i].ln() * x[i].powf(y[i]) + 2.0 * y[i];
        assert!((gx[i] - want_x).abs() <= 1e-14 * (1.0 + want_x.abs()));
        assert!((gy[i] - want_y).abs() <= 1e-14 * (1.0 + want_y.abs()));
    }
    // The straight-line scalar path.
    for (x, y) in [(0.5, -1.5), (2.0, 2.5), (3.0, 0.25)] {
        let (dx, dy) = scalar_pow_d(x, y);
        let h = 1e-6;
        let fdx = (scalar_pow(x + h, y) - scalar_pow(x - h, y)) / (2.0 * h);
        let fdy = (scalar_pow(x, y + h) - scalar_pow(x, y - h)) / (2.0 * h);
        assert!(
            (dx - fdx).abs() <= 1e-7 * (1.0 + fdx.abs()),
            "scalar d/dx at ({x}, {y})"
        );
        assert!(
            (dy - fdy).abs() <= 1e-7 * (1.0 + fdy.abs()),
            "scalar d/dy at ({x}, {y})"
        );
        assert_eq!(scalar_pow(x, y), x.powf(y) + y.powf(3.0));
    }
}

/// JAX's conventions: ∂/∂x is 0 where y = 0 (also at x = 0, where
/// `0·0^(-1)` would be NaN), and ∂/∂y is 0 at x = 0 (`log` of x replaced
/// by `log 1`). A negative base gives a NaN y-derivative (its non-integer
/// powers are NaN), but an exact x-derivative.
#[test]
fn derivatives_at_zero_follow_jax() {
    let x = Array1::from(vec![0.0, 0.0, 0.0, 2.0, -2.0]);
    let y = Array1::from(vec![0.0, 2.0, -1.0, 0.0, 3.0]);
    let (gx, gy) = pow_at_d(x.view(), y.view());
    assert_eq!(gx[0], 0.0, "d/dx 0^0");
    assert_eq!(gx[1], 0.0, "d/dx 0^2 = 2·0^1");
    assert_eq!(gx[2], f64::NEG_INFINITY, "d/dx 0^-1 = -1·0^-2");
    assert_eq!(gx[3], 0.0, "d/dx 2^0");
    assert_eq!(gx[4], 12.0, "d/dx (-2)^3 = 3·(-2)^2");
    assert_eq!(gy[0], 0.0, "d/dy 0^0");
    assert_eq!(gy[1], 0.0, "d/dy 0^2");
    assert_eq!(gy[2], 0.0, "d/dy 0^-1 (JAX: log 1 · inf = NaN)");
    assert_eq!(gy[3], 2f64.ln(), "d/dy 2^0 = ln 2");
    assert!(gy[4].is_nan(), "d/dy (-2)^3 = ln(-2)·(-8)");
}
