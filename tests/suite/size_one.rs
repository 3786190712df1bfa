//! Issue 20 item 6: numpy broadcasting of an argument axis that is 1 at
//! the call, where the compiled program expects the size another argument
//! binds. numpy (and JAX) stretch the size-1 axis; its gradient is the sum
//! of the full gradient over that axis. Expected values are plain Rust
//! loops, the same function called with the argument already broadcast
//! (the program without a size-1 axis), and finite differences.

use crate::panic_message;
use oxla::ndarray::{Array2, ArrayView2, Axis};
use oxla::{grad, jit, vmap};

#[vmap(sq_dist_rows, of = sq_dist, in_axes = (0, None))]
#[grad(sq_dist_grad)]
fn sq_dist(x: ArrayView2<f64>, mu: ArrayView2<f64>) -> f64 {
    let d = x - mu * 2.0;
    (d * d).sum()
}

fn data() -> (Array2<f64>, Array2<f64>) {
    let x = Array2::from_shape_fn((4, 3), |(i, j)| (i as f64 * 0.7 - j as f64 * 0.3).sin());
    let mu = Array2::from_shape_fn((1, 3), |(_, j)| 0.25 + 0.5 * j as f64);
    (x, mu)
}

/// `mu` repeated to `rows` rows: what numpy's broadcasting computes with.
fn repeat_rows(mu: &Array2<f64>, rows: usize) -> Array2<f64> {
    mu.broadcast((rows, mu.ncols())).unwrap().to_owned()
}

#[test]
fn a_size_one_row_broadcasts_against_the_full_array() {
    let (x, mu) = data();
    let mut want = 0.0;
    for i in 0..4 {
        for j in 0..3 {
            let d = x[[i, j]] - 2.0 * mu[[0, j]];
            want += d * d;
        }
    }
    let got = sq_dist(x.view(), mu.view());
    assert!((got - want).abs() <= 1e-14 * want.abs(), "{got} vs {want}");
    // The same as passing `mu` already broadcast, bit for bit.
    assert_eq!(got, sq_dist(x.view(), repeat_rows(&mu, 4).view()));
    // Either argument may be the narrow one.
    let full = repeat_rows(&mu, 4);
    assert_eq!(sq_dist(x.view(), full.view()), sq_dist(x.view(), mu.view()));
}

#[test]
fn the_gradient_of_a_broadcast_argument_sums_over_the_broadcast_axis() {
    let (x, mu) = data();
    let (dx, dmu) = sq_dist_grad(x.view(), mu.view());
    assert_eq!(dmu.dim(), (1, 3));
    // Against the gradient at the broadcast argument, summed over rows.
    let (dx_full, dmu_full) = sq_dist_grad(x.view(), repeat_rows(&mu, 4).view());
    assert_eq!(dx, dx_full);
    let summed = dmu_full.sum_axis(Axis(0));
    for j in 0..3 {
        assert!(
            (dmu[[0, j]] - summed[j]).abs() <= 1e-13,
            "{j}: {dmu} vs {summed}"
        );
    }
    // And against central differences of the function itself.
    let h = 1e-6;
    for j in 0..3 {
        let (mut up, mut down) = (mu.clone(), mu.clone());
        up[[0, j]] += h;
        down[[0, j]] -= h;
        let fd = (sq_dist(x.view(), up.view()) - sq_dist(x.view(), down.view())) / (2.0 * h);
        assert!(
            (dmu[[0, j]] - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
            "{j}: {} vs {fd}",
            dmu[[0, j]]
        );
    }
}

#[test]
fn a_vmapped_function_broadcasts_an_unbatched_argument_too() {
    // One row of `x` per example; `mu` shared, passed with one row where
    // each example's `x` row has 1 (no broadcast needed) — then with the
    // examples' rows at 2 and `mu` at 1.
    let xs = Array2::from_shape_fn((5, 3), |(i, j)| (i * 3 + j) as f64 * 0.1);
    let mu = Array2::from_shape_fn((1, 3), |(_, j)| j as f64 - 1.0);
    let got = sq_dist_rows(
        xs.view().into_shape_with_order((5, 1, 3)).unwrap(),
        mu.view(),
    );
    for i in 0..5 {
        let row = xs.row(i).to_owned().insert_axis(Axis(0));
        assert_eq!(got[i], sq_dist(row.view(), mu.view()));
    }
    let pairs = Array2::from_shape_fn((10, 3), |(i, j)| (i as f64 - j as f64) * 0.2);
    let pairs = pairs.into_shape_with_order((5, 2, 3)).unwrap();
    let got = sq_dist_rows(pairs.view(), mu.view());
    for i in 0..5 {
        let ex = pairs.index_axis(Axis(0), i).to_owned();
        assert_eq!(got[i], sq_dist(ex.view(), repeat_rows(&mu, 2).view()));
    }
}

#[jit]
fn outer_difference(x: ArrayView2<f64>, y: ArrayView2<f64>) -> Array2<f64> {
    x - y
}

#[test]
fn a_column_and_a_row_broadcast_to_their_outer_shape() {
    // x[:, None] - y[None, :] written with the axes already there.
    let x = Array2::from_shape_vec((3, 1), vec![1.0, 2.0, 4.0]).unwrap();
    let y = Array2::from_shape_vec((1, 2), vec![0.5, -1.0]).unwrap();
    let got = outer_difference(x.view(), y.view());
    assert_eq!(got.dim(), (3, 2));
    for i in 0..3 {
        for j in 0..2 {
            assert_eq!(got[[i, j]], x[[i, 0]] - y[[0, j]]);
        }
    }
}

#[grad(dot_scaled_grad)]
fn dot_scaled(a: &[f64], b: &[f64]) -> f64 {
    (a * b).sum()
}

#[test]
fn a_length_one_slice_broadcasts_against_a_longer_one() {
    let a = [1.5];
    let b = [1.0, -2.0, 0.25, 4.0];
    assert_eq!(dot_scaled(&a, &b), b.iter().map(|v| 1.5 * v).sum::<f64>());
    let (da, db) = dot_scaled_grad(&a, &b);
    assert_eq!(da, vec![b.iter().sum::<f64>()]);
    assert_eq!(db, vec![1.5; 4]);
}

#[jit]
fn centered_and_scale(x: ArrayView2<f64>, mu: ArrayView2<f64>) -> (Array2<f64>, Array2<f64>) {
    (x - mu, mu * mu)
}

#[test]
fn a_result_computed_from_the_size_one_argument_alone_keeps_its_size() {
    // JAX returns `mu * mu` with one row.
    let (x, mu) = data();
    let (c, m2) = centered_and_scale(x.view(), mu.view());
    assert_eq!(c.dim(), (4, 3));
    assert_eq!(c, &x - &repeat_rows(&mu, 4));
    assert_eq!(m2.dim(), (1, 3));
    assert_eq!(m2, mu.mapv(|v| v * v));
}

#[jit]
fn with_own_sum(x: ArrayView2<f64>, mu: ArrayView2<f64>) -> f64 {
    let d = x - mu;
    (d * d).sum() + mu.sum()
}

#[grad(mean_square_grad)]
fn mean_square(x: ArrayView2<f64>, mu: ArrayView2<f64>) -> f64 {
    let d = x - mu;
    (d * d).mean()
}

#[jit]
fn per_row_of_mu(x: ArrayView2<f64>, mu: ArrayView2<f64>) -> f64 {
    let d = x - mu;
    (d * d).sum() / mu.nrows() as f64
}

#[test]
fn a_mean_divides_by_the_full_count() {
    let (x, mu) = data();
    let full = repeat_rows(&mu, 4);
    assert_eq!(
        mean_square(x.view(), mu.view()),
        mean_square(x.view(), full.view())
    );
    let (dx, dmu) = mean_square_grad(x.view(), mu.view());
    let (dx_full, dmu_full) = mean_square_grad(x.view(), full.view());
    assert_eq!(dx, dx_full);
    let summed = dmu_full.sum_axis(Axis(0));
    for j in 0..3 {
        assert!(
            (dmu[[0, j]] - summed[j]).abs() <= 1e-15,
            "{dmu} vs {summed}"
        );
    }
}

#[jit]
fn scaled_alone(x: ArrayView2<f64>, mu: ArrayView2<f64>) -> (Array2<f64>, Array2<f64>) {
    (x - mu, mu * 3.0)
}

#[test]
fn a_use_the_unified_program_cannot_make_exact_is_an_error_naming_the_argument() {
    let (x, mu) = data();
    // `mu.sum()` sums one row in numpy; the program would sum four.
    let (xc, mc) = (x.clone(), mu.clone());
    let msg = panic_message(move || {
        with_own_sum(xc.view(), mc.view());
    });
    assert!(
        msg.contains("argument `mu` of `with_own_sum`")
            && msg.contains("axis 0 of `mu`")
            && msg.contains("reduced")
            && msg.contains("pass it at the full size"),
        "{msg}"
    );
    // `mu.nrows()` is 1 in numpy; the program reads a size that may be
    // `x`'s or `mu`'s.
    let (xc, mc) = (x.clone(), mu.clone());
    let msg = panic_message(move || {
        per_row_of_mu(xc.view(), mc.view());
    });
    assert!(
        msg.contains("axis 0 of `mu`") && msg.contains("size"),
        "{msg}"
    );
    // `3.0` is broadcast to a shape the program writes as `x`'s: the
    // result's size could be either (JAX: one row).
    let msg = panic_message(move || {
        scaled_alone(x.view(), mu.view());
    });
    assert!(
        msg.contains("axis 0 of `mu`") && msg.contains("result 1"),
        "{msg}"
    );
}

#[test]
fn sizes_that_are_neither_equal_nor_one_are_still_an_error() {
    let (x, _) = data();
    let mu = Array2::<f64>::zeros((2, 3));
    let msg = panic_message(move || {
        sq_dist(x.view(), mu.view());
    });
    assert!(
        msg.contains("argument `mu` of `sq_dist`") && msg.contains("axis 0 is 2"),
        "{msg}"
    );
}

#[test]
fn every_call_of_one_pattern_reuses_one_program() {
    let (x, mu) = data();
    let call = |rows: usize| {
        let x = Array2::from_shape_fn((rows, 3), |(i, j)| x[[i % 4, j]]);
        sq_dist_grad(x.view(), mu.view())
    };
    let _ = call(4);
    let count = || {
        oxla::compile_log()
            .iter()
            .filter(|r| r.function == "sq_dist_grad")
            .count()
    };
    let before = count();
    for rows in [7usize, 9, 2] {
        let _ = call(rows);
    }
    assert_eq!(
        count(),
        before,
        "a size-1 pattern compiled again at another size"
    );
}
