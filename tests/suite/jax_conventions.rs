//! JAX's conventions through the macros: `max`/`min` propagate NaN from
//! either operand, their derivative splits a tie 0.5/0.5 and gives 0 to both
//! operands of a NaN result (JAX's `_balanced_eq` rule for `lax.max`/
//! `lax.min`: `jax.grad(jnp.maximum, (0, 1))(1., 1.) == (0.5, 0.5)`,
//! `jax.grad(lambda x: jnp.maximum(x, 0.))(0.) == 0.5`), and `x.powi(0)` has
//! derivative 0 everywhere (`integer_pow`'s rule), also at 0.
//!
//! Scalar functions run as generated straight-line Rust; array functions run
//! on the Cranelift JIT. Expected values are written out from the rule.

use oxla::{grad, jit, value_and_grad};

const NAN: f64 = f64::NAN;

// ---- scalar functions (straight-line Rust) --------------------------------

#[value_and_grad(max_vg)]
fn max_s(x: f64, y: f64) -> f64 {
    x.max(y)
}

#[grad(max_dd, wrt = x)]
#[grad(max_d, wrt = x)]
fn max_s2(x: f64, y: f64) -> f64 {
    x.max(y)
}

#[value_and_grad(min_vg)]
fn min_s(x: f64, y: f64) -> f64 {
    x.min(y)
}

#[value_and_grad(max_vg32)]
fn max_s32(x: f32, y: f32) -> f32 {
    x.max(y)
}

#[grad(relu_dd)]
#[grad(relu_d)]
fn relu(x: f64) -> f64 {
    x.max(0.0)
}

#[grad(relu_d32)]
fn relu32(x: f32) -> f32 {
    x.max(0.0)
}

#[grad(pow0_ddd)]
#[grad(pow0_dd)]
#[grad(pow0_d)]
fn pow0(x: f64) -> f64 {
    x.powi(0)
}

#[grad(pow1_dd)]
#[grad(pow1_d)]
fn pow1(x: f64) -> f64 {
    x.powi(1)
}

/// Equal as numbers (`0.0 == -0.0`), or both NaN.
fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

#[track_caller]
fn check(ctx: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{ctx}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(same(*g, *w), "{ctx}: element {i} is {g}, want {w}");
    }
}

/// (x, y, max, d/dx, d/dy) and the same for min.
const MAX_POINTS: [(f64, f64, f64, f64, f64); 7] = [
    (1.0, 1.0, 1.0, 0.5, 0.5),
    (0.0, 0.0, 0.0, 0.5, 0.5),
    (2.0, 1.0, 2.0, 1.0, 0.0),
    (1.0, 2.0, 2.0, 0.0, 1.0),
    (NAN, 1.0, NAN, 0.0, 0.0),
    (1.0, NAN, NAN, 0.0, 0.0),
    (NAN, NAN, NAN, 0.0, 0.0),
];
const MIN_POINTS: [(f64, f64, f64, f64, f64); 5] = [
    (1.0, 1.0, 1.0, 0.5, 0.5),
    (2.0, 1.0, 1.0, 0.0, 1.0),
    (1.0, 2.0, 1.0, 1.0, 0.0),
    (NAN, 1.0, NAN, 0.0, 0.0),
    (1.0, NAN, NAN, 0.0, 0.0),
];

#[test]
fn scalar_max_min_values_and_gradients() {
    for (x, y, v, gx, gy) in MAX_POINTS {
        let ctx = format!("max({x}, {y})");
        check(&ctx, &[max_s(x, y)], &[v]);
        let (v2, a, b) = max_vg(x, y);
        check(&ctx, &[v2, a, b], &[v, gx, gy]);
        let (v3, a, b) = max_vg32(x as f32, y as f32);
        check(
            &format!("f32 {ctx}"),
            &[v3 as f64, a as f64, b as f64],
            &[v, gx, gy],
        );
        // Second order: the weights depend on primal values only.
        check(&format!("d/dx {ctx}"), &[max_d(x, y)], &[gx]);
        check(&format!("d2/dx2 {ctx}"), &[max_dd(x, y)], &[0.0]);
    }
    for (x, y, v, gx, gy) in MIN_POINTS {
        let ctx = format!("min({x}, {y})");
        check(&ctx, &[min_s(x, y)], &[v]);
        let (v2, a, b) = min_vg(x, y);
        check(&ctx, &[v2, a, b], &[v, gx, gy]);
    }
}

#[test]
fn scalar_relu_at_zero() {
    for (x, d) in [(0.0, 0.5), (-0.0, 0.5), (-1.0, 0.0), (2.0, 1.0), (NAN, 0.0)] {
        check(&format!("relu'({x})"), &[relu_d(x)], &[d]);
        check(
            &format!("f32 relu'({x})"),
            &[relu_d32(x as f32) as f64],
            &[d],
        );
        check(&format!("relu''({x})"), &[relu_dd(x)], &[0.0]);
    }
    check("relu(NaN)", &[relu(NAN)], &[NAN]);
}

#[test]
fn scalar_powi_0_and_1_at_zero() {
    for x in [0.0, -0.0, 1.5, NAN] {
        check(&format!("x^0 at {x}"), &[pow0(x)], &[1.0]);
        let ds = [pow0_d(x), pow0_dd(x), pow0_ddd(x)];
        check(&format!("derivatives of x^0 at {x}"), &ds, &[0.0; 3]);
    }
    for x in [0.0, -0.0, 1.5] {
        check(
            &format!("derivatives of x^1 at {x}"),
            &[pow1_d(x), pow1_dd(x)],
            &[1.0, 0.0],
        );
    }
}

// ---- array functions (Cranelift JIT) ---------------------------------------

#[jit]
fn max_v(x: &[f64], y: &[f64]) -> Vec<f64> {
    x.max(y)
}

#[jit]
fn min_v(x: &[f64], y: &[f64]) -> Vec<f64> {
    x.min(y)
}

#[jit]
#[grad(max_sum_grad, wrt = (x, y))]
fn max_sum(x: &[f64], y: &[f64]) -> f64 {
    sum(x.max(y))
}

#[jit]
#[grad(min_sum_grad, wrt = (x, y))]
fn min_sum(x: &[f64], y: &[f64]) -> f64 {
    sum(x.min(y))
}

#[jit]
#[grad(max_sum_grad32, wrt = (x, y))]
fn max_sum32(x: &[f32], y: &[f32]) -> f32 {
    sum(x.max(y))
}

#[jit]
#[grad(relu_sum_grad)]
fn relu_sum(x: &[f64]) -> f64 {
    sum(x.max(0.0))
}

#[jit]
#[grad(pow0_sum_grad)]
fn pow0_sum(x: &[f64]) -> f64 {
    sum(x.powi(0))
}

/// Ties only: the array path agrees with JAX without NaN operands.
#[test]
fn array_max_min_gradients_at_ties() {
    let ties = |p: &[(f64, f64, f64, f64, f64)]| -> Vec<(f64, f64, f64, f64, f64)> {
        p.iter().copied().filter(|p| !p.2.is_nan()).collect()
    };
    for (name, points, vals, grads) in [
        (
            "max",
            ties(&MAX_POINTS),
            max_v as fn(&[f64], &[f64]) -> Vec<f64>,
            max_sum_grad as fn(&[f64], &[f64]) -> (Vec<f64>, Vec<f64>),
        ),
        ("min", ties(&MIN_POINTS), min_v, min_sum_grad),
    ] {
        let (x, y): (Vec<f64>, Vec<f64>) = points.iter().map(|p| (p.0, p.1)).unzip();
        let want: Vec<f64> = points.iter().map(|p| p.2).collect();
        check(&format!("{name} values"), &vals(&x, &y), &want);
        let (gx, gy) = grads(&x, &y);
        check(
            &format!("{name} d/dx"),
            &gx,
            &points.iter().map(|p| p.3).collect::<Vec<_>>(),
        );
        check(
            &format!("{name} d/dy"),
            &gy,
            &points.iter().map(|p| p.4).collect::<Vec<_>>(),
        );
    }
    let (gx, gy) = max_sum_grad32(&[1.0, 2.0, 0.0], &[1.0, 1.0, 0.0]);
    assert_eq!((gx, gy), (vec![0.5, 1.0, 0.5], vec![0.5, 0.0, 0.5]));
    let x = [0.0, -0.0, -1.0, 2.0];
    check("relu' on arrays", &relu_sum_grad(&x), &[0.5, 0.5, 0.0, 1.0]);
    let x = [0.0, -0.0, 1.5, NAN];
    check("(x^0)' on arrays", &pow0_sum_grad(&x), &[0.0; 4]);
    assert_eq!(pow0_sum(&x), 4.0);
}

/// Zeros of either sign at a tie: +0 for max and -0 for min, in both
/// orders, bit for bit as `BinaryOp::eval` (and JAX's `lax.max`/`lax.min`)
/// gives them. The straight-line scalar code compared only, so it gave the
/// second operand: `max(0.0, -0.0)` was -0.
#[test]
fn scalar_max_min_of_signed_zeros_match_the_op_bitwise() {
    use oxla::oxla_core::ops::elementwise::BinaryOp;
    assert_eq!(BinaryOp::Max.eval(0.0, -0.0).to_bits(), 0.0f64.to_bits());
    assert_eq!(BinaryOp::Max.eval(-0.0, 0.0).to_bits(), 0.0f64.to_bits());
    assert_eq!(BinaryOp::Min.eval(0.0, -0.0).to_bits(), (-0.0f64).to_bits());
    assert_eq!(BinaryOp::Min.eval(-0.0, 0.0).to_bits(), (-0.0f64).to_bits());
    for (x, y) in [
        (0.0, -0.0),
        (-0.0, 0.0),
        (0.0, 0.0),
        (-0.0, -0.0),
        (1.5, 1.5),
    ] {
        let max = BinaryOp::Max.eval(x, y).to_bits();
        let min = BinaryOp::Min.eval(x, y).to_bits();
        let ctx = format!("({x:?}, {y:?})");
        assert_eq!(max_s(x, y).to_bits(), max, "max{ctx}");
        assert_eq!(max_vg(x, y).0.to_bits(), max, "max_vg{ctx}");
        let v32 = max_vg32(x as f32, y as f32).0;
        assert_eq!((v32 as f64).to_bits(), max, "f32 max{ctx}");
        assert_eq!(min_s(x, y).to_bits(), min, "min{ctx}");
        assert_eq!(min_vg(x, y).0.to_bits(), min, "min_vg{ctx}");
    }
}

/// NaN operands on the array path. Needs the CPU backend's NaN-propagating
/// max/min lowering (`maxps` alone returns the second operand when either
/// is NaN).
#[test]
fn array_max_min_with_nan() {
    for (name, points, vals, grads) in [
        (
            "max",
            MAX_POINTS.to_vec(),
            max_v as fn(&[f64], &[f64]) -> Vec<f64>,
            max_sum_grad as fn(&[f64], &[f64]) -> (Vec<f64>, Vec<f64>),
        ),
        ("min", MIN_POINTS.to_vec(), min_v, min_sum_grad),
    ] {
        let col = |k: usize| -> Vec<f64> {
            points
                .iter()
                .map(|p| [p.0, p.1, p.2, p.3, p.4][k])
                .collect()
        };
        let (x, y, v, gx, gy) = (col(0), col(1), col(2), col(3), col(4));
        check(&format!("{name} values"), &vals(&x, &y), &v);
        let (a, b) = grads(&x, &y);
        check(&format!("{name} d/dx"), &a, &gx);
        check(&format!("{name} d/dy"), &b, &gy);
    }
    check(
        "relu' at NaN on arrays",
        &relu_sum_grad(&[NAN, 0.0]),
        &[0.0, 0.5],
    );
    let (gx, gy) = max_sum_grad32(&[f32::NAN, 1.0], &[1.0, f32::NAN]);
    assert_eq!((gx, gy), (vec![0.0, 0.0], vec![0.0, 0.0]));
}
