//! Constructors (`zeros`, `ones`, `full`, `arange`, `eye`, and ndarray's
//! spellings) with sizes fixed or taken from an argument's axes, and
//! `where_`/`select` with numpy broadcasting: values against ndarray's own
//! constructors and a loop, gradients against closed forms and central
//! differences.

use oxla::ndarray::{array, Array1, Array2, ArrayView1, ArrayView2, Axis};

#[oxla::jit]
#[allow(clippy::type_complexity)]
fn shaped_like(
    x: ArrayView2<f64>,
) -> (
    Array2<f64>,
    Array2<f64>,
    Array2<f64>,
    Array1<f64>,
    Array2<f64>,
    Array1<f64>,
) {
    (
        zeros(x.raw_dim()) + x,
        ones((x.nrows(), x.ncols())),
        full([2, x.ncols()], 2.5),
        arange(x.len_of(Axis(1))),
        eye(x.nrows()),
        Array1::ones(x.nrows()) * 0.0 + arange(x.len_of(Axis(0))),
    )
}

#[oxla::jit]
fn fixed(x: ArrayView1<f32>) -> (Array2<f32>, Array2<f32>, Array1<f32>) {
    (
        Array2::eye(3),
        Array::from_elem((2, 2), 7.0) + Array2::zeros((2, 2)),
        arange(5) + x.sum(),
    )
}

#[test]
fn constructors_match_ndarray() {
    for (rows, cols) in [(1, 1), (3, 4), (5, 2)] {
        let x = Array2::from_shape_fn((rows, cols), |(i, j)| (i * 10 + j) as f64 - 3.5);
        let (z, o, f, a, e, a0) = shaped_like(x.view());
        assert_eq!(z, x);
        assert_eq!(o, Array2::<f64>::ones((rows, cols)));
        assert_eq!(f, Array2::from_elem((2, cols), 2.5));
        assert_eq!(a, Array1::range(0.0, cols as f64, 1.0));
        assert_eq!(e, Array2::<f64>::eye(rows));
        assert_eq!(a0, Array1::range(0.0, rows as f64, 1.0));
    }
    let (e, f, a) = fixed(array![1.0f32, 2.0].view());
    assert_eq!(e, Array2::<f32>::eye(3));
    assert_eq!(f, Array2::from_elem((2, 2), 7.0f32));
    assert_eq!(a, array![3.0f32, 4.0, 5.0, 6.0, 7.0]);
}

#[oxla::grad(pick_grad, wrt = (x, y))]
fn pick(x: ArrayView1<f64>, y: ArrayView1<f64>) -> f64 {
    where_(x > y, x * x, y * 3.0).sum()
}

// A scalar threshold and a scalar branch broadcast against a matrix.
#[oxla::grad(clip_grad)]
fn clip(x: ArrayView2<f64>, t: f64) -> f64 {
    select(x >= t, x, t * 2.0).sum()
}

#[oxla::jit]
fn rows_where(x: ArrayView2<f64>, m: ArrayView1<f64>) -> Array2<f64> {
    where_(m > 0.0, x, -x)
}

#[test]
fn where_selects_and_routes_gradients() {
    let x = array![1.0, -2.0, 3.0, 0.5];
    let y = array![0.0, 1.0, 3.0, -1.0];
    let want: f64 = x
        .iter()
        .zip(&y)
        .map(|(a, b)| if a > b { a * a } else { b * 3.0 })
        .sum();
    assert_eq!(pick(x.view(), y.view()), want);
    let (gx, gy) = pick_grad(&x, &y);
    for i in 0..4 {
        let taken = x[i] > y[i];
        assert_eq!(gx[i], if taken { 2.0 * x[i] } else { 0.0 });
        assert_eq!(gy[i], if taken { 0.0 } else { 3.0 });
    }

    let m = array![[0.3, -1.0], [2.0, 0.7]];
    let t = 0.5;
    let (gm, gt) = clip_grad(&m, t);
    assert_eq!(gm, m.mapv(|v| if v >= t { 1.0 } else { 0.0 }));
    assert_eq!(gt, 2.0 * m.iter().filter(|v| **v < t).count() as f64);

    // The condition has shape [2] and broadcasts along the rows of [3, 2].
    let x = Array2::from_shape_fn((3, 2), |(i, j)| (i + 2 * j) as f64);
    let r = rows_where(x.view(), array![1.0, -1.0].view());
    assert_eq!(
        r,
        Array2::from_shape_fn((3, 2), |(i, j)| if j == 0 { x[[i, j]] } else { -x[[i, j]] })
    );
}

#[oxla::grad(weighted_grad, wrt = (x, v))]
fn weighted(x: ArrayView1<f64>, v: f64) -> f64 {
    (full(x.len(), v) * x + arange(x.len()) * x * x + eye(x.len()).dot(&x)).sum()
}

#[test]
fn constructor_gradients_match_differences() {
    let x = array![0.5, -1.25, 2.0, 0.75, 3.0];
    let v = 1.5;
    let (gx, gv) = weighted_grad(&x, v);
    // d/dx_i = v + 2·i·x_i + 1; d/dv = Σ x.
    for i in 0..x.len() {
        assert_eq!(gx[i], v + 2.0 * i as f64 * x[i] + 1.0);
    }
    assert_eq!(gv, x.sum());
    let h = 1e-6;
    let fd = (weighted(x.view(), v + h) - weighted(x.view(), v - h)) / (2.0 * h);
    assert!((fd - gv).abs() < 1e-6, "{fd} vs {gv}");
    for i in 0..x.len() {
        let (mut p, mut m) = (x.clone(), x.clone());
        p[i] += h;
        m[i] -= h;
        let fd = (weighted(p.view(), v) - weighted(m.view(), v)) / (2.0 * h);
        assert!(
            (fd - gx[i]).abs() < 1e-6 * (1.0 + fd.abs()),
            "{i}: {fd} vs {}",
            gx[i]
        );
    }
}

// Under vmap the sizes are those of one example (a row).
#[oxla::vmap(per_row_batched)]
fn per_row(x: ArrayView1<f64>) -> f64 {
    (where_(x > 0.0, x, zeros(x.len())) * arange(x.len()) + eye(x.len()).dot(&x)).sum()
}

#[test]
fn constructors_and_where_under_vmap_match_a_loop() {
    let x = Array2::from_shape_fn((4, 3), |(i, j)| (i as f64 - 1.5) * (j as f64 + 0.5));
    let got = per_row_batched(&x);
    for i in 0..4 {
        let row = x.row(i);
        let want: f64 = row
            .iter()
            .enumerate()
            .map(|(j, v)| v.max(0.0) * j as f64 + v)
            .sum();
        assert_eq!(got[i], want, "row {i}");
        assert_eq!(per_row(row), want, "row {i} unbatched");
    }
}
