//! Helpers (`#[oxla::func]`) called from annotated functions in the same
//! crate: in the same module and in another one, differentiated through.

mod common_fd {
    /// Central finite difference of `f` at `x`.
    pub fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
        let h = 1e-6;
        (f(x + h) - f(x - h)) / (2.0 * h)
    }
}

#[oxla::func]
fn smooth_relu(x: f64) -> f64 {
    (x.exp() + 1.0).ln()
}

mod act {
    #[oxla::func]
    pub fn swish(x: f64) -> f64 {
        x * logistic(x)
    }

    #[oxla::func]
    pub fn logistic(x: f64) -> f64 {
        1.0 / (1.0 + (-x).exp())
    }
}

#[oxla::grad(df)]
fn f(x: f64, y: f64) -> f64 {
    smooth_relu(x * y) + act::swish(x) * y
}

#[test]
fn grad_through_helpers_matches_central_differences() {
    for &(x, y) in &[(0.3, -1.2), (-2.0, 0.7), (1.5, 2.5)] {
        let (dx, dy) = df(x, y);
        let fx = common_fd::central(|x| f(x, y), x);
        let fy = common_fd::central(|y| f(x, y), y);
        assert!((dx - fx).abs() < 1e-6, "{dx} vs {fx}");
        assert!((dy - fy).abs() < 1e-6, "{dy} vs {fy}");
    }
}

// A closure bound by `let`, called twice, capturing a value that is
// shadowed afterwards (Rust's capture: the earlier value).
#[oxla::grad(dg)]
fn g(x: f64, y: f64) -> f64 {
    let k = 3.0;
    let bump = |v: f64| k * v * v + smooth_relu(v);
    let k = 100.0;
    bump(x) + bump(x * y) + k
}

#[test]
fn closures_are_inlined_and_capture_as_rust_does() {
    let s = |v: f64| 1.0 / (1.0 + (-v).exp());
    for &(x, y) in &[(0.4, -0.9), (-1.3, 2.0)] {
        // g is Rust's value of the same body.
        let bump = |v: f64| 3.0 * v * v + (v.exp() + 1.0).ln();
        assert!((g(x, y) - (bump(x) + bump(x * y) + 100.0)).abs() < 1e-12);
        let (dx, dy) = dg(x, y);
        let d = |v: f64| 6.0 * v + s(v);
        assert!((dx - (d(x) + d(x * y) * y)).abs() < 1e-12, "{dx}");
        assert!((dy - d(x * y) * x).abs() < 1e-12, "{dy}");
        let fd = common_fd::central(|x| g(x, y), x);
        assert!((dx - fd).abs() < 1e-6, "{dx} vs {fd}");
    }
}

use oxla::ndarray::{Array1, ArrayView1};

#[oxla::func]
fn cubes(v: ArrayView1<f64>) -> Array1<f64> {
    &v * &v * &v
}

#[oxla::hessian(h, wrt = x)]
fn energy(x: ArrayView1<f64>) -> f64 {
    cubes(x).sum() + act::swish(x.sum())
}

#[test]
fn hessian_through_an_array_helper() {
    let x = oxla::ndarray::array![0.3, -0.7, 1.1];
    let hx = h(&x);
    let t = x.sum();
    // d²/dx² swish(t) = s'(t)(2 + t(1 - 2 s(t))), with s = logistic.
    let s = 1.0 / (1.0 + (-t).exp());
    let sw2 = s * (1.0 - s) * (2.0 + t * (1.0 - 2.0 * s));
    for i in 0..3 {
        for j in 0..3 {
            let want = if i == j { 6.0 * x[i] } else { 0.0 } + sw2;
            assert!(
                (hx[[i, j]] - want).abs() < 1e-10,
                "h[{i},{j}] = {} vs {want}",
                hx[[i, j]]
            );
        }
    }
}

#[oxla::func]
fn gaussian(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

#[oxla::grad(d_gaussian_sum)]
fn gaussian_sum(x: f64) -> f64 {
    gaussian(x) + core::f64::consts::FRAC_PI_2 * x
}

#[test]
fn float_constants_of_std() {
    for &x in &[-1.5f64, 0.0, 0.8] {
        let p = (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
        assert!((gaussian_sum(x) - (p + std::f64::consts::FRAC_PI_2 * x)).abs() < 1e-15);
        let want = -x * p + std::f64::consts::FRAC_PI_2;
        assert!(
            (d_gaussian_sum(x) - want).abs() < 1e-14,
            "{}",
            d_gaussian_sum(x)
        );
    }
}

// Several independent transforms of one definition that calls helpers: the
// expansion is deferred through the helpers' macros with the whole list.
#[oxla::transforms(grad(g_list), value_and_grad(vg_list, wrt = y))]
fn f_list(x: f64, y: f64) -> f64 {
    smooth_relu(x * y) + act::swish(x) * y
}

#[test]
fn a_transform_list_goes_through_helpers() {
    for &(x, y) in &[(0.3, -1.2), (-2.0, 0.7)] {
        assert_eq!(f_list(x, y), f(x, y));
        assert_eq!(g_list(x, y), df(x, y));
        let (v, dy) = vg_list(x, y);
        assert_eq!((v, dy), (f(x, y), df(x, y).1));
    }
}
