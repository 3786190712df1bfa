//! Integer indices in `s![..]` on axes of run-time size (issue 20): `s![.., 1]`,
//! `s![0, ..]`, `s![1, 2..]` used to fail to compile ("cannot reshape
//! f64[m_0,(m_1:1:2:1)] to [m_0]"). Value, gradient and vmap against
//! ndarray, and an index past the end is a panic naming the argument.

use oxla::ndarray::{s, Array1, Array2, Array3, ArrayView2};
use oxla::{grad, jit, vmap};

fn matrix(m: usize, n: usize) -> Array2<f64> {
    Array2::from_shape_fn((m, n), |(i, j)| {
        (i as f64 + 1.0) * 0.5 - (j as f64) * 0.25 + 0.1
    })
}

#[jit]
fn picks(m: ArrayView2<f64>) -> (Array1<f64>, Array1<f64>, Array1<f64>, f64) {
    (
        m.slice(s![.., 1]),
        m.slice(s![0, ..]),
        m.slice(s![1, 2..]),
        m.slice(s![2, 1]).sum(),
    )
}

#[grad(column_loss_grad)]
fn column_loss(m: ArrayView2<f64>) -> f64 {
    let c = m.slice(s![.., 1]);
    let r = m.slice(s![1, 2..]);
    (c * c).sum() + 3.0 * r.sum()
}

#[vmap(batched_columns)]
fn column(m: ArrayView2<f64>) -> Array1<f64> {
    m.slice(s![.., 1]) * 2.0
}

#[test]
fn integer_indices_on_run_time_axes_match_ndarray() {
    for (r, c) in [(3, 4), (5, 3), (3, 7)] {
        let m = matrix(r, c);
        let (a, b, d, e) = picks(m.view());
        assert_eq!(a, m.slice(s![.., 1]));
        assert_eq!(b, m.slice(s![0, ..]));
        assert_eq!(d, m.slice(s![1, 2..]));
        assert_eq!(e, m[[2, 1]]);
    }
}

#[test]
fn the_gradient_through_an_index_lands_on_its_row_and_column() {
    let m = matrix(4, 5);
    let g = column_loss_grad(m.view());
    let mut want = Array2::<f64>::zeros((4, 5));
    for i in 0..4 {
        want[[i, 1]] += 2.0 * m[[i, 1]];
    }
    for j in 2..5 {
        want[[1, j]] += 3.0;
    }
    assert_eq!(g, want);
}

#[test]
fn an_index_is_batched_by_vmap() {
    let ms: Array3<f64> = Array3::from_shape_fn((3, 4, 5), |(b, i, j)| (b * 20 + i * 5 + j) as f64);
    let got = batched_columns(ms.view());
    let want = ms.slice(s![.., .., 1]).to_owned() * 2.0;
    assert_eq!(got, want);
}

#[test]
fn an_index_past_the_end_of_a_run_time_axis_is_a_panic_naming_the_argument() {
    let m = matrix(3, 1); // `s![.., 1]` needs 2 columns
    let err = std::panic::catch_unwind(|| picks(m.view())).unwrap_err();
    let msg = err
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(msg.contains("argument `m`"), "{msg}");
    let m = matrix(1, 4); // `s![1, 2..]` needs 2 rows
    let err = std::panic::catch_unwind(|| column_loss_grad(m.view())).unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("argument `m`"), "{msg}");
}
