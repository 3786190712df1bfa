//! Derivatives where finite differences cannot see the answer: ties of
//! `max`/`min`, NaN operands, `powi` at 0. The expected values are JAX's:
//!
//! - `jax.lax.max`/`min` differentiate with `_balanced_eq(x, z, y)` =
//!   `(x == z ? 1 : 0) / (y == z ? 2 : 1)` for `z = max(x, y)` (in
//!   `jax/_src/lax/lax.py`), so `jax.grad(jnp.maximum, (0, 1))(1., 1.)` is
//!   `(0.5, 0.5)`, `jax.grad(lambda x: jnp.maximum(x, 0.))(0.)` is `0.5`, and a
//!   NaN result equals neither operand: both gradients are 0.
//! - `jnp.maximum(nan, 1.)` and `jnp.maximum(1., nan)` are NaN.
//! - `integer_pow`'s JVP is zeros for exponent 0 and `n * x^(n-1)` otherwise,
//!   so every derivative of `x^0` is 0, also at 0.
//!
//! Each case runs through the IR interpreter and through fusion and the
//! kernel interpreter, and batched through `vmap`.

use crate::common;

use common::*;
use oxla_core::exec::{InterpLauncher, Program};
use oxla_core::kernel::fusion::fuse;
use oxla_core::ops::elementwise::{BinaryOp, UnaryOp};
use oxla_core::transforms::{grad, jvp, vjp, vmap};
use oxla_core::*;
use std::collections::BTreeMap;

const NAN: f64 = f64::NAN;

/// Run `f` through fusion and the kernel interpreter.
fn run_fused(f: &Function, args: &[Tensor]) -> Vec<Tensor> {
    let p: Program = fuse(f).unwrap_or_else(|e| panic!("fuse `{}`: {e}", f.name));
    let bufs: Vec<Buffer> = args.iter().map(Tensor::to_buffer).collect();
    let lens: Vec<usize> = bufs.iter().map(Buffer::len).collect();
    let sizes = p.bind(&lens).unwrap();
    let env: BTreeMap<String, usize> = p
        .symbols
        .iter()
        .cloned()
        .zip(sizes.iter().map(|s| *s as usize))
        .collect();
    let out = p.run(&InterpLauncher(&p.kernels), &bufs).unwrap();
    out.iter()
        .zip(&f.outs)
        .map(|(b, o)| Tensor::from_buffer(concrete(f.shape(*o), &env), b))
        .collect()
}

/// Equal as numbers (so `0.0 == -0.0`), or both NaN.
fn same(got: f64, want: f64) -> bool {
    got == want || (got.is_nan() && want.is_nan())
}

/// Every output of `f` at `args`, through both interpreters, equals `want`
/// exactly (one flat list per output).
#[track_caller]
fn check(ctx: &str, f: &Function, args: &[Tensor], want: &[&[f64]]) {
    check_rel(ctx, f, args, want, 0.0)
}

/// Like `check`, within a relative tolerance.
#[track_caller]
fn check_rel(ctx: &str, f: &Function, args: &[Tensor], want: &[&[f64]], rtol: f64) {
    for (how, outs) in [
        ("IR interpreter", eval(f, args)),
        ("kernel interpreter", run_fused(f, args)),
    ] {
        assert_eq!(outs.len(), want.len(), "{ctx}: outputs");
        for (k, (o, w)) in outs.iter().zip(want).enumerate() {
            assert_eq!(o.data.len(), w.len(), "{ctx}: output {k} length");
            for (i, (g, w)) in o.data.iter().zip(w.iter()).enumerate() {
                assert!(
                    same(*g, *w) || (g - w).abs() <= rtol * w.abs(),
                    "{ctx} ({how}): output {k}[{i}] is {g}, want {w} (JAX)"
                );
            }
        }
    }
}

fn s(x: f64) -> Tensor {
    Tensor::scalar(F, x)
}

fn binary(op: BinaryOp) -> Function {
    build(
        op.name(),
        &[("a", Shape::scalar()), ("b", Shape::scalar())],
        |f, p| vec![f.binary(op, p[0], p[1])],
    )
}

/// `(a, b) -> (op(a, b), d/da, d/db)` at each point.
fn value_and_grads(op: BinaryOp, points: &[(f64, f64, f64, f64, f64)]) {
    let f = binary(op);
    let g = grad(&f, &[0, 1]).unwrap();
    for &(a, b, y, ga, gb) in points {
        let ctx = format!("{}({a}, {b})", op.name());
        check(&ctx, &f, &[s(a), s(b)], &[&[y]]);
        check(&format!("grad {ctx}"), &g, &[s(a), s(b)], &[&[ga], &[gb]]);
        // Forward mode gives the same weights: the tangent along e_a and e_b.
        let j = jvp(&f);
        check(
            &format!("jvp {ctx} along a"),
            &j,
            &[s(a), s(b), s(1.0), s(0.0)],
            &[&[y], &[ga]],
        );
        check(
            &format!("jvp {ctx} along b"),
            &j,
            &[s(a), s(b), s(0.0), s(1.0)],
            &[&[y], &[gb]],
        );
    }
}

#[test]
fn max_gradient_at_ties_and_nan() {
    value_and_grads(
        BinaryOp::Max,
        &[
            (1.0, 1.0, 1.0, 0.5, 0.5),
            (0.0, 0.0, 0.0, 0.5, 0.5),
            (-2.5, -2.5, -2.5, 0.5, 0.5),
            (2.0, 1.0, 2.0, 1.0, 0.0),
            (1.0, 2.0, 2.0, 0.0, 1.0),
            (NAN, 1.0, NAN, 0.0, 0.0),
            (1.0, NAN, NAN, 0.0, 0.0),
            (NAN, NAN, NAN, 0.0, 0.0),
            // +0 and -0 compare equal: a tie, whichever zero is returned.
            (0.0, -0.0, 0.0, 0.5, 0.5),
        ],
    );
}

#[test]
fn min_gradient_at_ties_and_nan() {
    value_and_grads(
        BinaryOp::Min,
        &[
            (1.0, 1.0, 1.0, 0.5, 0.5),
            (2.0, 1.0, 1.0, 0.0, 1.0),
            (1.0, 2.0, 1.0, 1.0, 0.0),
            (NAN, 1.0, NAN, 0.0, 0.0),
            (1.0, NAN, NAN, 0.0, 0.0),
        ],
    );
}

/// `jnp.maximum(x, 0.)` (a ReLU) at 0 has derivative 0.5; `minimum` too.
#[test]
fn relu_at_zero() {
    for op in [BinaryOp::Max, BinaryOp::Min] {
        let f = build("relu", &[("x", Shape::scalar())], |f, p| {
            let z = f.literal(0.0, F);
            vec![f.binary(op, p[0], z)]
        });
        let g = grad(&f, &[0]).unwrap();
        let (lo, hi) = if op == BinaryOp::Max {
            (0.0, 1.0)
        } else {
            (1.0, 0.0)
        };
        for (x, d) in [(0.0, 0.5), (-0.0, 0.5), (-1.0, lo), (1.0, hi), (NAN, 0.0)] {
            check(
                &format!("d {}(x, 0) at {x}", op.name()),
                &g,
                &[s(x)],
                &[&[d]],
            );
        }
        // Higher orders: the weight is a function of primal values only.
        let g2 = grad(&g, &[0]).unwrap();
        check(
            &format!("d2 {}(x, 0) at 0", op.name()),
            &g2,
            &[s(0.0)],
            &[&[0.0]],
        );
    }
}

/// Second and third order through a tie: `max(x^2, y^2)` at `x = y = 1` has
/// gradient `0.5 * (2x, 2y)` and Hessian `0.5 * diag(2, 2)`; `max(x^3, 1)` at
/// `x = 1` has derivatives `0.5 * 3x^2`, `0.5 * 6x`, `0.5 * 6` (JAX: the
/// weights are selects of comparisons, whose derivative is zero).
#[test]
fn higher_order_at_ties() {
    let f = build(
        "max_sq",
        &[("x", Shape::scalar()), ("y", Shape::scalar())],
        |f, p| {
            let a = f.mul(p[0], p[0]);
            let b = f.mul(p[1], p[1]);
            vec![f.binary(BinaryOp::Max, a, b)]
        },
    );
    let g = grad(&f, &[0, 1]).unwrap();
    // The Hessian's rows: grad of each gradient component.
    let pick = |i: usize| {
        let mut h = g.clone();
        h.outs = vec![g.outs[i]];
        grad(&h, &[0, 1]).unwrap()
    };
    let (hx, hy) = (pick(0), pick(1));
    for (x, y, gx, gy, hxx, hyy) in [
        (1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
        (1.0, -1.0, 1.0, -1.0, 1.0, 1.0),
        (2.0, 1.0, 4.0, 0.0, 2.0, 0.0),
    ] {
        let ctx = format!("max(x^2, y^2) at ({x}, {y})");
        check(&ctx, &g, &[s(x), s(y)], &[&[gx], &[gy]]);
        check(&ctx, &hx, &[s(x), s(y)], &[&[hxx], &[0.0]]);
        check(&ctx, &hy, &[s(x), s(y)], &[&[0.0], &[hyy]]);
    }

    let f = build("max_cube", &[("x", Shape::scalar())], |f, p| {
        let c = f.unary(UnaryOp::Powi(3), p[0]);
        let one = f.literal(1.0, F);
        vec![f.binary(BinaryOp::Max, c, one)]
    });
    let d1 = grad(&f, &[0]).unwrap();
    let d2 = grad(&d1, &[0]).unwrap();
    let d3 = grad(&d2, &[0]).unwrap();
    check("max(x^3, 1)' at 1", &d1, &[s(1.0)], &[&[1.5]]);
    check("max(x^3, 1)'' at 1", &d2, &[s(1.0)], &[&[3.0]]);
    check("max(x^3, 1)''' at 1", &d3, &[s(1.0)], &[&[3.0]]);
    check("max(x^3, 1)''' at 2", &d3, &[s(2.0)], &[&[6.0]]);
}

/// `vmap(grad(max))` over a batch mixing ties, strict orders and NaNs, with
/// both operands batched, and with the second one unbatched.
#[test]
fn vmap_of_gradient_at_ties_and_nan() {
    for op in [BinaryOp::Max, BinaryOp::Min] {
        let g = grad(&binary(op), &[0, 1]).unwrap();
        let a = [1.0, 2.0, NAN, 1.0, 0.0, -3.0];
        let b = [1.0, 1.0, 1.0, NAN, -0.0, 5.0];
        // The reference: the per-example rule, written out.
        let weights = |a: f64, b: f64| {
            let y = op.eval(a, b);
            let w = |x: f64, o: f64| {
                if x == y {
                    if o == y {
                        0.5
                    } else {
                        1.0
                    }
                } else {
                    0.0
                }
            };
            (w(a, b), w(b, a))
        };
        let (ga, gb): (Vec<f64>, Vec<f64>) = a.iter().zip(&b).map(|(a, b)| weights(*a, *b)).unzip();
        let n = a.len();
        let v = vmap(&g, &[Some(0), Some(0)]).unwrap();
        let args = [
            Tensor::new(F, vec![n], a.to_vec()),
            Tensor::new(F, vec![n], b.to_vec()),
        ];
        check(&format!("vmap grad {}", op.name()), &v, &args, &[&ga, &gb]);

        // The second operand unbatched (a scalar 1 for every example).
        let v = vmap(&g, &[Some(0), None]).unwrap();
        let (ga, gb): (Vec<f64>, Vec<f64>) = a.iter().map(|a| weights(*a, 1.0)).unzip();
        let args = [Tensor::new(F, vec![n], a.to_vec()), s(1.0)];
        check(
            &format!("vmap grad {}(a, 1)", op.name()),
            &v,
            &args,
            &[&ga, &gb],
        );
    }
}

/// `vmap` of the derivatives of `max(x, 0)` and `x^0`, and of the second
/// derivative of `x^2` (the `powi[1]` it contains simplifies away).
#[test]
fn vmap_of_relu_and_powi_derivatives() {
    let xs = [0.0, -0.0, -1.0, 1.0, NAN, 2.0];
    let n = xs.len();
    let arg = [Tensor::new(F, vec![n], xs.to_vec())];
    let relu = build("relu", &[("x", Shape::scalar())], |f, p| {
        let z = f.literal(0.0, F);
        vec![f.binary(BinaryOp::Max, p[0], z)]
    });
    let v = vmap(&grad(&relu, &[0]).unwrap(), &[Some(0)]).unwrap();
    check("vmap relu'", &v, &arg, &[&[0.5, 0.5, 0.0, 1.0, 0.0, 1.0]]);
    for (k, want) in [(0, [0.0; 6]), (2, [2.0; 6])] {
        let ds = powi_derivatives(k);
        let v = vmap(&ds[2], &[Some(0)]).unwrap();
        // x^2'' is 2 even at NaN: the derivative no longer depends on x.
        check(&format!("vmap (x^{k})''"), &v, &arg, &[&want]);
        let v = vmap(&ds[1], &[Some(0)]).unwrap();
        let want1: Vec<f64> = xs.iter().map(|x| powi_derivative(k, 1, *x)).collect();
        check(&format!("vmap (x^{k})'"), &v, &arg, &[&want1]);
    }
}

/// f, f', f'', f''' of `x^n` by repeated `grad`.
fn powi_derivatives(n: i32) -> Vec<Function> {
    let mut ds = vec![build("p", &[("x", Shape::scalar())], |f, p| {
        vec![f.unary(UnaryOp::Powi(n), p[0])]
    })];
    for _ in 0..3 {
        let d = grad(ds.last().unwrap(), &[0]).unwrap();
        ds.push(d);
    }
    ds
}

/// The k-th derivative of `x^n` at `x`: `n (n-1) ... (n-k+1) x^(n-k)`, and
/// exactly 0 once the falling factorial reaches 0 (JAX's `integer_pow`).
/// The coefficient is exact integer arithmetic.
fn powi_derivative(n: i32, k: i32, x: f64) -> f64 {
    let c: i128 = (0..k).map(|j| n as i128 - j as i128).product();
    if c == 0 {
        0.0
    } else {
        c as f64 * x.powi(n - k)
    }
}

#[test]
fn powi_at_zero_in_every_order() {
    for n in [0, 1, 2, 3, 4, -1, -2, -3] {
        let ds = powi_derivatives(n);
        for x in [0.0, -0.0, 1.5, -0.5] {
            for (k, d) in ds.iter().enumerate() {
                let want = powi_derivative(n, k as i32, x);
                check(
                    &format!("d^{k}/dx^{k} x^{n} at {x}"),
                    d,
                    &[s(x)],
                    &[&[want]],
                );
            }
        }
    }
    // x^0 is 1 even at NaN and infinity; its derivative is 0 there too, in
    // forward and reverse mode (a symbolic zero, not t * 0).
    let ds = powi_derivatives(0);
    let (j, v) = (jvp(&ds[0]), vjp(&ds[0]));
    for (x, t) in [(0.0, 1.0), (NAN, 1.0), (2.0, f64::INFINITY)] {
        check("jvp x^0", &j, &[s(x), s(t)], &[&[1.0], &[0.0]]);
        check("vjp x^0", &v, &[s(x), s(t)], &[&[1.0], &[0.0]]);
    }
    for x in [NAN, f64::INFINITY] {
        check("x^0", &ds[0], &[s(x)], &[&[1.0]]);
        for d in &ds[1..] {
            check("d x^0", d, &[s(x)], &[&[0.0]]);
        }
    }
}

/// `n - 1` overflows i32 at `n = i32::MIN`; the rule computes `x^(n-1)` as
/// `x^n * x^-1` there instead of panicking.
#[test]
fn powi_at_the_smallest_exponent() {
    for n in [i32::MIN, i32::MIN + 1] {
        let ds = powi_derivatives(n);
        for x in [1.0, -1.0] {
            for (k, d) in ds.iter().enumerate() {
                // |x| = 1: x^m is ±1; the coefficient is exact in i128, and
                // the rule's f64 products of it round (hence the tolerance).
                let c: i128 = (0..k as i128).map(|j| n as i128 - j).product();
                let sign = if (n as i64 - k as i64) % 2 == 0 {
                    1.0
                } else {
                    x
                };
                let want = c as f64 * sign;
                let ctx = format!("d^{k}/dx^{k} x^{n} at {x}");
                check_rel(&ctx, d, &[s(x)], &[&[want]], 1e-15);
            }
        }
    }
}

/// f, f', f'', f''' of one unary op by repeated `grad`.
fn unary_derivatives(op: UnaryOp) -> Vec<Function> {
    let mut ds = vec![build("u", &[("x", Shape::scalar())], |f, p| {
        vec![f.unary(op, p[0])]
    })];
    for _ in 0..3 {
        let d = grad(ds.last().unwrap(), &[0]).unwrap();
        ds.push(d);
    }
    ds
}

/// Rounding and sign are piecewise constant; JAX gives their derivative as
/// 0 everywhere, at the jumps too (`floor_p`, `round_p`, `sign_p` have zero
/// JVPs), also for NaN and infinite arguments, in every order. Their values:
/// Rust's `round` goes halfway away from zero, `round_ties_even` is
/// `jnp.round`, `sign(±0)` is ±0 as `lax.sign`.
#[test]
fn rounding_and_sign_have_zero_derivatives_in_every_order() {
    use oxla_core::ops::elementwise::Rounding;
    let mut ops: Vec<UnaryOp> = Rounding::ALL.into_iter().map(UnaryOp::Round).collect();
    ops.extend([UnaryOp::Sign, UnaryOp::Signum]);
    for op in ops {
        let ds = unary_derivatives(op);
        for x in [0.0, -0.0, 0.5, -2.5, 1.0, 3.7, NAN, f64::INFINITY] {
            for d in &ds[1..] {
                check(&format!("d {} at {x}", op.name()), d, &[s(x)], &[&[0.0]]);
            }
        }
    }
    let value = |op, x| eval(&unary_derivatives(op)[0], &[s(x)])[0].data[0];
    assert_eq!(value(UnaryOp::Round(Rounding::HalfAway), 2.5), 3.0);
    assert_eq!(value(UnaryOp::Round(Rounding::HalfAway), -0.5), -1.0);
    assert_eq!(value(UnaryOp::Round(Rounding::HalfEven), 2.5), 2.0);
    assert_eq!(
        value(UnaryOp::Round(Rounding::HalfEven), -0.5).to_bits(),
        (-0.0f64).to_bits()
    );
    assert_eq!(value(UnaryOp::Sign, -0.0).to_bits(), (-0.0f64).to_bits());
    assert_eq!(value(UnaryOp::Signum, -0.0), -1.0);
}

/// `expm1`'s derivatives are all `e^x`. JAX writes the first as
/// `expm1(x) + 1`, which is exactly 0 once expm1 rounds to -1 (x < -37.5 in
/// f64); oxla's `exp(x)` keeps the relative accuracy there.
#[test]
fn expm1_derivatives_are_exp_in_every_order() {
    let ds = unary_derivatives(UnaryOp::ExpM1);
    for x in [-40.0, -30.0, -1e-10, 0.0, 0.75, 20.0] {
        for (k, d) in ds.iter().enumerate() {
            let want = if k == 0 { f64::exp_m1(x) } else { x.exp() };
            check_rel(
                &format!("d^{k} expm1 at {x}"),
                d,
                &[s(x)],
                &[&[want]],
                1e-15,
            );
        }
    }
}
