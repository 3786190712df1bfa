//! Rounding and sign end to end through the macros: values bit for bit
//! against Rust std (every special value, on the kernel path in f32 and f64
//! and on the straight-line scalar path), and derivatives exactly 0 in the
//! first and second order, alone and inside a product.

use oxla::ndarray::{Array1, ArrayView1};

macro_rules! rounded {
    ($v64:ident, $v32:ident, $scalar:ident, |$x:ident| $body:expr) => {
        #[oxla::jit]
        fn $v64($x: ArrayView1<f64>) -> Array1<f64> {
            $body
        }
        #[oxla::jit]
        fn $v32($x: ArrayView1<f32>) -> Array1<f32> {
            $body
        }
        #[oxla::jit]
        fn $scalar($x: f64) -> f64 {
            $body
        }
    };
}

rounded!(floor64, floor32, floor_s, |x| x.floor());
rounded!(ceil64, ceil32, ceil_s, |x| x.ceil());
rounded!(trunc64, trunc32, trunc_s, |x| x.trunc());
rounded!(round64, round32, round_s, |x| x.round());
rounded!(even64, even32, even_s, |x| x.round_ties_even());
rounded!(signum64, signum32, signum_s, |x| x.signum());
rounded!(sign64, sign32, sign_s, |x| sign(x));

type Case = (
    &'static str,
    fn(ArrayView1<f64>) -> Array1<f64>,
    fn(ArrayView1<f32>) -> Array1<f32>,
    fn(f64) -> f64,
    fn(f64) -> f64,
    fn(f32) -> f32,
);

/// `jnp.sign` (`lax.sign`): ±0 and NaN unchanged.
fn sign_ref64(x: f64) -> f64 {
    if x == 0.0 || x.is_nan() {
        x
    } else {
        x.signum()
    }
}

fn sign_ref32(x: f32) -> f32 {
    if x == 0.0 || x.is_nan() {
        x
    } else {
        x.signum()
    }
}

fn cases() -> Vec<Case> {
    vec![
        ("floor", floor64, floor32, floor_s, f64::floor, f32::floor),
        ("ceil", ceil64, ceil32, ceil_s, f64::ceil, f32::ceil),
        ("trunc", trunc64, trunc32, trunc_s, f64::trunc, f32::trunc),
        ("round", round64, round32, round_s, f64::round, f32::round),
        (
            "round_ties_even",
            even64,
            even32,
            even_s,
            f64::round_ties_even,
            f32::round_ties_even,
        ),
        (
            "signum",
            signum64,
            signum32,
            signum_s,
            f64::signum,
            f32::signum,
        ),
        ("sign", sign64, sign32, sign_s, sign_ref64, sign_ref32),
    ]
}

fn specials() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        0.5,
        -0.5,
        1.5,
        -2.5,
        0.5f64.next_down(),
        -0.3,
        0.7,
        2f64.powi(52) - 0.5,
        -(2f64.powi(52) + 1.0),
        2f64.powi(23) - 0.5,
        -(2f64.powi(23) + 1.0),
        1e300,
        -5e-324,
        -7.25,
        3.75,
    ];
    v.extend((0..40).map(|i| (i as f64 - 20.0) * 0.25 + 0.125 * (i % 3) as f64));
    v
}

fn same64(got: f64, want: f64) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

#[test]
fn values_match_std_bit_for_bit() {
    let xs = Array1::from(specials());
    let xs32: Array1<f32> = xs.mapv(|x| x as f32);
    for (name, v64, v32, scalar, ref64, ref32) in cases() {
        let got = v64(xs.view());
        let got32 = v32(xs32.view());
        for (i, &x) in xs.iter().enumerate() {
            assert!(same64(got[i], ref64(x)), "{name}({x:e}) = {}", got[i]);
            assert!(same64(scalar(x), ref64(x)), "scalar {name}({x:e})");
            let (g, w) = (got32[i], ref32(xs32[i]));
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "f32 {name}({:e}) = {g}, want {w}",
                xs32[i]
            );
        }
    }
}

// Derivatives: exactly 0 for the ops alone, in the first and second order,
// and the product rule around them (d/dx x·floor(x) = floor(x) between the
// jumps).
#[oxla::grad(d2_floor)]
#[oxla::grad(d_floor)]
fn floor_scalar(x: f64) -> f64 {
    x.floor() + x.ceil() + x.trunc() + x.round() + x.round_ties_even() + x.signum() + sign(x)
}

#[oxla::grad(d_prod)]
fn prod_floor(x: ArrayView1<f64>) -> f64 {
    (x * x.floor() + x.round() * x.round()).sum()
}

#[oxla::grad(dd_prod_scalar)]
#[oxla::grad(d_prod_scalar)]
fn prod_floor_scalar(x: f64) -> f64 {
    x * x.floor() + x.round() * x.round()
}

#[test]
fn derivatives_are_zero_and_compose() {
    for x in [-2.5, -1.0, -0.3, -0.0, 0.0, 0.5, 0.7, 3.0, 1e300, f64::NAN] {
        assert_eq!(d_floor(x).to_bits(), 0f64.to_bits(), "d at {x}");
        assert_eq!(d2_floor(x).to_bits(), 0f64.to_bits(), "d2 at {x}");
    }
    let xs = Array1::from(vec![-2.3, -0.7, 0.2, 0.5, 1.6, 2.5, 3.0]);
    let d = d_prod(xs.view());
    for (i, &x) in xs.iter().enumerate() {
        // d/dx [x·floor(x) + round(x)²] = floor(x) (round is piecewise
        // constant), and the second derivative is 0.
        assert_eq!(d[i], x.floor(), "at {x}");
        assert_eq!(d_prod_scalar(x), x.floor(), "scalar at {x}");
        assert_eq!(dd_prod_scalar(x), 0.0, "second derivative at {x}");
    }
}
