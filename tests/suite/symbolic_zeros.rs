//! Symbolic zeros (issue 27): a value whose derivative is NaN (`sqrt` or
//! `ln` of a negative number, `0/0`) that only steers control flow — a
//! comparison, `stop_gradient`, an integer cast, a cond's predicate, a loop's
//! trip condition, a carry read only by predicates — gets no cotangent at
//! all, so its NaN local derivative is never multiplied by a zero and the
//! gradient is what it would be without that dead computation.
//!
//! Which construct lowers to what decides JAX's answer, and these tests
//! follow it:
//! - an `if` on a **scalar** condition is a cond (`lax.cond`): only the
//!   taken branch is differentiated, so a NaN on the untaken side, or in the
//!   predicate, never reaches the gradient;
//! - an `if` on an **array** condition, `where_` and `select` are selects
//!   (`jnp.where`): both sides are differentiated and the side not taken
//!   gets the cotangent `select(c, 0, ct)`, a *materialized* zero, so a NaN
//!   local derivative there gives 0·NaN = NaN in that entry (the "double
//!   where" case of JAX's FAQ), while the comparison feeding the select
//!   carries no derivative at all;
//! - comparisons, `stop_gradient` and float → integer casts have no
//!   derivative (JAX: no JVP rule / `convert_element_type` to an integer
//!   has a zero tangent), so a NaN in front of them stops there;
//! - loops: a loop's trip condition is never differentiated (as JAX's
//!   `while_loop` does not differentiate `cond_fun`), and a carry read only
//!   by predicates gets no cotangent (as JAX's scan DCE drops it).
//!
//! Expected gradients come from the same body written as plain Rust:
//! central differences where the function is smooth, or its derivative
//! written out by hand in plain Rust (`stop_gradient`, integer casts, where
//! a difference quotient would see the steps).

use oxla::{grad, transforms};

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs()))
}

fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-6;
    (f(x + h) - f(x - h)) / (2.0 * h)
}

fn fd_grad(x: &[f64], f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    let h = 1e-6;
    (0..x.len())
        .map(|k| {
            let mut p = x.to_vec();
            let mut m = x.to_vec();
            p[k] += h;
            m[k] -= h;
            (f(&p) - f(&m)) / (2.0 * h)
        })
        .collect()
}

/// Checks `g` against central differences of `f_ref` at `x` (which must be
/// away from the function's kinks), and that it is finite.
fn check_scalar(name: &str, g: f64, f_ref: impl Fn(f64) -> f64, x: f64) {
    assert!(g.is_finite(), "{name}: gradient at {x} is {g}");
    let fd = central(f_ref, x);
    assert!(close(g, fd, 1e-6), "{name}: at {x}: {g} vs {fd}");
}

// ---- a comparison as an `if` condition (a cond) -------------------------------

/// `t` is NaN for x < 2; it feeds only the condition.
#[transforms(grad(cmp_sqrt_grad), jvp(cmp_sqrt_jvp), hessian(cmp_sqrt_hessian))]
fn cmp_sqrt(x: f64) -> f64 {
    let t = (x - 2.0).sqrt();
    if t > 0.5 {
        x * x
    } else {
        3.0 * x + x.sin()
    }
}

fn cmp_sqrt_ref(x: f64) -> f64 {
    let t = (x - 2.0).sqrt();
    if t > 0.5 {
        x * x
    } else {
        3.0 * x + x.sin()
    }
}

/// `l` is NaN for x < 3 (`ln` of a negative number), `q` is NaN everywhere
/// (`0/0`); both feed only conditions.
#[grad(cmp_ln_grad)]
fn cmp_ln(x: f64) -> f64 {
    let l = (x - 3.0).ln();
    let z = x - x;
    let q = z / z;
    let mut y = x * x * x;
    if l < 1.0 {
        y = y - x;
    }
    if q > 0.0 {
        y = y * 2.0;
    }
    y
}

fn cmp_ln_ref(x: f64) -> f64 {
    let l = (x - 3.0).ln();
    let z = x - x;
    let q = z / z;
    let mut y = x * x * x;
    if l < 1.0 {
        y -= x;
    }
    if q > 0.0 {
        y *= 2.0;
    }
    y
}

#[test]
fn a_nan_in_a_scalar_if_condition_does_not_reach_the_gradient() {
    for x in [-3.0, -0.5, 0.0, 1.0, 1.9, 2.1, 2.5, 4.0] {
        check_scalar("cmp_sqrt", cmp_sqrt_grad(x), cmp_sqrt_ref, x);
        // Forward mode agrees with reverse mode.
        let (v, t) = cmp_sqrt_jvp(x, 1.0);
        assert_eq!(v, cmp_sqrt_ref(x), "value at {x}");
        assert!(close(t, cmp_sqrt_grad(x), 1e-14), "jvp at {x}: {t}");
        // The Hessian too (forward over reverse).
        let h = cmp_sqrt_hessian(x);
        let fd = central(cmp_sqrt_grad, x);
        assert!(
            h.is_finite() && close(h, fd, 1e-5),
            "hessian at {x}: {h} vs {fd}"
        );
    }
    for x in [-2.0, 0.5, 2.9, 3.5, 4.0, 25.0] {
        check_scalar("cmp_ln", cmp_ln_grad(x), cmp_ln_ref, x);
    }
}

// ---- `stop_gradient` and integer casts ---------------------------------------

/// `s` is NaN for x < 2 and has no derivative; it scales the result where
/// it is defined and large enough.
#[grad(stopped_grad)]
fn stopped(x: f64) -> f64 {
    let s = stop_gradient((x - 2.0).sqrt());
    if s > 1.0 {
        x * s
    } else {
        x * x
    }
}

/// The derivative of `stopped`, `s` held constant (written out in plain
/// Rust: a difference quotient would differentiate `s`).
fn stopped_grad_ref(x: f64) -> f64 {
    let s = (x - 2.0).sqrt();
    if s > 1.0 {
        s
    } else {
        2.0 * x
    }
}

/// `k` is an integer: NaN as i32 is 0, and a cast to an integer has a zero
/// derivative.
#[grad(cast_grad)]
fn cast(x: f64) -> f64 {
    let k = ((x - 2.0).sqrt() * 3.0) as i32;
    let m = (x - 5.0).ln() as i64;
    x * x + (k as f64) + (m as f64) * x
}

/// The derivative of `cast` with the casts held constant, in plain Rust.
fn cast_grad_ref(x: f64) -> f64 {
    let m = (x - 5.0).ln() as i64;
    2.0 * x + m as f64
}

#[test]
fn a_nan_under_stop_gradient_or_an_integer_cast_does_not_reach_the_gradient() {
    for x in [-1.0, 0.0, 1.5, 2.5, 3.5, 6.0, 40.0] {
        let g = stopped_grad(x);
        assert!(g.is_finite(), "stopped at {x}: {g}");
        assert!(close(g, stopped_grad_ref(x), 1e-14), "stopped at {x}: {g}");
        let g = cast_grad(x);
        assert!(g.is_finite(), "cast at {x}: {g}");
        assert!(close(g, cast_grad_ref(x), 1e-14), "cast at {x}: {g}");
    }
}

// ---- a cond's result read only by a later predicate ---------------------------

/// The first `if` (a cond) gives two results; `b`, NaN on both sides for
/// these x (`sqrt`/`ln` of negative numbers), is read only by the second
/// `if`'s condition.
#[transforms(grad(steer_grad), jvp(steer_jvp))]
fn steer(x: f64) -> f64 {
    let mut a = x;
    let mut b = (x - 6.0).ln();
    if x > 0.0 {
        a = x * x;
        b = (x - 5.0).sqrt();
    }
    if b > 1.0 {
        a * 2.0
    } else {
        a + x
    }
}

fn steer_ref(x: f64) -> f64 {
    let (a, b) = if x > 0.0 {
        (x * x, (x - 5.0).sqrt())
    } else {
        (x, (x - 6.0).ln())
    };
    if b > 1.0 {
        a * 2.0
    } else {
        a + x
    }
}

#[test]
fn a_cond_result_that_only_steers_a_later_if_gets_no_cotangent() {
    for x in [-4.0, -1.0, 0.5, 2.0, 4.5, 5.5, 9.0] {
        check_scalar("steer", steer_grad(x), steer_ref, x);
        let (_, t) = steer_jvp(x, 1.0);
        assert!(close(t, steer_grad(x), 1e-14), "jvp at {x}: {t}");
    }
}

/// JAX's convention for a NaN computed *outside* a cond and read by the
/// branch that is not taken: the cond's transpose gives every operand the
/// taken branch's cotangent, a materialized zero where that branch does not
/// read it, and the zero meets the NaN local derivative outside (JAX's
/// `_cond_transpose` instantiates zeros the same way; its FAQ's remedy is to
/// compute the unsafe value inside the branch). The gradient is NaN there,
/// and finite where the branch reading `t` is taken.
#[grad(outside_grad)]
fn outside(x: f64) -> f64 {
    let t = (x - 5.0).sqrt();
    if x > 5.0 {
        x * t
    } else {
        x * x
    }
}

fn outside_ref(x: f64) -> f64 {
    if x > 5.0 {
        x * (x - 5.0).sqrt()
    } else {
        x * x
    }
}

#[test]
fn a_nan_operand_of_a_cond_read_only_by_the_untaken_branch_is_nan_as_in_jax() {
    for x in [-1.0, 2.0, 4.9] {
        let g = outside_grad(x);
        assert!(g.is_nan(), "at {x}: {g}");
    }
    for x in [5.5, 9.0] {
        check_scalar("outside", outside_grad(x), outside_ref, x);
    }
}

// ---- arrays: a scalar `if` (a cond), `where_` and an array `if` (selects) ----

/// A scalar condition in an array function is a cond on the kernel path.
#[grad(arr_cond_grad, wrt = (x, s))]
fn arr_cond(x: &[f64], s: f64) -> f64 {
    let t = (s - 2.0).sqrt();
    if t > 0.5 {
        sum(x * x) * s
    } else {
        sum(x.sin()) + s
    }
}

fn arr_cond_ref(x: &[f64], s: f64) -> f64 {
    let t = (s - 2.0).sqrt();
    if t > 0.5 {
        x.iter().map(|v| v * v).sum::<f64>() * s
    } else {
        x.iter().map(|v| v.sin()).sum::<f64>() + s
    }
}

/// A comparison of NaN values as a `where_` condition: both sides are
/// differentiated (finite derivatives), the comparison carries none.
#[grad(arr_where_cmp_grad)]
fn arr_where_cmp(x: &[f64]) -> f64 {
    let t = (x - 2.0).sqrt();
    sum(where_(t > 0.5, x * x, x * 3.0))
}

fn arr_where_cmp_ref(x: &[f64]) -> f64 {
    x.iter()
        .map(|v| {
            if (v - 2.0).sqrt() > 0.5 {
                v * v
            } else {
                v * 3.0
            }
        })
        .sum()
}

/// The same through `stop_gradient` and an array `if` on an array
/// condition (a select).
#[grad(arr_stopped_grad)]
fn arr_stopped(x: &[f64]) -> f64 {
    let t = stop_gradient((x - 2.0).ln());
    let y = if t > 0.0 { x * x } else { x.sin() };
    sum(y)
}

fn arr_stopped_ref(x: &[f64]) -> f64 {
    x.iter()
        .map(|v| if (v - 2.0).ln() > 0.0 { v * v } else { v.sin() })
        .sum()
}

#[test]
fn a_nan_in_an_array_condition_does_not_reach_the_gradient() {
    let xs = [vec![-1.0, 0.5, 2.1, 3.5, 7.0], vec![1.0, 2.5], vec![-2.0]];
    for x in &xs {
        for s in [-1.0, 1.0, 2.1, 3.0, 4.0] {
            let (dx, ds) = arr_cond_grad(x, s);
            assert!(ds.is_finite(), "{x:?} {s}: {ds}");
            let fx = fd_grad(x, |x| arr_cond_ref(x, s));
            for (a, b) in dx.iter().zip(&fx) {
                assert!(close(*a, *b, 1e-6), "d/dx at {x:?} {s}: {dx:?} vs {fx:?}");
            }
            let fs = central(|s| arr_cond_ref(x, s), s);
            assert!(close(ds, fs, 1e-6), "d/ds at {x:?} {s}: {ds} vs {fs}");
        }
        for (name, g, f) in [
            (
                "where_cmp",
                arr_where_cmp_grad(x),
                arr_where_cmp_ref as fn(&[f64]) -> f64,
            ),
            ("stopped", arr_stopped_grad(x), arr_stopped_ref),
        ] {
            let fd = fd_grad(x, f);
            assert!(g.iter().all(|d| d.is_finite()), "{name} {x:?}: {g:?}");
            for (a, b) in g.iter().zip(&fd) {
                assert!(close(*a, *b, 1e-6), "{name} at {x:?}: {g:?} vs {fd:?}");
            }
        }
    }
}

/// JAX's "double where" case: `where(x > 0, sqrt(x), x)` differentiates
/// `sqrt` at every entry, and the side not taken gets a materialized zero
/// cotangent, so the gradient is 0·NaN (x < 0) or 0·inf (x = 0) = NaN
/// there, in oxla as in JAX; the array `if` is the same select. Clamping the
/// argument first (the "double where" trick) makes it finite.
#[grad(where_sqrt_grad)]
fn where_sqrt(x: &[f64]) -> f64 {
    sum(where_(x > 0.0, x.sqrt(), x))
}

#[grad(if_sqrt_grad)]
fn if_sqrt(x: &[f64]) -> f64 {
    let y = if x > 0.0 { x.sqrt() } else { x };
    sum(y)
}

#[grad(double_where_grad)]
fn double_where(x: &[f64]) -> f64 {
    let safe = where_(x > 0.0, x, ones_like(x));
    sum(where_(x > 0.0, safe.sqrt(), x))
}

fn where_sqrt_ref(x: &[f64]) -> f64 {
    x.iter().map(|v| if *v > 0.0 { v.sqrt() } else { *v }).sum()
}

#[test]
fn a_select_differentiates_both_sides_as_jax_where_does() {
    let x = vec![-2.0, -0.5, 0.0, 0.25, 4.0];
    let fd = fd_grad(&x, where_sqrt_ref);
    for (name, g) in [("where_", where_sqrt_grad(&x)), ("if", if_sqrt_grad(&x))] {
        for (k, v) in x.iter().enumerate() {
            if *v > 0.0 {
                assert!(close(g[k], fd[k], 1e-6), "{name} at {v}: {}", g[k]);
            } else {
                assert!(g[k].is_nan(), "{name} at {v}: {} (JAX: NaN)", g[k]);
            }
        }
    }
    let g = double_where_grad(&x);
    for (k, v) in x.iter().enumerate() {
        if *v != 0.0 {
            assert!(close(g[k], fd[k], 1e-6), "double where at {v}: {}", g[k]);
        } else {
            // At the kink the side taken is `x` itself.
            let want = central(|v| v, 0.0);
            assert!(close(g[k], want, 1e-9), "double where at 0: {}", g[k]);
        }
    }
}

// ---- loops: a trip condition and carries that only steer ----------------------

/// A `while` loop whose condition reads `lim`, which has a NaN derivative
/// (the tangent of `r`) for x < 5; the body does not read it.
#[grad(trip_grad)]
fn trip(x: f64) -> f64 {
    let r = (x - 5.0).sqrt();
    let lim = if r > 0.0 { r } else { 0.0 };
    let mut s = x;
    let mut k = 0.0;
    while k < 3.0 + lim {
        s = s * 0.5 + x;
        k += 1.0;
    }
    s
}

fn trip_ref(x: f64) -> f64 {
    let r = (x - 5.0).sqrt();
    let lim = if r > 0.0 { r } else { 0.0 };
    let mut s = x;
    let mut k = 0.0;
    while k < 3.0 + lim {
        s = s * 0.5 + x;
        k += 1.0;
    }
    s
}

/// A carry `r`, NaN for x < 5, read only by the body's `if` condition.
#[transforms(grad(carry_steers_grad, wrt = x), jvp(carry_steers_jvp, wrt = x))]
fn carry_steers(x: f64, n: usize) -> f64 {
    let mut r = (x - 5.0).sqrt();
    let mut s = x;
    for _ in 0..n {
        if r > 1.0 {
            s = s * 0.5;
        } else {
            s = s * x;
        }
        r = r * 0.9;
    }
    s
}

fn carry_steers_ref(x: f64, n: usize) -> f64 {
    let mut r = (x - 5.0).sqrt();
    let mut s = x;
    for _ in 0..n {
        if r > 1.0 {
            s *= 0.5;
        } else {
            s *= x;
        }
        r *= 0.9;
    }
    s
}

/// A carry whose own update has a NaN derivative (`ln` of a negative
/// number after the first step), read only by a predicate; in an array
/// function (the kernel path's loop step).
#[grad(carry_nan_update_grad, wrt = x)]
fn carry_nan_update(x: &[f64], n: usize) -> f64 {
    let mut r = sum(x);
    let mut s = 0.0;
    for _ in 0..n {
        if r > 0.0 {
            s += sum(x * x);
        } else {
            s += sum(x.sin());
        }
        r = (r - 10.0).ln();
    }
    s
}

fn carry_nan_update_ref(x: &[f64], n: usize) -> f64 {
    let mut r: f64 = x.iter().sum();
    let mut s = 0.0;
    for _ in 0..n {
        if r > 0.0 {
            s += x.iter().map(|v| v * v).sum::<f64>();
        } else {
            s += x.iter().map(|v| v.sin()).sum::<f64>();
        }
        r = (r - 10.0).ln();
    }
    s
}

#[test]
fn a_nan_read_only_by_a_while_condition_does_not_reach_the_gradient() {
    // Away from the x where the trip count changes.
    for x in [-1.0, 1.0, 2.5, 4.0, 6.5, 15.0] {
        check_scalar("trip", trip_grad(x), trip_ref, x);
    }
}

#[test]
fn a_loop_carry_read_only_by_a_condition_gets_no_cotangent() {
    // Away from the x where a branch changes (x = 6 for n >= 1).
    for x in [-1.0, 1.0, 2.5, 4.0, 6.5, 14.0] {
        for n in [0usize, 1, 4] {
            let g = carry_steers_grad(x, n);
            check_scalar("carry_steers", g, |x| carry_steers_ref(x, n), x);
            let (_, t) = carry_steers_jvp(x, n, 1.0);
            assert!(close(t, g, 1e-12), "jvp at {x} {n}: {t} vs {g}");
        }
    }
}

#[test]
fn a_loop_carry_with_a_nan_update_read_only_by_a_condition_gets_no_cotangent() {
    for x in [vec![0.3, -0.2, 0.4], vec![2.0, 3.0], vec![-1.0; 4]] {
        for n in [0usize, 1, 3] {
            let g = carry_nan_update_grad(&x, n);
            assert!(g.iter().all(|d| d.is_finite()), "{x:?} {n}: {g:?}");
            let fd = fd_grad(&x, |x| carry_nan_update_ref(x, n));
            for (a, b) in g.iter().zip(&fd) {
                assert!(close(*a, *b, 1e-6), "{x:?} {n}: {g:?} vs {fd:?}");
            }
        }
    }
}

// ---- forward mode: a carry with no tangent stays a symbolic zero --------------

/// `r` starts at `c`, which is held constant (`wrt = x`); at c = 0 the
/// slope of `sqrt(r)` is infinite, so a materialized zero tangent for `r`
/// would give inf·0 = NaN. Its tangent is a symbolic zero in every step
/// (JAX's loop JVP finds the carries with a nonzero tangent by a fixpoint).
#[transforms(jvp(fwd_zero_jvp, wrt = x), grad(fwd_zero_grad, wrt = x))]
fn fwd_zero(x: f64, c: f64) -> f64 {
    let mut r = c;
    let mut s = x;
    for _ in 0..3 {
        s = s * x + r.sqrt();
        r = r * 0.5;
    }
    s
}

fn fwd_zero_ref(x: f64, c: f64) -> f64 {
    let mut r = c;
    let mut s = x;
    for _ in 0..3 {
        s = s * x + r.sqrt();
        r *= 0.5;
    }
    s
}

#[test]
fn a_loop_carry_without_a_tangent_is_a_symbolic_zero_in_forward_mode() {
    for x in [-1.5, 0.5, 2.0] {
        for c in [0.0, 1.0] {
            let (v, t) = fwd_zero_jvp(x, c, 1.0);
            assert_eq!(v, fwd_zero_ref(x, c), "value at {x} {c}");
            check_scalar("fwd_zero jvp", t, |x| fwd_zero_ref(x, c), x);
            let g = fwd_zero_grad(x, c);
            assert!(close(g, t, 1e-12), "grad at {x} {c}: {g} vs {t}");
        }
    }
}
