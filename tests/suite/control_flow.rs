//! Rust control flow inside annotated functions: `let mut`, assignment and
//! compound assignment, `if` that assigns, early `return`, `match` on an
//! integer, sizes (`x.len()`), and crate `const`s. Each function's values
//! are checked against the same body as plain Rust, and its gradients
//! against central finite differences, on the straight-line scalar path
//! and on the array (kernel) path. An `if` on a scalar condition runs only
//! the taken branch (a cond), so a side that is NaN where it is not taken
//! reaches neither the value nor the gradient.

use oxla::{grad, jit, transforms};

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs()))
}

fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-6;
    (f(x + h) - f(x - h)) / (2.0 * h)
}

// ---- scalar (straight-line) ---------------------------------------------------

/// The body of `piecewise`, as plain Rust.
fn piecewise_ref(x: f64, y: f64, k: i64) -> f64 {
    let mut acc = x * y;
    acc += x.sin();
    if x > 1.0 {
        acc *= y;
    } else if x < -1.0 {
        acc -= y * y;
        return acc * 0.5;
    }
    let w = match k {
        0 => x,
        1 | 2 => y * 2.0,
        3..=5 => x * y,
        _ => 1.0,
    };
    acc /= 1.0 + w * w;
    let mut t = acc;
    {
        let acc = 2.0;
        t -= acc * y;
    }
    t
}

#[jit]
#[grad(piecewise_grad, wrt = (x, y))]
fn piecewise(x: f64, y: f64, k: i64) -> f64 {
    let mut acc = x * y;
    acc += x.sin();
    if x > 1.0 {
        acc *= y;
    } else if x < -1.0 {
        acc -= y * y;
        return acc * 0.5;
    }
    let w = match k {
        0 => x,
        1 | 2 => y * 2.0,
        3..=5 => x * y,
        _ => 1.0,
    };
    acc /= 1.0 + w * w;
    let mut t = acc;
    {
        let acc = 2.0;
        t -= acc * y;
    }
    t
}

#[test]
fn scalar_control_flow_values_and_gradients() {
    let points = [
        (-2.5, 0.7),
        (-0.3, 1.1),
        (0.4, -0.8),
        (1.7, 0.9),
        (3.0, -1.4),
    ];
    for &(x, y) in &points {
        for k in [-1, 0, 1, 2, 3, 5, 6, 40] {
            let want = piecewise_ref(x, y, k);
            let got = piecewise(x, y, k);
            assert!(close(got, want, 1e-12), "({x}, {y}, {k}): {got} vs {want}");
            let (dx, dy) = piecewise_grad(x, y, k);
            let fx = central(|x| piecewise_ref(x, y, k), x);
            let fy = central(|y| piecewise_ref(x, y, k), y);
            assert!(close(dx, fx, 1e-6), "d/dx at ({x}, {y}, {k}): {dx} vs {fx}");
            assert!(close(dy, fy, 1e-6), "d/dy at ({x}, {y}, {k}): {dy} vs {fy}");
        }
    }
}

// ---- arrays (kernels) ---------------------------------------------------------

/// The body of `arr`, as plain Rust over slices.
fn arr_ref(x: &[f64], w: &[f64], k: i64) -> f64 {
    let n = x.len() as f64;
    let mut h: Vec<f64> = x.iter().zip(w).map(|(a, b)| a * b + 0.5).collect();
    for (h, &x) in h.iter_mut().zip(x) {
        if x > 0.0 {
            *h *= 2.0;
        } else {
            *h -= x * x;
        }
    }
    let mut s = h.iter().map(|v| v.tanh()).sum::<f64>() / n;
    if s > 0.1 {
        s *= s;
    }
    if k < 0 {
        return s * n;
    }
    let mean = x.iter().sum::<f64>() / n;
    match x.len() {
        0..=3 => s + mean,
        _ => match k {
            0 => s,
            _ => s - mean * 0.25,
        },
    }
}

#[jit]
#[grad(arr_grad, wrt = (x, w))]
fn arr(x: &[f64], w: &[f64], k: i64) -> f64 {
    let n = x.len() as f64;
    let mut h = x * w;
    h += 0.5;
    if x > 0.0 {
        h *= 2.0;
    } else {
        h -= x * x;
    }
    let mut s = sum(h.tanh()) / n;
    if s > 0.1 {
        s *= s;
    }
    if k < 0 {
        return s * n;
    }
    match x.len() {
        0..=3 => s + mean(x),
        _ => match k {
            0 => s,
            _ => s - mean(x) * 0.25,
        },
    }
}

fn fd_grad(x: &[f64], f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    (0..x.len())
        .map(|i| {
            let at = |v: f64| {
                let mut p = x.to_vec();
                p[i] = v;
                f(&p)
            };
            central(at, x[i])
        })
        .collect()
}

#[test]
fn array_control_flow_values_and_gradients() {
    let cases: [(Vec<f64>, Vec<f64>); 3] = [
        (vec![0.3, -0.7, 1.2], vec![0.9, 0.4, -0.6]),
        (
            vec![0.3, -0.7, 1.2, 0.05, -1.5],
            vec![0.2, 1.4, 0.3, -0.8, 0.5],
        ),
        (vec![-0.2, -0.4, -1.0, -0.3], vec![0.1, 0.2, 0.3, 0.4]),
    ];
    for (x, w) in &cases {
        for k in [-2, 0, 3] {
            let want = arr_ref(x, w, k);
            let got = arr(x, w, k);
            assert!(close(got, want, 1e-12), "{x:?} {k}: {got} vs {want}");
            let (dx, dw) = arr_grad(x, w, k);
            let fx = fd_grad(x, |x| arr_ref(x, w, k));
            let fw = fd_grad(w, |w| arr_ref(x, w, k));
            for (a, b) in dx.iter().zip(&fx).chain(dw.iter().zip(&fw)) {
                assert!(
                    close(*a, *b, 1e-6),
                    "{x:?} {k}: {dx:?} vs {fx:?}, {dw:?} vs {fw:?}"
                );
            }
        }
    }
}

// ---- constants ----------------------------------------------------------------

const SCALE: f64 = 1.5;
static OFFSET: f64 = -0.25;
const STEPS: usize = 4;

mod consts {
    pub const G: f64 = 9.81;
}

/// The body of `with_consts`, as plain Rust.
fn with_consts_ref(x: f64, y: f64) -> f64 {
    let mut v = x * SCALE + OFFSET;
    if x > consts::G / 10.0 {
        v *= y;
    }
    v * STEPS as f64 + (x * y * std::f64::consts::PI).sin()
}

#[transforms(
    grad(with_consts_grad),
    value_and_grad(with_consts_vg),
    jvp(with_consts_jvp),
    vjp(with_consts_vjp),
    vmap(with_consts_batch, in_axes = (0, None)),
    // The second derivative in x, differentiated through the constants.
    grad(with_consts_hess_x, of = grad(wrt = x)),
)]
fn with_consts(x: f64, y: f64) -> f64 {
    let mut v = x * SCALE + OFFSET;
    if x > consts::G / 10.0 {
        v *= y;
    }
    v * STEPS as f64 + (x * y * std::f64::consts::PI).sin()
}

struct Model;

impl Model {
    const K: f64 = 0.75;

    /// An array function reading an associated constant (`Self::K`) and a
    /// crate constant: the kernel path.
    #[grad(energy_grad)]
    fn energy(x: &[f64], w: &[f64]) -> f64 {
        let mut e = sum(x * w) * Self::K;
        e += SCALE * sum(x * x);
        if e > STEPS as f64 {
            e = e.sqrt() * 2.0;
        }
        e
    }
}

fn energy_ref(x: &[f64], w: &[f64]) -> f64 {
    let mut e = x.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() * Model::K;
    e += SCALE * x.iter().map(|a| a * a).sum::<f64>();
    if e > STEPS as f64 {
        e = e.sqrt() * 2.0;
    }
    e
}

#[test]
fn constants_are_read_at_the_call_and_signatures_are_unchanged() {
    for &(x, y) in &[(-0.7, 1.3), (0.4, -0.6), (1.2, 0.8), (2.5, -1.1)] {
        let want = with_consts_ref(x, y);
        assert!(close(with_consts(x, y), want, 1e-12));
        let fx = central(|x| with_consts_ref(x, y), x);
        let fy = central(|y| with_consts_ref(x, y), y);
        // The user's signature: (x, y) in, d/dx and d/dy out; no derivative
        // with respect to a constant.
        let (dx, dy): (f64, f64) = with_consts_grad(x, y);
        assert!(
            close(dx, fx, 1e-6) && close(dy, fy, 1e-6),
            "{dx} {fx} {dy} {fy}"
        );
        let (v, gx, gy): (f64, f64, f64) = with_consts_vg(x, y);
        assert!(close(v, want, 1e-12) && close(gx, dx, 1e-12) && close(gy, dy, 1e-12));
        let (v, t): (f64, f64) = with_consts_jvp(x, y, 0.3, -2.0);
        assert!(close(v, want, 1e-12) && close(t, 0.3 * dx - 2.0 * dy, 1e-10));
        let (v, cx, cy): (f64, f64, f64) = with_consts_vjp(x, y, 2.0);
        assert!(close(v, want, 1e-12) && close(cx, 2.0 * dx, 1e-10) && close(cy, 2.0 * dy, 1e-10));
    }
    // The second derivative in x against a central difference of the
    // first (the plain-Rust first derivative is itself a difference, so
    // compare with `with_consts_grad`'s).
    for &(x, y) in &[(-0.7, 1.3), (0.4, -0.6), (2.5, -1.1)] {
        let (dxx, dxy): (f64, f64) = with_consts_hess_x(x, y);
        let fxx = central(|x| with_consts_grad(x, y).0, x);
        let fxy = central(|y| with_consts_grad(x, y).0, y);
        assert!(
            close(dxx, fxx, 1e-6) && close(dxy, fxy, 1e-6),
            "{dxx} {fxx} {dxy} {fxy}"
        );
    }
    let xs = [-0.7, 0.4, 1.2, 2.5];
    let batch: Vec<f64> = with_consts_batch(&xs, 0.9);
    for (x, b) in xs.iter().zip(&batch) {
        assert!(close(*b, with_consts_ref(*x, 0.9), 1e-12));
    }

    for (x, w) in [
        (vec![0.2, -0.4, 0.1], vec![0.5, 0.3, -0.2]),
        (vec![1.2, -0.9, 1.4], vec![2.0, -1.0, 0.7]),
    ] {
        let want = energy_ref(&x, &w);
        assert!(close(Model::energy(&x, &w), want, 1e-12));
        let (dx, dw) = Model::energy_grad(&x, &w);
        let fx = fd_grad(&x, |x| energy_ref(x, &w));
        let fw = fd_grad(&w, |w| energy_ref(&x, w));
        for (a, b) in dx.iter().zip(&fx).chain(dw.iter().zip(&fw)) {
            assert!(close(*a, *b, 1e-6), "{dx:?} vs {fx:?}, {dw:?} vs {fw:?}");
        }
    }
}

// ---- helpers returning tuples ---------------------------------------------------

/// Polar coordinates, with an early return for the origin's half-plane.
#[oxla::func]
fn polar(x: f64, y: f64) -> (f64, f64) {
    let r = (x * x + y * y).sqrt();
    if x < 0.0 {
        return (r, (y / r).sin());
    }
    (r, (y / r).cos())
}

#[grad(through_polar_grad)]
fn through_polar(x: f64, y: f64) -> f64 {
    let (r, mut s) = polar(x, y);
    s *= r;
    r * r + s
}

fn through_polar_ref(x: f64, y: f64) -> f64 {
    let r = (x * x + y * y).sqrt();
    let mut s = if x < 0.0 {
        (y / r).sin()
    } else {
        (y / r).cos()
    };
    s *= r;
    r * r + s
}

#[test]
fn a_helper_returning_a_tuple_is_bound_by_a_tuple_let() {
    for &(x, y) in &[(0.6, -1.2), (-0.8, 0.4), (2.0, 1.5)] {
        let (dx, dy) = through_polar_grad(x, y);
        let fx = central(|x| through_polar_ref(x, y), x);
        let fy = central(|y| through_polar_ref(x, y), y);
        assert!(
            close(dx, fx, 1e-6) && close(dy, fy, 1e-6),
            "{dx} {fx} {dy} {fy}"
        );
        let (r, t) = polar(x, y);
        assert!(close(r * r + t * r, through_polar_ref(x, y), 1e-12));
    }
}

/// An array result with a constant: the function, its `_into` sibling and
/// its vmap all read it.
#[oxla::vmap(shifted_rows, in_axes = (0, None))]
fn shifted(x: &[f64], s: f64) -> Vec<f64> {
    let mut y = x * SCALE;
    y += s + OFFSET;
    y
}

#[test]
fn constants_reach_the_into_sibling_and_vmap() {
    let x = [1.0, -2.0, 0.5];
    let want: Vec<f64> = x.iter().map(|v| v * SCALE + (0.1 + OFFSET)).collect();
    assert_eq!(shifted(&x, 0.1), want);
    let mut out = [0.0; 3];
    shifted_into(&x, 0.1, &mut out);
    assert_eq!(out.to_vec(), want);
    let rows = oxla::ndarray::Array2::from_shape_vec((2, 3), [x, x].concat()).unwrap();
    let batched = shifted_rows(&rows, 0.1);
    for row in batched.rows() {
        assert_eq!(row.to_vec(), want);
    }
}

// ---- `if` on a scalar: only the taken side runs -------------------------------

#[transforms(
    grad(log_or_zero_grad),
    hessian(log_or_zero_hessian),
    vmap(log_or_zero_grads, of = grad(wrt = x)),
)]
fn log_or_zero(x: f64) -> f64 {
    if x > 0.0 {
        x.ln()
    } else {
        0.0
    }
}

fn log_or_zero_ref(x: f64) -> f64 {
    if x > 0.0 {
        x.ln()
    } else {
        0.0
    }
}

/// The gradient where the untaken side is NaN (`ln` of a negative number)
/// or infinite (`1/x` at 0) is the taken side's, 0; both of the select
/// of both sides that an `if` used to be gave 0·(1/0) = NaN at 0.
#[test]
fn the_untaken_side_of_a_scalar_if_does_not_reach_the_gradient() {
    for x in [-1.0, -1e-300, 0.0, 1e-3, 0.5, 2.0, 7.5] {
        assert_eq!(log_or_zero(x), log_or_zero_ref(x), "at {x}");
        let g = log_or_zero_grad(x);
        let want = if x > 0.0 { 1.0 / x } else { 0.0 };
        assert_eq!(g, want, "grad at {x}");
        let h = log_or_zero_hessian(x);
        let want = if x > 0.0 { -1.0 / (x * x) } else { 0.0 };
        assert_eq!(h, want, "hessian at {x}");
        if x.abs() > 1e-2 {
            let fd = central(log_or_zero_ref, x);
            assert!(close(g, fd, 1e-6), "grad at {x}: {g} vs {fd}");
        }
    }
    // Batched: the condition differs per example (both branches run, a
    // select picks each example's finite gradient).
    let xs = [-1.0, 2.0, 0.0, 4.0, -3.5];
    let gs = log_or_zero_grads(&xs);
    for (x, g) in xs.iter().zip(&gs) {
        assert_eq!(*g, log_or_zero_grad(*x), "example {x}");
    }
}

/// A scalar function with an `if` batched by `vmap`: the condition is per
/// example.
#[oxla::vmap(soft_sqrt_all)]
fn soft_sqrt(x: f64) -> f64 {
    if x > 1.0 {
        x.sqrt()
    } else if x < -1.0 {
        -(-x).sqrt()
    } else {
        x
    }
}

fn soft_sqrt_ref(x: f64) -> f64 {
    if x > 1.0 {
        x.sqrt()
    } else if x < -1.0 {
        -(-x).sqrt()
    } else {
        x
    }
}

#[test]
fn vmap_of_a_function_with_an_if_picks_per_example() {
    let xs = [-4.0, -1.0, -0.5, 0.0, 0.9, 1.0, 2.25, 9.0];
    let got = soft_sqrt_all(&xs);
    for (x, g) in xs.iter().zip(&got) {
        assert_eq!(*g, soft_sqrt_ref(*x), "at {x}");
        assert_eq!(soft_sqrt(*x), soft_sqrt_ref(*x), "at {x}");
    }
}

/// An array function whose `if` is on a scalar: the kernel path runs the
/// taken branch's kernels only (the other side, `ln(s)` for `s <= 0`, is
/// NaN there). The second `if` assigns a variable.
#[transforms(
    jit(gated_jit),
    grad(gated_grad, wrt = (x, s)),
    vmap(gated_rows, in_axes = (0, 0)),
)]
fn gated(x: &[f64], s: f64) -> f64 {
    let y = if s > 0.0 { x * s.ln() } else { x * x };
    let mut t = sum(y.sin());
    if t < 0.0 {
        t = -t * s;
    }
    t
}

fn gated_ref(x: &[f64], s: f64) -> f64 {
    let mut t: f64 = x
        .iter()
        .map(|v| if s > 0.0 { v * s.ln() } else { v * v })
        .map(f64::sin)
        .sum();
    if t < 0.0 {
        t = -t * s;
    }
    t
}

#[test]
fn a_scalar_if_in_an_array_function_values_and_gradients_on_both_sides() {
    let xs = [
        vec![0.3, -0.7, 1.2],
        vec![0.3, -0.7, 1.2, 0.05, -1.5, 0.8, -0.25, 0.6, 1.1],
        vec![-0.2, 0.4],
    ];
    for x in &xs {
        for s in [-1.0, -0.3, 0.0, 0.6, 2.5] {
            let want = gated_ref(x, s);
            assert!(close(gated(x, s), want, 1e-12), "{x:?} {s}");
            assert!(close(gated_jit(x, s), want, 1e-12), "{x:?} {s}");
            let (dx, ds) = gated_grad(x, s);
            assert!(
                ds.is_finite() && dx.iter().all(|d| d.is_finite()),
                "{x:?} {s}"
            );
            let fx = fd_grad(x, |x| gated_ref(x, s));
            for (a, b) in dx.iter().zip(&fx) {
                assert!(close(*a, *b, 1e-6), "d/dx at {x:?} {s}: {dx:?} vs {fx:?}");
            }
            // s = 0 sits on the condition: one-sided from above there.
            if s != 0.0 {
                let fs = central(|s| gated_ref(x, s), s);
                assert!(close(ds, fs, 1e-6), "d/ds at {x:?} {s}: {ds} vs {fs}");
            }
        }
    }
    // Batched over rows with a condition per row.
    let rows = [[0.3, -0.7, 1.2], [0.5, 0.1, -0.9], [1.0, 2.0, -0.4]];
    let ss = [-1.0, 0.6, 2.5];
    let m = oxla::ndarray::Array2::from_shape_vec((3, 3), rows.concat()).unwrap();
    let got = gated_rows(&m, &ss);
    for (k, (r, s)) in rows.iter().zip(&ss).enumerate() {
        assert!(close(got[k], gated_ref(r, *s), 1e-12), "row {k}");
    }
}

/// A scalar `if` inside a loop body, on the kernel path: the body's
/// program holds a cond step of its own; reverse mode goes through both.
#[transforms(grad(halving_grad, wrt = x))]
fn halving(x: &[f64], n: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        if s > 1.0 {
            s = s * 0.5 + (i as f64) * 0.01;
        } else {
            s += sum(x * x).sqrt();
        }
    }
    s
}

fn halving_ref(x: &[f64], n: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        if s > 1.0 {
            s = s * 0.5 + (i as f64) * 0.01;
        } else {
            s += x.iter().map(|v| v * v).sum::<f64>().sqrt();
        }
    }
    s
}

#[test]
fn a_scalar_if_inside_a_loop_on_the_kernel_path() {
    for x in [vec![0.3, -0.2, 0.4], vec![0.9, 0.7], vec![0.05; 5]] {
        for n in [0usize, 1, 4, 9] {
            let want = halving_ref(&x, n);
            assert!(close(halving(&x, n), want, 1e-12), "{x:?} {n}");
            let g = halving_grad(&x, n);
            let fd = fd_grad(&x, |x| halving_ref(x, n));
            for (a, b) in g.iter().zip(&fd) {
                assert!(close(*a, *b, 1e-6), "{x:?} {n}: {g:?} vs {fd:?}");
            }
        }
    }
}

/// A scalar `if` inside a loop in a scalar function: straight-line Rust
/// (an `if`/`else` inside the loop, and inside the reverse sweep's
/// backward step).
#[transforms(grad(damped_grad, wrt = x), hessian(damped_hessian, wrt = x))]
fn damped(x: f64, n: usize) -> f64 {
    let mut s = x;
    for _ in 0..n {
        if s > 1.0 {
            s = s.sqrt();
        } else {
            s = s * 1.5 + 0.1;
        }
    }
    s
}

fn damped_ref(x: f64, n: usize) -> f64 {
    let mut s = x;
    for _ in 0..n {
        if s > 1.0 {
            s = s.sqrt();
        } else {
            s = s * 1.5 + 0.1;
        }
    }
    s
}

#[test]
fn a_scalar_if_inside_a_loop_in_straight_line_code() {
    for x in [-2.0, 0.3, 0.9, 1.7, 5.0] {
        for n in [0usize, 1, 3, 8] {
            assert_eq!(damped(x, n), damped_ref(x, n), "{x} {n}");
            let g = damped_grad(x, n);
            let fd = central(|x| damped_ref(x, n), x);
            assert!(close(g, fd, 1e-6), "grad at {x} {n}: {g} vs {fd}");
            let h = damped_hessian(x, n);
            let fd = central(|x| damped_grad(x, n), x);
            assert!(close(h, fd, 1e-5), "hessian at {x} {n}: {h} vs {fd}");
        }
    }
}

// ---- issue 27: `!`, `&&`, `||`, `true`, `false` ----------------------------------

/// A scalar `if` on a compound condition, and a bool result.
#[oxla::grad(banded_grad)]
fn banded(x: f64, lo: f64, hi: f64) -> f64 {
    let inside = x > lo && x < hi;
    let outside = !inside;
    if inside || false {
        x * x
    } else if outside && true {
        3.0 * x
    } else {
        0.0
    }
}

fn banded_plain(x: f64, lo: f64, hi: f64) -> f64 {
    let inside = x > lo && x < hi;
    let outside = !inside;
    if inside || false {
        x * x
    } else if outside && true {
        3.0 * x
    } else {
        0.0
    }
}

#[oxla::jit]
fn in_band(x: oxla::ndarray::ArrayView1<f64>, lo: f64, hi: f64) -> oxla::ndarray::Array1<f64> {
    let keep = (x > lo && x < hi) || !(x > -10.0);
    keep.mapv(|k| k as i32 as f64) * x
}

#[test]
fn bool_operators_and_literals_compute_as_in_rust() {
    for x in [-2.0, 0.5, 1.5, 3.0] {
        assert_eq!(banded(x, 0.0, 2.0), banded_plain(x, 0.0, 2.0), "x = {x}");
        let (dx, dlo, dhi) = banded_grad(x, 0.0, 2.0);
        let want = if x > 0.0 && x < 2.0 { 2.0 * x } else { 3.0 };
        assert_eq!((dx, dlo, dhi), (want, 0.0, 0.0), "x = {x}");
    }
    let xs = oxla::ndarray::Array1::from(vec![-20.0, -1.0, 0.5, 1.5, 3.0]);
    let got = in_band(xs.view(), 0.0, 2.0);
    let want: Vec<f64> = xs
        .iter()
        .map(|&x| {
            if (x > 0.0 && x < 2.0) || !(x > -10.0) {
                x
            } else {
                0.0
            }
        })
        .collect();
    assert_eq!(got.to_vec(), want);
}
