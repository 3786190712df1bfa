//! Loops in array functions (the kernel path: a loop step runs its body's
//! kernels once per step), and `vmap` of a loop whose trip count differs
//! per example, each against the same loop run by Rust and against central
//! differences.

use oxla::ndarray::{Array2, ArrayView2};
use oxla::{grad, transforms, vmap};

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs()))
}

fn horner_ref(x: f64, c: &[f64]) -> f64 {
    let mut acc = 0.0;
    for i in 0..c.len() {
        acc = acc * x + c[i];
    }
    acc
}

/// Horner's rule over a slice of coefficients, highest first.
#[transforms(grad(horner_grad, wrt = (x, c)), grad(horner_dx, wrt = x))]
fn horner(x: f64, c: &[f64]) -> f64 {
    let mut acc = 0.0;
    for i in 0..c.len() {
        acc = acc * x + c[i];
    }
    acc
}

#[test]
fn horner_over_a_slice_matches_rust_and_its_derivatives_match_differences() {
    let c = [0.5, -1.25, 2.0, 0.75, -0.3, 1.5];
    for x in [-0.8, 0.4, 1.3] {
        assert!(close(horner(x, &c), horner_ref(x, &c), 1e-15));
        let (dx, dc) = horner_grad(x, &c);
        assert_eq!(dx, horner_dx(x, &c));
        let h = 1e-6;
        let fd = (horner_ref(x + h, &c) - horner_ref(x - h, &c)) / (2.0 * h);
        assert!(close(dx, fd, 1e-7), "{dx} vs {fd}");
        // ∂/∂c_i = x^(n-1-i).
        for (i, d) in dc.iter().enumerate() {
            let want = x.powi((c.len() - 1 - i) as i32);
            assert!(close(*d, want, 1e-14), "c{i}: {d} vs {want}");
        }
        // Its second derivative, by differences of the first.
        let d2 = (horner_dx(x + h, &c) - horner_dx(x - h, &c)) / (2.0 * h);
        let want: f64 = (2..c.len())
            .map(|k| (k * (k - 1)) as f64 * c[c.len() - 1 - k] * x.powi(k as i32 - 2))
            .sum();
        assert!(close(d2, want, 1e-6), "{d2} vs {want}");
    }
    assert_eq!(horner(0.5, &[]), 0.0);
}

/// An array carried through the loop: `n` steps of `y ← y/2 + tanh(x)·w`.
#[grad(relax_grad, wrt = x)]
fn relax(x: &[f64], w: f64, n: usize) -> f64 {
    let mut y = x * 0.0;
    for _ in 0..n {
        y = y * 0.5 + x.tanh() * w;
    }
    (&y * &y).sum()
}

fn relax_ref(x: &[f64], w: f64, n: usize) -> f64 {
    let mut y = vec![0.0; x.len()];
    for _ in 0..n {
        for (yi, xi) in y.iter_mut().zip(x) {
            *yi = *yi * 0.5 + xi.tanh() * w;
        }
    }
    y.iter().map(|v| v * v).sum()
}

#[test]
fn an_array_carried_through_a_loop() {
    let x = [0.3, -1.2, 0.8, 2.0, -0.1];
    for n in [0usize, 1, 6] {
        assert!(
            close(relax(&x, 0.7, n), relax_ref(&x, 0.7, n), 1e-14),
            "n {n}"
        );
        let g = relax_grad(&x, 0.7, n);
        for i in 0..x.len() {
            let h = 1e-6;
            let (mut p, mut m) = (x, x);
            p[i] += h;
            m[i] -= h;
            let fd = (relax_ref(&p, 0.7, n) - relax_ref(&m, 0.7, n)) / (2.0 * h);
            assert!(close(g[i], fd, 1e-7), "n {n}, x{i}: {} vs {fd}", g[i]);
        }
    }
}

/// `x^n` by repeated multiplication, batched over examples that each have
/// their own `n`.
#[vmap(powers, in_axes = (0, 0))]
#[grad(power_grad, wrt = x)]
fn power(x: f64, n: i64) -> f64 {
    let mut p = 1.0;
    for _ in 0..n {
        p *= x;
    }
    p
}

#[vmap(powers_of, in_axes = (0, 0))]
fn power_value(x: f64, n: i64) -> f64 {
    let mut p = 1.0;
    for _ in 0..n {
        p *= x;
    }
    p
}

#[test]
fn vmap_of_a_loop_with_a_trip_count_per_example_matches_a_rust_loop() {
    let xs = [0.5, -1.5, 2.0, 0.9, 1.1];
    let ns = [3i64, 0, 5, 1, 2];
    let values = powers_of(&xs, &ns);
    let grads = powers(&xs, &ns);
    for k in 0..xs.len() {
        let mut p = 1.0;
        for _ in 0..ns[k] {
            p *= xs[k];
        }
        assert_eq!(values[k], p, "example {k}");
        let want = if ns[k] == 0 {
            0.0
        } else {
            ns[k] as f64 * xs[k].powi(ns[k] as i32 - 1)
        };
        assert!(
            close(grads[k], want, 1e-14),
            "example {k}: {} vs {want}",
            grads[k]
        );
        assert_eq!(
            grads[k],
            power_grad(xs[k], ns[k]),
            "example {k}: batched vs one"
        );
    }
}

/// Integer arithmetic on the index: `x[i + 1] - x[i]` over `0..x.len() - 1`.
#[grad(roughness_grad)]
fn roughness(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let d = x[i + 1] - x[i];
        s += d * d * (2 * i + 1) as f64;
    }
    s
}

fn roughness_ref(x: &[f64]) -> f64 {
    (0..x.len().saturating_sub(1))
        .map(|i| (x[i + 1] - x[i]).powi(2) * (2 * i + 1) as f64)
        .sum()
}

#[test]
fn integer_arithmetic_on_the_loop_index() {
    let x = [0.3, -1.2, 0.8, 2.0, -0.1, 0.6];
    assert!(close(roughness(&x), roughness_ref(&x), 1e-15));
    assert_eq!(roughness(&[1.5]), 0.0);
    let g = roughness_grad(&x);
    for i in 0..x.len() {
        let h = 1e-6;
        let (mut p, mut m) = (x, x);
        p[i] += h;
        m[i] -= h;
        let fd = (roughness_ref(&p) - roughness_ref(&m)) / (2.0 * h);
        assert!(close(g[i], fd, 1e-7), "x{i}: {} vs {fd}", g[i]);
    }
}

/// Integer `%` and `/` on the index: a periodic neighbour `x[(i + 1) % n]`
/// and a weight from `i / 2` and `i % 3`, as Rust computes them.
#[grad(periodic_grad)]
fn periodic(x: &[f64], shift: i64) -> f64 {
    let n = x.len();
    let mut s = 0.0;
    for i in 0..n {
        let d = x[(i + 1) % n] - x[i];
        let w = (i / 2) as f64 + ((i as i64 - shift) % 3) as f64 * 0.25;
        s += d * d * w;
    }
    s
}

fn periodic_ref(x: &[f64], shift: i64) -> f64 {
    let n = x.len();
    (0..n)
        .map(|i| {
            let d = x[(i + 1) % n] - x[i];
            let w = (i / 2) as f64 + ((i as i64 - shift) % 3) as f64 * 0.25;
            d * d * w
        })
        .sum()
}

/// Division and remainder by a parameter, zero included (Rust panics; the
/// values are XLA's, -1 and the dividend).
#[oxla::jit]
fn divmod(a: i64, b: i64) -> (i64, i64) {
    (a / b, a % b)
}

/// Euclid's quotient and remainder (numpy's `floor_divide` and `mod` for
/// a positive divisor), with a literal divisor too.
#[oxla::jit]
fn euclid(a: i64, b: i64) -> (i64, i64, i64) {
    (a.div_euclid(b), a.rem_euclid(b), a.rem_euclid(3))
}

#[test]
fn integer_division_and_remainder_as_in_rust() {
    for x in [
        &[0.3, -1.2, 0.8, 2.0, -0.1, 0.6, 1.1][..],
        &[2.0][..],
        &[1.0, -1.0][..],
    ] {
        for shift in [0, 5, -4] {
            assert!(
                close(periodic(x, shift), periodic_ref(x, shift), 1e-15),
                "{x:?} {shift}"
            );
            let g = periodic_grad(x, shift);
            for i in 0..x.len() {
                let h = 1e-6;
                let (mut p, mut m) = (x.to_vec(), x.to_vec());
                p[i] += h;
                m[i] -= h;
                let fd = (periodic_ref(&p, shift) - periodic_ref(&m, shift)) / (2.0 * h);
                assert!(close(g[i], fd, 1e-7), "x{i}: {} vs {fd}", g[i]);
            }
        }
    }
    for a in [-7i64, -6, -1, 0, 1, 6, 7, 9_007_199_254_740_991] {
        for b in [-3i64, -2, 1, 2, 3, 1 << 20] {
            assert_eq!(divmod(a, b), (a / b, a % b), "{a} / {b}");
        }
        assert_eq!(divmod(a, 0), (-1, a), "{a} / 0");
        for b in [-3i64, -2, 1, 2, 3, 7] {
            let want = (a.div_euclid(b), a.rem_euclid(b), a.rem_euclid(3));
            assert_eq!(euclid(a, b), want, "{a} euclid {b}");
        }
    }
}

/// `/=` and `%=` on an integer carry, as Rust computes them.
#[oxla::jit]
fn halvings(n: i64) -> (f64, i64) {
    let mut k = n;
    let mut c = 0.0;
    // An integer variable (a bare `0` is a float literal in oxla).
    let mut digits = n - n;
    while k > 1 {
        digits += k % 2;
        k /= 2;
        c += 1.0;
    }
    let mut r = n;
    r %= 7;
    (c, digits * 100 + r)
}

#[test]
fn compound_integer_division_and_remainder() {
    for n in [0i64, 1, 2, 7, 1000, 123_456_789] {
        let (mut k, mut c, mut digits) = (n, 0.0, 0);
        while k > 1 {
            digits += k % 2;
            k /= 2;
            c += 1.0;
        }
        assert_eq!(halvings(n), (c, digits * 100 + n % 7), "{n}");
    }
}

/// Rust's `%` and `rem_euclid` on floats, exact as Rust's (C's `fmod`),
/// elementwise on arrays and on scalars, with JAX's derivatives.
#[oxla::jit]
fn float_rems(a: &[f64], b: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let mut c = a.to_owned();
    c %= 0.75;
    (a % b, c)
}

#[oxla::jit]
fn float_rems32(a: &[f32], b: &[f32]) -> (Vec<f32>, Vec<f32>) {
    (a % b, a.rem_euclid(b))
}

#[oxla::jit]
fn wrap(x: f64, period: f64) -> (f64, f64) {
    (x % period, x.rem_euclid(period))
}

#[transforms(grad(fmod_grad, wrt = (x, p)))]
fn fmod_loss(x: f64, p: f64) -> f64 {
    (x % p).sin() + x.rem_euclid(p) * 0.5
}

#[test]
fn float_remainder_is_rusts_bit_for_bit() {
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut a = Vec::new();
    let mut b = Vec::new();
    for _ in 0..4000 {
        // Magnitudes over many binades, either sign, quotients up to 2^50.
        let m = (next() % 100) as i32 - 50;
        let x = ((next() >> 11) as f64 / (1u64 << 53) as f64 + 0.5) * 2f64.powi(m);
        let y = ((next() >> 11) as f64 / (1u64 << 53) as f64 + 0.5)
            * 2f64.powi(m - (next() % 50) as i32);
        a.push(if next() % 2 == 0 { x } else { -x });
        b.push(if next() % 2 == 0 { y } else { -y });
    }
    // Edges: exact multiples (signed zeros), ties of the rounded quotient,
    // infinities, NaN, a zero divisor.
    let edges = [
        (-4.0, 2.0),
        (4.0, -2.0),
        (-0.0, 3.0),
        (0.0, -3.0),
        (5.3, 2.0),
        (-5.3, 2.0),
        (1.0, 0.1),
        (3.0, 0.1),
        (0.3, 0.1),
        (7.0, f64::INFINITY),
        (-7.0, f64::NEG_INFINITY),
        (f64::INFINITY, 2.0),
        (f64::NAN, 2.0),
        (2.0, f64::NAN),
        (2.0, 0.0),
        (1e16, 3.0),
        (123456789.123, 1e-7),
    ];
    for (x, y) in edges {
        a.push(x);
        b.push(y);
    }
    let (got, c) = float_rems(&a, &b);
    for k in 0..a.len() {
        let want = a[k] % b[k];
        assert!(
            got[k].to_bits() == want.to_bits() || (got[k].is_nan() && want.is_nan()),
            "{} % {} = {} (Rust {want})",
            a[k],
            b[k],
            got[k]
        );
        let want = a[k] % 0.75;
        if (a[k] / 0.75).abs() >= 9_007_199_254_740_992.0 && a[k].is_finite() {
            // Past the exact range the result is NaN, never a wrong number.
            assert!(c[k].is_nan(), "{} % 0.75 = {}", a[k], c[k]);
            continue;
        }
        assert!(
            c[k].to_bits() == want.to_bits() || (c[k].is_nan() && want.is_nan()),
            "{} %= 0.75: {} (Rust {want})",
            a[k],
            c[k]
        );
    }
    let a32: Vec<f32> = a.iter().map(|v| *v as f32).collect();
    let b32: Vec<f32> = b.iter().map(|v| *v as f32).collect();
    let (r32, e32) = float_rems32(&a32, &b32);
    for k in 0..a32.len() {
        let (x, y) = (a32[k], b32[k]);
        // Within f32's exact range: |x / y| < 2^24.
        if (x / y).abs() >= 16_777_216.0 && x.is_finite() && y != 0.0 {
            assert!(r32[k].is_nan(), "f32 {x} % {y}: {}", r32[k]);
            continue;
        }
        for (got, want) in [(r32[k], x % y), (e32[k], x.rem_euclid(y))] {
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "f32 {x} % {y}: {got} (Rust {want})"
            );
        }
    }
    for (x, p) in [(7.5, 2.0), (-7.5, 2.0), (0.1, 3.0), (-1e-300, 3.0)] {
        assert_eq!(wrap(x, p), (x % p, x.rem_euclid(p)));
    }
    // Derivatives: 1 in x, −trunc(x / p) in p (JAX's `rem`), and the same
    // through `rem_euclid` away from its jumps.
    for (x, p) in [(7.3, 2.0), (-7.3, 2.0), (0.4, 1.5)] {
        let (dx, dp) = fmod_grad(x, p);
        let q = (x / p).trunc();
        let qe = (x - x.rem_euclid(p)) / p;
        let want_dx = (x % p).cos() + 0.5;
        let want_dp = -q * (x % p).cos() - 0.5 * qe;
        assert!(close(dx, want_dx, 1e-14), "{x} {p}: {dx} vs {want_dx}");
        assert!(close(dp, want_dp, 1e-13), "{x} {p}: {dp} vs {want_dp}");
    }
}

/// Array literals and loops over arrays (issue 23): `[a, b, c]`, `for v in
/// xs.iter()`, `for (i, v) in xs.iter().enumerate()`, `for row in
/// m.rows()`, `for col in m.columns()`, with their gradients.
#[grad(literal_loops_grad, wrt = (xs, m))]
fn literal_loops(xs: &[f64], m: ArrayView2<f64>, t: f64) -> f64 {
    let c = [1.0, -2.0 * t, 0.5 + t * t];
    let grid = [[t, 1.0], [2.0, t]];
    let mut s = 0.0;
    for v in xs.iter() {
        s += v * v;
    }
    for (i, v) in xs.iter().enumerate() {
        s += v * c[i % 3];
    }
    for row in m.rows() {
        s += (row.sin() * row).sum();
    }
    for col in m.columns() {
        s += col.sum() * col.sum();
    }
    for g in grid.rows() {
        s += g.sum() * t;
    }
    s
}

fn literal_loops_ref(xs: &[f64], m: &Array2<f64>, t: f64) -> f64 {
    let c = [1.0, -2.0 * t, 0.5 + t * t];
    let grid = [[t, 1.0], [2.0, t]];
    let mut s = 0.0;
    for v in xs.iter() {
        s += v * v;
    }
    for (i, v) in xs.iter().enumerate() {
        s += v * c[i % 3];
    }
    for row in m.rows() {
        s += row.iter().map(|r| r.sin() * r).sum::<f64>();
    }
    for col in m.columns() {
        s += col.sum() * col.sum();
    }
    for g in grid.iter() {
        s += g.iter().sum::<f64>() * t;
    }
    s
}

#[test]
fn array_literals_and_loops_over_arrays() {
    let xs = [0.3, -1.2, 0.8, 2.0, -0.1];
    let m = Array2::from_shape_fn((3, 2), |(i, j)| i as f64 * 0.5 - j as f64 * 0.7);
    for t in [0.0, 1.5] {
        let got = literal_loops(&xs, m.view(), t);
        let want = literal_loops_ref(&xs, &m, t);
        assert!(close(got, want, 1e-14), "{got} vs {want}");
        let (gx, gm) = literal_loops_grad(&xs, m.view(), t);
        for k in 0..xs.len() {
            let h = 1e-6;
            let (mut p, mut q) = (xs, xs);
            p[k] += h;
            q[k] -= h;
            let fd = (literal_loops_ref(&p, &m, t) - literal_loops_ref(&q, &m, t)) / (2.0 * h);
            assert!(close(gx[k], fd, 1e-7), "x{k}: {} vs {fd}", gx[k]);
        }
        for ((i, j), g) in gm.indexed_iter() {
            let h = 1e-6;
            let (mut p, mut q) = (m.clone(), m.clone());
            p[[i, j]] += h;
            q[[i, j]] -= h;
            let fd = (literal_loops_ref(&xs, &p, t) - literal_loops_ref(&xs, &q, t)) / (2.0 * h);
            assert!(close(*g, fd, 1e-7), "m[{i},{j}]: {g} vs {fd}");
        }
    }
}
