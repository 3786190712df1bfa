//! The composite elementwise functions (abs, square, recip, clamp, ln_1p /
//! log1p, sigmoid, relu, softplus, exp_m1 / expm1) end to end: values against Rust's own
//! functions or a reference formula in f64, derivatives against central
//! differences and closed forms, and the extremes where a naive formula
//! overflows or loses precision (the derivative of sigmoid at -1000 is 0,
//! not NaN; ln_1p(1e-20) is 1e-20, not 0).

use oxla::ndarray::{Array1, ArrayView1};

/// For each function: its values (`#[jit]`) and the gradient of their sum
/// (`#[grad]`), i.e. the elementwise derivative.
macro_rules! elementwise {
    ($values:ident, $sum:ident, $deriv:ident, |$x:ident| $body:expr) => {
        #[oxla::jit]
        fn $values($x: ArrayView1<f64>) -> Array1<f64> {
            $body
        }
        #[oxla::grad($deriv)]
        fn $sum($x: ArrayView1<f64>) -> f64 {
            ($body).sum()
        }
    };
}

elementwise!(abs_v, abs_s, abs_d, |x| x.abs());
elementwise!(square_v, square_s, square_d, |x| x.square());
elementwise!(recip_v, recip_s, recip_d, |x| x.recip());
elementwise!(clamp_v, clamp_s, clamp_d, |x| x.clamp(-0.5, 0.75));
elementwise!(ln1p_v, ln1p_s, ln1p_d, |x| x.ln_1p());
elementwise!(log1p_v, log1p_s, log1p_d, |x| log1p(x));
elementwise!(sigmoid_v, sigmoid_s, sigmoid_d, |x| sigmoid(x));
elementwise!(relu_v, relu_s, relu_d, |x| relu(x));
elementwise!(softplus_v, softplus_s, softplus_d, |x| softplus(x));
elementwise!(expm1_v, expm1_s, expm1_d, |x| x.exp_m1());
elementwise!(expm1f_v, expm1f_s, expm1f_d, |x| expm1(x));

type Case = (
    &'static str,
    fn(ArrayView1<f64>) -> Array1<f64>,
    fn(ArrayView1<f64>) -> f64,
    fn(ArrayView1<f64>) -> Array1<f64>,
    fn(f64) -> f64,
    fn(f64) -> f64,
);

fn sigmoid_ref(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        x.exp() / (1.0 + x.exp())
    }
}

/// σ'(x) = e / (1 + e)² with e = exp(-|x|) (σ(1 - σ) rounds to 0 at 40).
fn sigmoid_deriv_ref(x: f64) -> f64 {
    let e = (-x.abs()).exp();
    e / ((1.0 + e) * (1.0 + e))
}

fn cases() -> Vec<Case> {
    vec![
        (
            "abs",
            abs_v,
            abs_s,
            |x| abs_d(x),
            f64::abs,
            |x| if x == 0.0 { 0.0 } else { x.signum() },
        ),
        (
            "square",
            square_v,
            square_s,
            |x| square_d(x),
            |x| x * x,
            |x| 2.0 * x,
        ),
        (
            "recip",
            recip_v,
            recip_s,
            |x| recip_d(x),
            f64::recip,
            |x| -1.0 / (x * x),
        ),
        (
            "clamp",
            clamp_v,
            clamp_s,
            |x| clamp_d(x),
            |x| x.clamp(-0.5, 0.75),
            |x| if x > -0.5 && x < 0.75 { 1.0 } else { 0.0 },
        ),
        (
            "ln_1p",
            ln1p_v,
            ln1p_s,
            |x| ln1p_d(x),
            f64::ln_1p,
            |x| 1.0 / (1.0 + x),
        ),
        (
            "log1p",
            log1p_v,
            log1p_s,
            |x| log1p_d(x),
            f64::ln_1p,
            |x| 1.0 / (1.0 + x),
        ),
        (
            "sigmoid",
            sigmoid_v,
            sigmoid_s,
            |x| sigmoid_d(x),
            sigmoid_ref,
            sigmoid_deriv_ref,
        ),
        (
            "relu",
            relu_v,
            relu_s,
            |x| relu_d(x),
            |x| if x > 0.0 || x.is_nan() { x } else { 0.0 },
            |x| if x > 0.0 { 1.0 } else { 0.0 },
        ),
        (
            "softplus",
            softplus_v,
            softplus_s,
            |x| softplus_d(x),
            |x| x.max(0.0) + (-x.abs()).exp().ln_1p(),
            sigmoid_ref,
        ),
        // Rust std's `exp_m1` (the platform libm) as the reference.
        (
            "exp_m1",
            expm1_v,
            expm1_s,
            |x| expm1_d(x),
            f64::exp_m1,
            f64::exp,
        ),
        (
            "expm1",
            expm1f_v,
            expm1f_s,
            |x| expm1f_d(x),
            f64::exp_m1,
            f64::exp,
        ),
    ]
}

fn close(got: f64, want: f64, rtol: f64) -> bool {
    got == want
        || (got - want).abs() <= rtol * want.abs().max(1e-300)
        || (got.is_nan() && want.is_nan())
}

#[test]
fn values_and_derivatives_match_references_and_differences() {
    // Away from the kinks of abs, clamp and relu (and recip's pole).
    let xs: Array1<f64> = Array1::from(vec![
        -3.1, -1.7, -0.9, -0.3, -0.05, 0.02, 0.4, 0.66, 1.3, 2.9, 7.5,
    ]);
    for (name, values, sum, deriv, value_ref, deriv_ref) in cases() {
        let v = values(xs.view());
        let d = deriv(xs.view());
        for (i, &x) in xs.iter().enumerate() {
            if value_ref(x).is_nan() {
                // Outside the domain (ln_1p below -1): NaN, as Rust's.
                assert!(v[i].is_nan(), "{name}({x}) = {}, want NaN", v[i]);
                continue;
            }
            assert!(
                close(v[i], value_ref(x), 1e-15),
                "{name}({x}) = {}, want {}",
                v[i],
                value_ref(x)
            );
            assert!(
                close(d[i], deriv_ref(x), 1e-14),
                "{name}'({x}) = {}, want {}",
                d[i],
                deriv_ref(x)
            );
        }
        // The gradient of the sum against central differences of the sum.
        let h = 1e-6;
        let xs: Array1<f64> = xs
            .iter()
            .copied()
            .filter(|x| !value_ref(x - h).is_nan())
            .collect();
        let d = deriv(xs.view());
        for i in 0..xs.len() {
            let (mut p, mut m) = (xs.clone(), xs.clone());
            p[i] += h;
            m[i] -= h;
            let fd = (sum(p.view()) - sum(m.view())) / (2.0 * h);
            assert!(
                (d[i] - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
                "{name}: d/dx[{i}] {} vs difference {fd}",
                d[i]
            );
        }
    }
}

#[test]
fn extremes_stay_finite_and_exact() {
    let xs = Array1::from(vec![
        -1000.0,
        -40.0,
        -1e-20,
        0.0,
        -0.0,
        1e-20,
        40.0,
        1000.0,
        f64::INFINITY,
    ]);
    for (name, values, _, deriv, value_ref, deriv_ref) in cases() {
        if name == "recip" {
            continue; // a pole at 0, tested above away from it
        }
        let v = values(xs.view());
        let d = deriv(xs.view());
        for (i, &x) in xs.iter().enumerate() {
            let want = value_ref(x);
            assert!(
                close(v[i], want, 1e-15),
                "{name}({x}) = {}, want {want}",
                v[i]
            );
            if want.is_nan() {
                continue;
            }
            assert_eq!(
                v[i].is_sign_negative(),
                want.is_sign_negative(),
                "{name}({x}): sign of {}",
                v[i]
            );
            if x.is_finite() && !(matches!(name, "abs" | "relu") && x == 0.0) {
                let dw = deriv_ref(x);
                assert!(close(d[i], dw, 1e-14), "{name}'({x}) = {}, want {dw}", d[i]);
            }
        }
    }
    // At the kinks, JAX's choices: |x|' = 0 and relu' = 0 at 0.
    let zero = Array1::from(vec![0.0]);
    assert_eq!(abs_d(zero.view())[0], 0.0);
    assert_eq!(relu_d(zero.view())[0], 0.0);
    // NaN propagates.
    let nan = Array1::from(vec![f64::NAN]);
    for (name, values, ..) in cases() {
        assert!(values(nan.view())[0].is_nan(), "{name}(NaN)");
    }
}

// Scalar functions take the straight-line Rust path instead of kernels.
#[oxla::grad(scalar_softplus_d)]
fn scalar_softplus(x: f64) -> f64 {
    softplus(x) + x.abs().ln_1p()
}

#[test]
fn scalar_functions_agree_with_the_array_path() {
    for x in [-1000.0, -2.5, -1e-20, 0.0, 0.3, 40.0] {
        let a = Array1::from(vec![x]);
        let want = softplus_v(a.view())[0] + abs_v(a.view())[0].ln_1p();
        assert_eq!(scalar_softplus(x), want, "value at {x}");
        let d_abs = if x == 0.0 {
            0.0
        } else {
            x.signum() / (1.0 + x.abs())
        };
        let want_d = softplus_d(a.view())[0] + d_abs;
        assert!(
            (scalar_softplus_d(x) - want_d).abs() <= 1e-15,
            "derivative at {x}"
        );
    }
}

#[oxla::grad(fill_grad)]
fn fill(x: ArrayView1<f64>, v: f64) -> f64 {
    (zeros_like(x) + ones_like(x) * 2.0 + full_like(x, v * v) * x).sum()
}

#[test]
fn constants_shaped_like_an_array() {
    let x = Array1::from(vec![1.0, -2.0, 0.5]);
    let v = 1.5;
    assert_eq!(fill(x.view(), v), 3.0 * 2.0 + v * v * x.sum());
    let (gx, gv) = fill_grad(&x, v);
    assert_eq!(gx.to_vec(), vec![v * v; 3]);
    assert_eq!(gv, 2.0 * v * x.sum());
}

// expm1's derivative is e^x (not expm1 + 1, which cancels below 0), so every
// order must be e^x: the second through the scalar path and the Hessian
// (the array path: jacfwd of the gradient).
#[oxla::grad(expm1_dd)]
#[oxla::grad(expm1_d1)]
fn expm1_scalar(x: f64) -> f64 {
    x.exp_m1()
}

#[oxla::hessian(expm1_hessian)]
fn expm1_sum(x: [f64; 3]) -> f64 {
    expm1(x[0]) + x[1].exp_m1() * x[2]
}

#[test]
fn expm1_is_accurate_near_zero_and_differentiates_in_every_order() {
    for x in [-30.0, -1.5, -0.4, -1e-9, 1e-300, 0.3, 2.0, 45.0] {
        let rel = |a: f64, b: f64| (a - b).abs() <= 4.5e-16 * b.abs();
        assert!(rel(expm1_scalar(x), x.exp_m1()), "value at {x}");
        assert!(rel(expm1_d1(x), x.exp()), "first derivative at {x}");
        assert!(rel(expm1_dd(x), x.exp()), "second derivative at {x}");
        let v = expm1_v(Array1::from(vec![x]).view())[0];
        // Two ulp of the relative accuracy (not an absolute one) near 0.
        assert!(
            (v - x.exp_m1()).abs() <= 4.5e-16 * x.exp_m1().abs(),
            "{x}: {v}"
        );
    }
    let y = [0.25, -0.75, 1.5];
    let h = expm1_hessian(&y);
    let want = [
        [y[0].exp(), 0.0, 0.0],
        [0.0, y[1].exp() * y[2], y[1].exp()],
        [0.0, y[1].exp(), 0.0],
    ];
    for i in 0..3 {
        for j in 0..3 {
            assert!(
                (h[[i, j]] - want[i][j]).abs() <= 1e-15 * (1.0 + want[i][j].abs()),
                "H[{i},{j}] {} vs {}",
                h[[i, j]],
                want[i][j]
            );
        }
    }
}
