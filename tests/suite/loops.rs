//! `for` and `while` loops inside annotated functions, end to end: each
//! function's values are checked against the same body as plain Rust (the
//! loop run by Rust itself) and against its unrolled form, its derivatives
//! against central finite differences and against each other (forward and
//! reverse mode), its batched form with per-example trip counts against a
//! loop per example, and checkpointed reverse mode against the plain one
//! (bit for bit, with a smaller tape).

use oxla::{grad, transforms};

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs()))
}

fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-6;
    (f(x + h) - f(x - h)) / (2.0 * h)
}

// ---- a for loop over an integer parameter ---------------------------------------

/// `Σ_{i<n} (i+1)·x^i` by Horner's rule on the reversed coefficients, as
/// plain Rust.
fn series_ref(x: f64, n: usize) -> f64 {
    let mut acc = 0.0;
    for i in 0..n {
        acc = acc * x + (n - i) as f64;
    }
    acc.sin()
}

#[transforms(grad(series_grad), jvp(series_jvp), hessian(series_hessian, wrt = x))]
fn series(x: f64, n: usize) -> f64 {
    let mut acc = 0.0;
    for i in 0..n {
        let k = n as f64 - i as f64;
        acc = acc * x + k;
    }
    acc.sin()
}

#[test]
fn a_for_loop_over_an_integer_parameter_matches_rust() {
    for n in [0usize, 1, 2, 7] {
        for x in [-0.7, 0.3, 1.1] {
            assert_eq!(series(x, n), series_ref(x, n), "n = {n}, x = {x}");
            let d = central(|x| series_ref(x, n), x);
            assert!(
                close(series_grad(x, n), d, 1e-7),
                "grad n = {n}: {} vs {d}",
                series_grad(x, n)
            );
            let (v, t) = series_jvp(x, n, 1.0);
            assert_eq!(v, series(x, n));
            assert!(close(t, series_grad(x, n), 1e-12), "jvp vs grad");
            let dd = central(|x| series_grad(x, n), x);
            assert!(
                close(series_hessian(x, n), dd, 1e-6),
                "hessian n = {n}: {} vs {dd}",
                series_hessian(x, n)
            );
        }
    }
}

// ---- a loop against its unrolled form ------------------------------------------

#[grad(unrolled_grad)]
fn unrolled(x: f64, y: f64) -> f64 {
    let mut a = x;
    let mut b = y;
    let t = a * b + a.sin();
    b = b - 0.1 * t;
    a = a + 0.2 * b.tanh();
    let t = a * b + a.sin();
    b = b - 0.1 * t;
    a = a + 0.2 * b.tanh();
    let t = a * b + a.sin();
    b = b - 0.1 * t;
    a = a + 0.2 * b.tanh();
    a * b
}

#[grad(rolled_grad)]
fn rolled(x: f64, y: f64) -> f64 {
    let mut a = x;
    let mut b = y;
    for _ in 0..3 {
        let t = a * b + a.sin();
        b -= 0.1 * t;
        a += 0.2 * b.tanh();
    }
    a * b
}

#[test]
fn a_loop_equals_its_unrolled_form() {
    for (x, y) in [(0.3, -0.4), (1.2, 0.8)] {
        assert_eq!(rolled(x, y), unrolled(x, y));
        let (g, u) = (rolled_grad(x, y), unrolled_grad(x, y));
        assert!(
            close(g.0, u.0, 1e-14) && close(g.1, u.1, 1e-14),
            "{g:?} vs {u:?}"
        );
    }
}

// ---- Newton's method: a while loop in reverse mode ------------------------------

fn newton_ref(a: f64, tol: f64) -> f64 {
    let mut x = a.max(1.0);
    while (x * x - a).abs() > tol * a {
        x = 0.5 * (x + a / x);
    }
    x
}

#[transforms(grad(newton_grad, wrt = a), value_and_grad(newton_vg, wrt = a))]
fn newton(a: f64, tol: f64) -> f64 {
    let mut x = a.max(1.0);
    while (x * x - a) * (x * x - a) > tol * a * tol * a {
        x = 0.5 * (x + a / x);
    }
    x
}

#[test]
fn reverse_mode_through_a_while_loop() {
    for a in [0.25, 2.0, 50.0] {
        let v = newton(a, 1e-14);
        assert!(
            close(v, newton_ref(a, 1e-14), 1e-15),
            "{v} vs {}",
            newton_ref(a, 1e-14)
        );
        let g = newton_grad(a, 1e-14);
        // At convergence the derivative is d√a/da = 1/(2√a).
        assert!(close(g, 0.5 / a.sqrt(), 1e-9), "a = {a}: {g}");
        let (v2, g2) = newton_vg(a, 1e-14);
        assert_eq!((v2, g2), (v, g));
    }
}

// ---- checkpointing ---------------------------------------------------------------

/// An explicit Euler integration of `u' = -k·u·v, v' = u - v` over `n` steps.
#[grad(euler_grad, wrt = k)]
fn euler(k: f64, n: usize) -> f64 {
    let mut u = 1.0;
    let mut v = 0.5;
    let dt = 0.001;
    for _ in 0..n {
        let du = -k * u * v;
        let dv = u - v;
        u += dt * du;
        v += dt * dv;
    }
    u + v
}

#[grad(euler_ckpt_grad, wrt = k)]
fn euler_ckpt(k: f64, n: usize) -> f64 {
    let mut u = 1.0;
    let mut v = 0.5;
    let dt = 0.001;
    for _ in oxla::checkpoint(0..n) {
        let du = -k * u * v;
        let dv = u - v;
        u += dt * du;
        v += dt * dv;
    }
    u + v
}

#[grad(euler_every_grad, wrt = k)]
fn euler_every(k: f64, n: usize) -> f64 {
    let mut u = 1.0;
    let mut v = 0.5;
    let dt = 0.001;
    for _ in oxla::checkpoint_every(100, 0..n) {
        let du = -k * u * v;
        let dv = u - v;
        u += dt * du;
        v += dt * dv;
    }
    u + v
}

#[test]
fn checkpointed_reverse_mode_gives_the_same_gradient_with_less_memory() {
    let n = 10_000;
    oxla::reset_loop_tape_peak();
    let g = euler_grad(1.3, n);
    let all = oxla::loop_tape_peak_bytes();
    oxla::reset_loop_tape_peak();
    let gs = euler_ckpt_grad(1.3, n);
    let sqrt = oxla::loop_tape_peak_bytes();
    oxla::reset_loop_tape_peak();
    let ge = euler_every_grad(1.3, n);
    let every = oxla::loop_tape_peak_bytes();
    assert_eq!(g, gs);
    assert_eq!(g, ge);
    assert_eq!(euler(1.3, n), euler_ckpt(1.3, n));
    // Two f64 carries per step.
    assert_eq!(all, n * 16);
    assert_eq!(sqrt, 2 * 100 * 16);
    assert_eq!(every, (100 + 100) * 16);
    let d = central(|k| euler(k, n), 1.3);
    assert!(close(g, d, 1e-7), "{g} vs {d}");
}

// ---- nested loops, a loop inside an if, constants --------------------------------

const STEPS: usize = 4;
const SCALE: f64 = 0.5;

fn nested_ref(x: f64, m: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..m {
        let mut p = 1.0;
        for _ in 0..=i {
            p *= x;
        }
        if x > 0.0 {
            for _ in 0..STEPS {
                p = p * SCALE + 0.1;
            }
        }
        s += p;
    }
    s
}

#[grad(nested_grad)]
fn nested(x: f64, m: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..m {
        let mut p = 1.0;
        for _ in 0..=i {
            p *= x;
        }
        if x > 0.0 {
            for _ in 0..STEPS {
                p = p * SCALE + 0.1;
            }
        }
        s += p;
    }
    s
}

#[test]
fn nested_loops_and_constants() {
    for x in [-0.8, 0.6, 1.3] {
        for m in [0, 1, 4] {
            assert!(close(nested(x, m), nested_ref(x, m), 1e-15), "x {x} m {m}");
            let d = central(|x| nested_ref(x, m), x);
            assert!(
                close(nested_grad(x, m), d, 1e-7),
                "x {x} m {m}: {} vs {d}",
                nested_grad(x, m)
            );
        }
    }
}

// ---- loops inside helpers and with parameter structs ------------------------------

/// A helper with a loop: `x` to the power `n` by repeated squaring-free
/// multiplication.
#[oxla::func]
fn pow_loop(x: f64, n: usize) -> f64 {
    let mut p = 1.0;
    for _ in 0..n {
        p *= x;
    }
    p
}

#[grad(uses_pow_loop_grad, wrt = x)]
fn uses_pow_loop(x: f64, n: usize) -> f64 {
    pow_loop(x, n) + pow_loop(x.sin(), 2)
}

#[test]
fn a_helper_with_a_loop_is_inlined_and_differentiated_through() {
    for n in [0usize, 1, 4] {
        let x = 0.7f64;
        let want = x.powi(n as i32) + x.sin().powi(2);
        assert!(close(uses_pow_loop(x, n), want, 1e-15));
        let d = central(|x: f64| x.powi(n as i32) + x.sin().powi(2), x);
        assert!(close(uses_pow_loop_grad(x, n), d, 1e-8), "n {n}");
    }
}

#[derive(oxla::Tree, Clone, Debug)]
struct Decay {
    rate: f64,
    gain: f64,
}

#[grad(decayed_grad, wrt = p)]
fn decayed(p: &Decay, x: f64, n: usize) -> f64 {
    let mut y = x;
    for _ in 0..n {
        y = y * (1.0 - p.rate) + p.gain;
    }
    y
}

#[test]
fn a_loop_reads_a_parameter_struct() {
    let p = Decay {
        rate: 0.1,
        gain: 0.3,
    };
    let n = 12;
    let run = |rate: f64, gain: f64| {
        let mut y = 2.0;
        for _ in 0..n {
            y = y * (1.0 - rate) + gain;
        }
        y
    };
    assert!(close(decayed(&p, 2.0, n), run(0.1, 0.3), 1e-15));
    let g = decayed_grad(&p, 2.0, n);
    assert!(close(g.rate, central(|r| run(r, 0.3), 0.1), 1e-8), "{g:?}");
    assert!(close(g.gain, central(|k| run(0.1, k), 0.3), 1e-8), "{g:?}");
}

// ---- break and continue ---------------------------------------------------------

/// Σ x[i]² until it passes `limit` (the term that passes it included), as
/// plain Rust.
fn first_passage_ref(x: &[f64], limit: f64) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += x[i] * x[i];
        if total > limit {
            break;
        }
    }
    total
}

#[transforms(grad(first_passage_grad, wrt = x), jvp(first_passage_jvp, wrt = x))]
fn first_passage(x: &[f64], limit: f64) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += x[i] * x[i];
        if total > limit {
            break;
        }
    }
    total
}

/// Square roots of the positive entries, skipping negatives, until an
/// entry above `stop`; with an inclusive range.
fn skipping_ref(x: &[f64], stop: f64) -> f64 {
    let mut s = 0.0;
    for k in 0..=x.len() - 1 {
        if x[k] < 0.0 {
            continue;
        }
        if x[k] > stop {
            break;
        }
        s += x[k].sqrt() * (k as f64 + 1.0);
    }
    s
}

#[grad(skipping_grad, wrt = x)]
fn skipping(x: &[f64], stop: f64) -> f64 {
    let mut s = 0.0;
    for k in 0..=x.len() - 1 {
        if x[k] < 0.0 {
            continue;
        }
        if x[k] > stop {
            break;
        }
        s += x[k].sqrt() * (k as f64 + 1.0);
    }
    s
}

/// Newton's iteration for √a, leaving the `while` loop once a step is
/// below the tolerance.
fn newton_sqrt_ref(a: f64) -> f64 {
    let mut y = a.max(1.0);
    let mut k = 0;
    while k < 100 {
        let next = 0.5 * (y + a / y);
        if (next - y).abs() < 1e-14 {
            break;
        }
        y = next;
        k += 1;
    }
    y
}

#[grad(newton_sqrt_grad)]
fn newton_sqrt(a: f64) -> f64 {
    let mut y = a.max(1.0);
    let mut k = 0;
    while k < 100 {
        let next = 0.5 * (y + a / y);
        if (next - y).abs() < 1e-14 {
            break;
        }
        y = next;
        k += 1;
    }
    y
}

#[test]
fn break_and_continue_compute_as_in_rust_with_their_derivatives() {
    let cases: [(&[f64], f64); 4] = [
        (&[0.5, -1.2, 0.8, 2.0, 0.3], 2.0),
        (&[0.1, 0.2], 10.0),
        (&[3.0, 1.0], 1.0),
        (&[], 1.0),
    ];
    for (x, limit) in cases {
        assert_eq!(
            first_passage(x, limit),
            first_passage_ref(x, limit),
            "{x:?}"
        );
        let g = first_passage_grad(x, limit);
        for k in 0..x.len() {
            let fd = central(
                |v| {
                    let mut p = x.to_vec();
                    p[k] = v;
                    first_passage_ref(&p, limit)
                },
                x[k],
            );
            assert!(close(g[k], fd, 1e-8), "∂x{k} of {x:?}: {} vs {fd}", g[k]);
        }
        // Forward mode along every coordinate at once agrees with reverse.
        let t = vec![1.0; x.len()];
        let (_, dv) = first_passage_jvp(x, limit, &t);
        assert!(close(dv, g.iter().sum(), 1e-14), "{dv} vs {g:?}");
    }
    for (x, stop) in [
        (&[0.25, -1.0, 4.0, 9.0, 0.5][..], 5.0),
        (&[-1.0, -2.0][..], 1.0),
        (&[1.0, 2.0, 3.0][..], 10.0),
    ] {
        assert_eq!(skipping(x, stop), skipping_ref(x, stop), "{x:?}");
        let g = skipping_grad(x, stop);
        for k in 0..x.len() {
            let fd = central(
                |v| {
                    let mut p = x.to_vec();
                    p[k] = v;
                    skipping_ref(&p, stop)
                },
                x[k],
            );
            assert!(close(g[k], fd, 1e-8), "∂x{k} of {x:?}: {} vs {fd}", g[k]);
        }
    }
    for a in [0.3, 2.0, 50.0] {
        assert_eq!(newton_sqrt(a), newton_sqrt_ref(a));
        assert!(close(newton_sqrt(a), a.sqrt(), 1e-15));
        // The derivative through the iterations: 1 / (2√a) at convergence.
        let d = newton_sqrt_grad(a);
        assert!(close(d, 0.5 / a.sqrt(), 1e-12), "{a}: {d}");
    }
}

// ---- return inside a loop ----------------------------------------------------------

/// Newton's iteration for the root of x³ − a, returning from inside the
/// loop once a step is small; after the loop, a fallback.
fn cube_root_ref(a: f64) -> f64 {
    let mut x = a.max(1.0);
    for _ in 0..60 {
        let step = (x * x * x - a) / (3.0 * x * x);
        x -= step;
        if step.abs() < 1e-13 {
            return x;
        }
    }
    -x
}

#[grad(cube_root_grad)]
fn cube_root(a: f64) -> f64 {
    let mut x = a.max(1.0);
    for _ in 0..60 {
        let step = (x * x * x - a) / (3.0 * x * x);
        x -= step;
        if step.abs() < 1e-13 {
            return x;
        }
    }
    -x
}

/// Two `return`s in a `for` loop, each its own value.
fn first_big_ref(x: &[f64], big: f64) -> f64 {
    let mut acc = 0.0;
    for i in 0..x.len() {
        acc += x[i];
        if x[i] > big {
            return acc * 2.0;
        }
        if acc < -big {
            return acc - 1.0;
        }
    }
    acc
}

#[grad(first_big_grad, wrt = x)]
fn first_big(x: &[f64], big: f64) -> f64 {
    let mut acc = 0.0;
    for i in 0..x.len() {
        acc += x[i];
        if x[i] > big {
            return acc * 2.0;
        }
        if acc < -big {
            return acc - 1.0;
        }
    }
    acc
}

/// A `return` inside a `while` loop.
fn grow_ref(a: f64, big: f64) -> f64 {
    let mut acc = a;
    while acc < big {
        acc = acc * 1.5 + 0.1;
        if acc > 0.9 * big {
            return acc * 10.0;
        }
    }
    acc
}

#[grad(grow_grad)]
fn grow(a: f64, big: f64) -> f64 {
    let mut acc = a;
    while acc < big {
        acc = acc * 1.5 + 0.1;
        if acc > 0.9 * big {
            return acc * 10.0;
        }
    }
    acc
}

#[test]
fn return_inside_a_loop_computes_as_in_rust() {
    for (a, big) in [(0.5, 10.0), (0.5, 3.0), (20.0, 10.0)] {
        assert_eq!(grow(a, big), grow_ref(a, big), "{a} {big}");
        let fd = central(|v| grow_ref(v, big), a);
        assert!(close(grow_grad(a, big).0, fd, 1e-7), "{a} {big}");
    }
    for a in [0.5, 2.0, 27.0] {
        assert_eq!(cube_root(a), cube_root_ref(a));
        assert!(close(cube_root(a), a.cbrt(), 1e-14));
        let d = cube_root_grad(a);
        // d/da a^(1/3) = 1 / (3 a^(2/3)) at convergence.
        assert!(close(d, 1.0 / (3.0 * a.cbrt().powi(2)), 1e-10), "{a}: {d}");
    }
    for (x, big) in [
        (&[0.5, 1.0, 3.0, 9.0][..], 2.5),
        (&[-1.0, -2.0, -0.5][..], 2.5),
        (&[0.1, 0.2][..], 2.5),
    ] {
        assert_eq!(first_big(x, big), first_big_ref(x, big), "{x:?}");
        let g = first_big_grad(x, big);
        for k in 0..x.len() {
            let fd = central(
                |v| {
                    let mut p = x.to_vec();
                    p[k] = v;
                    first_big_ref(&p, big)
                },
                x[k],
            );
            assert!(close(g[k], fd, 1e-8), "∂x{k} of {x:?}: {} vs {fd}", g[k]);
        }
    }
}
