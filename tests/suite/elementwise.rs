//! The composite elementwise functions (abs, square, recip, clamp, ln_1p /
//! log1p, sigmoid, relu, softplus, exp_m1 / expm1, erf) end to end: values against Rust's own
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
elementwise!(erf_v, erf_s, erf_d, |x| erf(x));

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

/// d erf(x) = 2/√π · e^(−x²).
fn erf_deriv_ref(x: f64) -> f64 {
    std::f64::consts::FRAC_2_SQRT_PI * (-x * x).exp()
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
        ("erf", erf_v, erf_s, |x| erf_d(x), libm::erf, erf_deriv_ref),
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

/// erf(x) at f64 arguments, correctly rounded, from mpmath at 50 digits
/// (`mpmath.erf(mpmath.mpf(x))` with `mp.dps = 50`): independent of both
/// the kernel's and `libm`'s algorithm (which share fdlibm's method).
const ERF_MPMATH: [(f64, f64); 22] = [
    (-5.5, -0.9999999999999927),
    (-3.0, -0.9999779095030014),
    (-2.0, -0.9953222650189527),
    (-1.1, -0.8802050695740817),
    (-0.9, -0.7969082124228322),
    (-0.5, -0.5204998778130465),
    (-1e-05, -1.1283791670579e-05),
    (1e-300, 1.1283791670955126e-300),
    (0.1, 0.1124629160182849),
    (0.6, 0.6038560908479259),
    (0.84375, 0.7672256612323416),
    (0.9, 0.7969082124228322),
    (1.0, 0.8427007929497149),
    (1.2, 0.9103139782296353),
    (1.25, 0.9229001282564583),
    (1.7, 0.9837904585907745),
    (2.5, 0.999593047982555),
    (2.857, 0.9999466417399131),
    (3.5, 0.9999992569016276),
    (4.2, 0.9999999971445058),
    (5.9, 0.9999999999999999),
    (6.5, 1.0),
];

#[oxla::jit]
fn erf32_v(x: ArrayView1<f32>) -> Array1<f32> {
    erf(x)
}

#[oxla::grad(erf_dd)]
#[oxla::grad(erf_d1)]
fn erf_scalar(x: f64) -> f64 {
    erf(x)
}

#[oxla::hessian(erf_hessian)]
fn erf_pair(x: [f64; 2]) -> f64 {
    erf(x[0]) * x[1]
}

#[test]
fn erf_matches_mpmath_and_differentiates_in_every_order() {
    let xs: Array1<f64> = ERF_MPMATH.iter().map(|p| p.0).collect();
    let v = erf_v(xs.view());
    let v32 = erf32_v(xs.mapv(|x| x as f32).view());
    for (i, &(x, want)) in ERF_MPMATH.iter().enumerate() {
        // Within one ulp of the correctly rounded value.
        let ulp = (want.abs().next_up() - want.abs()).max(f64::from_bits(1));
        assert!(
            (v[i] - want).abs() <= ulp,
            "erf({x}) = {}, mpmath {want}",
            v[i]
        );
        assert!((erf_scalar(x) - want).abs() <= ulp, "scalar erf({x})");
        // f32: the f32 argument's erf, within half an f32 ulp of mpmath's
        // value at the f64 argument plus the argument's rounding.
        let xf = x as f32;
        let slope = erf_deriv_ref(x) * (f64::from(xf) - x).abs();
        let ulp32 = f64::from((want.abs() as f32).next_up() - want.abs() as f32);
        assert!(
            (f64::from(v32[i]) - want).abs() <= 0.5 * ulp32 + slope + 1e-300,
            "f32 erf({xf}) = {}, mpmath {want}",
            v32[i]
        );
        let d1 = erf_deriv_ref(x);
        let d2 = -2.0 * x * d1;
        assert!((erf_d1(x) - d1).abs() <= 1e-15 * d1.abs(), "erf'({x})");
        assert!(
            (erf_dd(x) - d2).abs() <= 1e-15 * d2.abs().max(1e-300),
            "erf''({x})"
        );
    }
    let y = [0.3, -1.7];
    let h = erf_hessian(&y);
    let d1 = erf_deriv_ref(y[0]);
    let want = [[-2.0 * y[0] * d1 * y[1], d1], [d1, 0.0]];
    for i in 0..2 {
        for j in 0..2 {
            assert!(
                (h[[i, j]] - want[i][j]).abs() <= 1e-15 * (1.0 + want[i][j].abs()),
                "H[{i},{j}] {} vs {}",
                h[[i, j]],
                want[i][j]
            );
        }
    }
}
