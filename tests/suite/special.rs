//! The special functions (`erf_inv`) end to end: the kernels' values (an
//! expansion into primitive ops, as XLA's) against JAX's, the scalar path's
//! (the f64 reference) against mpmath at 50 digits, the edges JAX gives,
//! and derivatives of every order against the closed forms.

use oxla::ndarray::{Array1, ArrayView1};

#[oxla::jit]
fn erf_inv_v(x: ArrayView1<f64>) -> Array1<f64> {
    erf_inv(x)
}

#[oxla::jit]
fn erf_inv32_v(x: ArrayView1<f32>) -> Array1<f32> {
    erf_inv(x)
}

#[oxla::grad(erf_inv_dd)]
#[oxla::grad(erf_inv_d1)]
fn erf_inv_scalar(x: f64) -> f64 {
    erf_inv(x)
}

/// The elementwise derivative: the gradient of the sum.
#[oxla::grad(erf_inv_sum_d)]
fn erf_inv_sum(x: ArrayView1<f64>) -> f64 {
    erf_inv(x).sum()
}

/// erf_inv at f64 arguments, from mpmath at 50 digits
/// (`mpmath.erfinv(mpmath.mpf(x))` with `mp.dps = 50`, rounded to f64).
const ERF_INV_MPMATH: [(f64, f64); 17] = [
    (-0.999999, -3.458910737275499),
    (-0.99, -1.8213863677184494),
    (-0.9, -1.1630871536766743),
    (-0.5, -0.4769362762044699),
    (-0.25, -0.2253120550121781),
    (-1e-08, -8.86226925452758e-09),
    (1e-300, 8.86226925452758e-301),
    (0.1, 0.08885599049425769),
    (0.3, 0.2724627147267543),
    (0.5, 0.4769362762044699),
    (0.7, 0.7328690779592167),
    (0.8, 0.9061938024368233),
    (0.95, 1.3859038243496777),
    (0.999, 2.3267537655135246),
    (0.9999999, 3.7665625816384707),
    (0.9999999999990905, 5.05125408524939),
    (0.9999999999999998, 5.805018683193453),
];

/// `jax.lax.erf_inv` (JAX 0.10.2 on CPU, `jax_enable_x64`) at f64
/// arguments: XLA's expansion, whose `log1p(−x²)` loses digits near ±1
/// (1e-12 relative at 0.9999999), as the kernels' does.
const ERF_INV_JAX: [(f64, f64); 15] = [
    (-0.999999, -3.4589107372739605),
    (-0.99, -1.8213863677184494),
    (-0.9, -1.163087153676674),
    (-0.5, -0.47693627620446977),
    (-0.25, -0.22531205501217808),
    (-1e-08, -8.86226925452758e-09),
    (1e-30, 8.862269254527581e-31),
    (0.1, 0.08885599049425769),
    (0.3, 0.2724627147267544),
    (0.5, 0.47693627620446977),
    (0.7, 0.7328690779592166),
    (0.8, 0.9061938024368233),
    (0.95, 1.385903824349678),
    (0.999, 2.3267537655135273),
    (0.9999999, 3.766562581633336),
];

/// The same at f32 arguments, as bits (argument, result).
const ERF_INV_JAX_F32: [(u32, u32); 15] = [
    (0xbf7fffef, 0xc05d40b6),
    (0xbf7d70a4, 0xbfe92333),
    (0xbf666666, 0xbf94e009),
    (0xbf000000, 0xbef430fe),
    (0xbe800000, 0xbe66b835),
    (0xb22bcc77, 0xb21840ab),
    (0x0da24260, 0x0d8fcc6c),
    (0x3dcccccd, 0x3db5fa21),
    (0x3e99999a, 0x3e8b803d),
    (0x3f000000, 0x3ef430fe),
    (0x3f333333, 0x3f3b9d4f),
    (0x3f4ccccd, 0x3f67fc53),
    (0x3f733333, 0x3fb1654b),
    (0x3f7fbe77, 0x4014e999),
    (0x3f7ffffe, 0x406f9c68),
];

fn ulps(got: f64, want: f64) -> f64 {
    (got - want).abs() / (want.abs().next_up() - want.abs()).max(f64::from_bits(1))
}

#[test]
fn erf_inv_scalar_matches_mpmath() {
    for &(x, want) in &ERF_INV_MPMATH {
        // The reference: Giles' polynomial refined by Newton steps.
        let got = erf_inv_scalar(x);
        assert!(
            ulps(got, want) <= 1.0,
            "scalar erf_inv({x}) = {got}, mpmath {want}"
        );
    }
}

#[test]
fn erf_inv_kernels_match_jax() {
    let xs: Array1<f64> = ERF_INV_JAX.iter().map(|p| p.0).collect();
    let got = erf_inv_v(xs.view());
    for (i, &(x, want)) in ERF_INV_JAX.iter().enumerate() {
        assert!(
            ulps(got[i], want) <= 4.0,
            "kernel erf_inv({x}) = {}, JAX {want}",
            got[i]
        );
    }
    let xs: Array1<f32> = ERF_INV_JAX_F32
        .iter()
        .map(|p| f32::from_bits(p.0))
        .collect();
    let got = erf_inv32_v(xs.view());
    for (i, &(x, want)) in ERF_INV_JAX_F32.iter().enumerate() {
        let (x, want) = (f32::from_bits(x), f32::from_bits(want));
        let apart = (got[i].to_bits() as i64 - want.to_bits() as i64).abs();
        assert!(
            apart <= 1,
            "f32 kernel erf_inv({x}) = {}, JAX {want} ({apart} ulp apart)",
            got[i]
        );
    }
}

#[test]
fn erf_inv_edges_are_jax_s() {
    let xs = Array1::from(vec![1.0, -1.0, 1.5, -2.0, f64::NAN, 0.0, -0.0]);
    let v = erf_inv_v(xs.view());
    let v32 = erf_inv32_v(xs.mapv(|x| x as f32).view());
    let want = [
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::NAN,
        f64::NAN,
        0.0,
        -0.0,
    ];
    for (i, w) in want.iter().enumerate() {
        let x = xs[i];
        for (path, got) in [
            ("kernel", v[i]),
            ("f32 kernel", f64::from(v32[i])),
            ("scalar", erf_inv_scalar(x)),
        ] {
            let same = if w.is_nan() {
                got.is_nan()
            } else {
                got == *w && got.is_sign_negative() == w.is_sign_negative()
            };
            assert!(same, "{path} erf_inv({x}) = {got}, want {w}");
        }
    }
}

#[test]
fn erf_inv_derivatives_are_the_closed_forms() {
    let xs: Array1<f64> = ERF_INV_MPMATH
        .iter()
        .map(|p| p.0)
        .filter(|x| x.abs() < 0.9999)
        .collect();
    let d_kernel = erf_inv_sum_d(xs.view());
    for (i, &(x, y)) in ERF_INV_MPMATH
        .iter()
        .filter(|p| p.0.abs() < 0.9999)
        .enumerate()
    {
        // y' = √π/2 · e^{y²}; y'' = 2y · y'².
        let d1 = std::f64::consts::PI.sqrt() / 2.0 * (y * y).exp();
        let d2 = 2.0 * y * d1 * d1;
        // The relative error of y' is 2y² times y's.
        let tol = 1e-15 + 8.0 * y * y * f64::EPSILON;
        assert!(
            (erf_inv_d1(x) - d1).abs() <= tol * d1,
            "erf_inv'({x}) = {}, want {d1}",
            erf_inv_d1(x)
        );
        assert!(
            (d_kernel[i] - d1).abs() <= 4.0 * tol * d1,
            "kernel erf_inv'({x}) = {}, want {d1}",
            d_kernel[i]
        );
        assert!(
            (erf_inv_dd(x) - d2).abs() <= 2.0 * tol * d2.abs().max(1e-300),
            "erf_inv''({x}) = {}, want {d2}",
            erf_inv_dd(x)
        );
    }
}
