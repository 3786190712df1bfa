//! Rust control flow inside annotated functions: `let mut`, assignment and
//! compound assignment, `if` that assigns, early `return`, `match` on an
//! integer, sizes (`x.len()`), and crate `const`s. Each function's values
//! are checked against the same body as plain Rust, and its gradients
//! against central finite differences, on the straight-line scalar path
//! and on the array (kernel) path.

use oxla::{grad, jit};

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
