//! Slicing, concatenation and stacking end to end through the macros and
//! the JIT, against ndarray computing the same slices, and gradients
//! against central differences.

use oxla::ndarray::{concatenate, s, stack, Array1, Array2, ArrayView1, ArrayView2, Axis};
use oxla::{grad, jit};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn random1(rng: &mut StdRng, n: usize) -> Array1<f64> {
    Array1::from_shape_fn(n, |_| rng.gen_range(-1.0..1.0))
}

fn random2(rng: &mut StdRng, m: usize, n: usize) -> Array2<f64> {
    Array2::from_shape_fn((m, n), |_| rng.gen_range(-1.0..1.0))
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: {g} vs {w}"
        );
    }
}

fn fd_grad(x: &[f64], f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    let h = 1e-6;
    (0..x.len())
        .map(|i| {
            let (mut p, mut m) = (x.to_vec(), x.to_vec());
            p[i] += h;
            m[i] -= h;
            (f(&p) - f(&m)) / (2.0 * h)
        })
        .collect()
}

#[jit]
fn differences(x: ArrayView1<f64>) -> Array1<f64> {
    x.slice(s![1..]) - x.slice(s![..-1])
}

#[grad(roughness_grad)]
fn roughness(x: ArrayView1<f64>) -> f64 {
    let d = x.slice(s![1..]) - x.slice(s![..-1]);
    (d * d).sum()
}

#[test]
fn forward_differences_match_ndarray() {
    let mut rng = StdRng::seed_from_u64(1);
    for n in [1, 2, 3, 8, 33, 1001] {
        let x = random1(&mut rng, n);
        let want = &x.slice(s![1..]) - &x.slice(s![..-1]);
        let got = differences(x.view());
        assert_eq!(got.len(), n - 1);
        assert_close(
            got.as_slice().unwrap(),
            want.as_slice().unwrap(),
            0.0,
            "differences",
        );
    }
}

#[test]
fn the_gradient_of_a_difference_penalty_matches_central_differences() {
    let mut rng = StdRng::seed_from_u64(2);
    for n in [1, 2, 5, 17] {
        let x = random1(&mut rng, n);
        let g = roughness_grad(&x);
        let fd = fd_grad(x.as_slice().unwrap(), |p| roughness(ArrayView1::from(p)));
        assert_close(g.as_slice().unwrap(), &fd, 1e-7, "d roughness");
    }
}

#[test]
fn a_slice_longer_than_its_argument_is_an_error_naming_it() {
    let x = Array1::<f64>::zeros(0);
    let err = std::panic::catch_unwind(|| differences(x.view())).unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("out of range") && msg.contains("argument `x`"),
        "{msg}"
    );
}

#[jit]
fn windows(x: ArrayView2<f64>) -> (Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>) {
    (
        x.slice(s![1..;2, ..;3]),
        x.slice(s![-1, 1..-1]),
        x.slice(s![..=1, 2..4;1]),
        x.slice_axis(Axis(1), Slice::from(1..3)),
    )
}

#[test]
fn steps_negative_bounds_and_indices_match_ndarray() {
    let mut rng = StdRng::seed_from_u64(3);
    for rows in [2, 3, 6, 9] {
        let x = random2(&mut rng, rows, 7);
        let (a, b, c, d) = windows(x.view());
        let cases = [
            (
                a.iter().copied().collect::<Vec<_>>(),
                x.slice(s![1..;2, ..;3]).iter().copied().collect::<Vec<_>>(),
            ),
            (b.to_vec(), x.slice(s![-1, 1..-1]).to_vec()),
            (
                c.iter().copied().collect(),
                x.slice(s![..=1, 2..4;1]).iter().copied().collect(),
            ),
            (
                d.iter().copied().collect(),
                x.slice(s![.., 1..3]).iter().copied().collect(),
            ),
        ];
        assert_eq!(a.dim(), x.slice(s![1..;2, ..;3]).dim());
        for (i, (got, want)) in cases.iter().enumerate() {
            assert_close(got, want, 0.0, &format!("window {i} at {rows} rows"));
        }
    }
}

#[grad(joined_grad, wrt = (a, b))]
fn joined(a: ArrayView1<f64>, b: ArrayView1<f64>, w: ArrayView1<f64>) -> f64 {
    let c = concatenate(Axis(0), &[a.view(), b.view(), a.view()]);
    (c.slice(s![1..;2]).sin() * w).sum()
}

#[jit]
fn stacked(a: ArrayView1<f64>, b: ArrayView1<f64>) -> (Array2<f64>, Array2<f64>, Array1<f64>) {
    (
        stack![Axis(0), a, b],
        stack(Axis(1), &[a.view(), b.view()]),
        concatenate![Axis(0), a, b].exp(),
    )
}

#[test]
fn concatenation_feeding_a_reduction_and_its_gradient() {
    let mut rng = StdRng::seed_from_u64(4);
    for (n, m) in [(1, 1), (2, 3), (5, 4), (16, 9)] {
        let (a, b) = (random1(&mut rng, n), random1(&mut rng, m));
        let c = concatenate(Axis(0), &[a.view(), b.view(), a.view()]).unwrap();
        let picked = c.slice(s![1..;2]).to_owned();
        let w = random1(&mut rng, picked.len());
        let want: f64 = picked.iter().zip(&w).map(|(p, w)| p.sin() * w).sum();
        assert_close(
            &[joined(a.view(), b.view(), w.view())],
            &[want],
            1e-14,
            "joined",
        );
        let (ga, gb) = joined_grad(&a, &b, &w);
        let fa = fd_grad(a.as_slice().unwrap(), |p| {
            joined(ArrayView1::from(p), b.view(), w.view())
        });
        let fb = fd_grad(b.as_slice().unwrap(), |p| {
            joined(a.view(), ArrayView1::from(p), w.view())
        });
        assert_close(ga.as_slice().unwrap(), &fa, 1e-7, "d joined / da");
        assert_close(gb.as_slice().unwrap(), &fb, 1e-7, "d joined / db");
    }
}

#[test]
fn stack_and_concatenate_match_ndarray() {
    let mut rng = StdRng::seed_from_u64(5);
    for n in [0, 1, 4, 17] {
        let (a, b) = (random1(&mut rng, n), random1(&mut rng, n));
        let (s0, s1, e) = stacked(a.view(), b.view());
        assert_eq!(s0, stack(Axis(0), &[a.view(), b.view()]).unwrap());
        assert_eq!(s1, stack(Axis(1), &[a.view(), b.view()]).unwrap());
        let want = concatenate(Axis(0), &[a.view(), b.view()])
            .unwrap()
            .mapv(f64::exp);
        assert_close(
            e.as_slice().unwrap(),
            want.as_slice().unwrap(),
            1e-15,
            "exp of concat",
        );
    }
}

#[jit]
fn corners(x: ArrayView2<f64>) -> Array2<f64> {
    concatenate(Axis(1), &[x.slice(s![.., ..1]), x.slice(s![.., -1..])])
}

#[test]
fn slices_of_a_run_time_axis_inside_a_concatenation() {
    let mut rng = StdRng::seed_from_u64(6);
    for (r, c) in [(1, 1), (3, 2), (4, 9)] {
        let x = random2(&mut rng, r, c);
        let want = concatenate(Axis(1), &[x.slice(s![.., ..1]), x.slice(s![.., -1..])]).unwrap();
        assert_eq!(corners(x.view()), want);
    }
}

#[jit]
fn weighted_differences(x: ArrayView1<f64>, w: ArrayView1<f64>) -> f64 {
    ((x.slice(s![1..]) - x.slice(s![..-1])) * w).sum()
}

#[test]
fn an_argument_sized_like_a_slice_is_checked_against_it() {
    let x = Array1::from(vec![1.0, 4.0, 9.0, 16.0, 25.0]);
    let w = Array1::from(vec![1.0, -1.0, 2.0, 0.5]);
    // Differences 3, 5, 7, 9.
    assert_eq!(
        weighted_differences(x.view(), w.view()),
        3.0 - 5.0 + 14.0 + 4.5
    );
    let long = Array1::<f64>::zeros(5);
    let err = std::panic::catch_unwind(|| weighted_differences(x.view(), long.view())).unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("argument `w`") && msg.contains("axis 0 is 5") && msg.contains("argument `x`"),
        "{msg}"
    );
}

/// `np.roll(x, -1) - x` written with slices, as a JAX user does: the
/// concatenation's length `(n − 1) + 1` is `n`, so it meets `x`.
#[grad(rolled_diff_grad)]
fn rolled_diff(x: ArrayView1<f64>) -> f64 {
    let rolled = concatenate![Axis(0), x.slice(s![1..]), x.slice(s![..1])];
    ((rolled - x) * (rolled - x)).sum()
}

/// The same along axis 1 of a matrix, in the other order, with a
/// two-element head: `2 + (m − 2)` is `m`.
#[jit]
fn rolled_cols(x: ArrayView2<f64>) -> Array2<f64> {
    let back = concatenate(Axis(1), &[x.slice(s![.., -2..]), x.slice(s![.., ..-2])]);
    back * x
}

#[test]
fn sizes_written_differently_are_one_size() {
    let mut rng = StdRng::seed_from_u64(14);
    for n in [1usize, 2, 7] {
        let x = random1(&mut rng, n);
        let want: f64 = (0..n).map(|i| (x[(i + 1) % n] - x[i]).powi(2)).sum();
        assert_close(&[rolled_diff(x.view())], &[want], 1e-14, "rolled_diff");
        let g = rolled_diff_grad(&x);
        let fd = fd_grad(x.as_slice().unwrap(), |p| rolled_diff(ArrayView1::from(p)));
        assert_close(g.as_slice().unwrap(), &fd, 1e-7, "d rolled_diff");
    }
    for (r, m) in [(1usize, 2usize), (3, 5)] {
        let x = Array2::from_shape_fn((r, m), |(i, j)| (i * m + j) as f64 * 0.5 - 1.0);
        let got = rolled_cols(x.view());
        for i in 0..r {
            for j in 0..m {
                let want = x[[i, (j + m - 2) % m]] * x[[i, j]];
                assert_eq!(got[[i, j]], want, "[{i}, {j}] of {r}×{m}");
            }
        }
    }
    // A slice out of range is still an error at the call.
    let short = Array2::from_shape_fn((2, 1), |(i, _)| i as f64);
    let msg = crate::panic_message(|| {
        rolled_cols(short.view());
    });
    assert!(msg.contains("out of range"), "{msg}");
}

/// `jnp.roll` along either axis, by shifts of both signs, on axes of
/// run-time and of static size.
#[jit]
fn rolls(x: ArrayView2<f64>, v: &[f64; 5]) -> (Array2<f64>, Array2<f64>, Array1<f64>, Array1<f64>) {
    (
        roll(x, 1, Axis(0)),
        roll(x, -2, Axis(1)),
        roll(v, 7, Axis(0)),
        roll(v, -1, Axis(0)),
    )
}

/// A periodic Laplacian, as a JAX fluid simulation writes it, and its
/// gradient.
#[grad(periodic_energy_grad)]
fn periodic_energy(u: ArrayView1<f64>) -> f64 {
    let lap = roll(u, 1, Axis(0)) + roll(u, -1, Axis(0)) - 2.0 * u;
    (lap * lap).sum()
}

fn roll_ref(n: usize, shift: i64, i: usize) -> usize {
    (i as i64 - shift).rem_euclid(n as i64) as usize
}

#[test]
fn roll_matches_numpy_with_its_gradient() {
    let x = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f64);
    let v = [1.0, 2.0, 3.0, 4.0, 5.0];
    let (r0, r1, rv, rw) = rolls(x.view(), &v);
    for i in 0..3 {
        for j in 0..4 {
            assert_eq!(r0[[i, j]], x[[roll_ref(3, 1, i), j]]);
            assert_eq!(r1[[i, j]], x[[i, roll_ref(4, -2, j)]]);
        }
    }
    for i in 0..5 {
        assert_eq!(rv[i], v[roll_ref(5, 7, i)]);
        assert_eq!(rw[i], v[roll_ref(5, -1, i)]);
    }
    let mut rng = StdRng::seed_from_u64(21);
    for n in [2usize, 3, 8] {
        let u = random1(&mut rng, n);
        let want: f64 = (0..n)
            .map(|i| {
                let l = u[roll_ref(n, 1, i)] + u[roll_ref(n, -1, i)] - 2.0 * u[i];
                l * l
            })
            .sum();
        assert_close(
            &[periodic_energy(u.view())],
            &[want],
            1e-14,
            "periodic_energy",
        );
        let g = periodic_energy_grad(&u);
        let fd = fd_grad(u.as_slice().unwrap(), |p| {
            periodic_energy(ArrayView1::from(p))
        });
        assert_close(g.as_slice().unwrap(), &fd, 1e-7, "d periodic_energy");
    }
    // A shift longer than an axis of run-time size: an error at the call.
    let msg = crate::panic_message(|| {
        rolls(Array2::<f64>::zeros((0, 4)).view(), &v);
    });
    assert!(msg.contains("out of range"), "{msg}");
}

/// Indices known at run time inside `s![..]`: a column picked by a
/// parameter, a row by a loop index, with the gradient.
#[grad(picked_grad, wrt = x)]
fn picked(x: ArrayView2<f64>, o: usize) -> f64 {
    let col = x.slice(s![.., o]);
    let mut s = (col * col).sum();
    for i in 0..x.nrows() {
        s += x.slice(s![i, 1..]).sum() * (i as f64 + 1.0);
    }
    s
}

fn picked_ref(x: &Array2<f64>, o: usize) -> f64 {
    let mut s: f64 = x.column(o).iter().map(|v| v * v).sum();
    for i in 0..x.nrows() {
        s += x.slice(s![i, 1..]).sum() * (i as f64 + 1.0);
    }
    s
}

#[test]
fn run_time_indices_in_s_macro() {
    let x = Array2::from_shape_fn((3, 4), |(i, j)| (i as f64 - 1.0) * 0.7 + j as f64 * 0.3);
    for o in 0..4 {
        assert_close(
            &[picked(x.view(), o)],
            &[picked_ref(&x, o)],
            1e-14,
            "picked",
        );
        let g = picked_grad(x.view(), o);
        let fd = fd_grad(x.as_slice().unwrap(), |p| {
            picked(ArrayView2::from_shape((3, 4), p).unwrap(), o)
        });
        assert_close(g.as_slice().unwrap(), &fd, 1e-7, "d picked");
    }
    // A parameter index out of range is an error at the call naming it.
    let msg = crate::panic_message(|| {
        picked(x.view(), 4);
    });
    assert!(msg.contains("`o`"), "{msg}");
}

/// Windows at a run-time start, `s![k..k + w]` (`lax.dynamic_slice`): a
/// 1-D convolution over taps as JAX writes it, with its gradients, and a
/// start past the end clamped so the window fits, as JAX clamps it.
#[grad(conv_energy_grad, wrt = (x, w))]
fn conv_energy(x: ArrayView1<f64>, w: ArrayView1<f64>) -> f64 {
    let mut s = 0.0;
    for t in 0..x.len() - 2 {
        let y = (x.slice(s![t..t + 3]) * w).sum();
        s += y * y;
    }
    s
}

#[jit]
fn window_at(m: ArrayView2<f64>, k: usize) -> (Array2<f64>, Array1<f64>) {
    (m.slice(s![k..k + 2, ..]), m.slice(s![0, k..k + 2]))
}

#[test]
fn windows_at_run_time_starts() {
    let mut rng = StdRng::seed_from_u64(23);
    for n in [3usize, 4, 9] {
        let x = random1(&mut rng, n);
        let w = random1(&mut rng, 3);
        let reference = |x: &[f64], w: &[f64]| {
            (0..n - 2)
                .map(|t| {
                    let y: f64 = (0..3).map(|j| x[t + j] * w[j]).sum();
                    y * y
                })
                .sum::<f64>()
        };
        let xs = x.as_slice().unwrap();
        let ws = w.as_slice().unwrap();
        assert_close(
            &[conv_energy(x.view(), w.view())],
            &[reference(xs, ws)],
            1e-14,
            "conv",
        );
        let (gx, gw) = conv_energy_grad(&x, &w);
        assert_close(
            gx.as_slice().unwrap(),
            &fd_grad(xs, |p| reference(p, ws)),
            1e-7,
            "d/dx",
        );
        assert_close(
            gw.as_slice().unwrap(),
            &fd_grad(ws, |p| reference(xs, p)),
            1e-7,
            "d/dw",
        );
    }
    let m = Array2::from_shape_fn((4, 5), |(i, j)| (10 * i + j) as f64);
    for k in [0usize, 1, 2, 3, 9] {
        let (rows, row) = window_at(m.view(), k);
        let r = k.min(2);
        let c = k.min(3);
        assert_eq!(rows, m.slice(s![r..r + 2, ..]), "rows at {k}");
        assert_eq!(row, m.slice(s![0, c..c + 2]), "row at {k}");
    }
    // A window longer than its axis is an error at the call.
    let narrow = Array2::<f64>::zeros((1, 5));
    let msg = crate::panic_message(|| {
        window_at(narrow.view(), 0);
    });
    assert!(msg.contains("out of range"), "{msg}");
}
