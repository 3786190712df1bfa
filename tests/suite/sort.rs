//! `sort`, `argsort` and `top_k` against JAX (`tests/reference/sort_jax.py`,
//! its output read here): NaN last, `-0.0` equal to `0.0`, ties stable,
//! along the last axis and along axis 0; a loss through `sort` and `top_k`
//! with its gradient (JAX's, and central differences); `vmap` of `top_k`.

use oxla::ndarray::{Array1, Array2, ArrayD, ArrayView1, ArrayView2, Axis};
use oxla::{grad, jit, vmap};

/// JAX's values: `name` → its array.
fn jax(name: &str) -> ArrayD<f64> {
    let text = include_str!("../reference/sort_jax.txt");
    crate::reference::reference_array(text, "sort_jax.txt", name)
}

fn jax2(name: &str) -> Array2<f64> {
    jax(name).into_dimensionality().unwrap()
}

/// Equal, NaN equal to NaN and `-0.0` told from `0.0`.
#[track_caller]
fn same_bits(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
            "element {i}: {g:?}, JAX {w:?} (got {got:?})"
        );
    }
}

#[jit]
fn sorted(x: ArrayView1<f64>) -> Array1<f64> {
    sort(x)
}

#[jit]
fn order(x: ArrayView1<f64>) -> Array1<i64> {
    argsort(x)
}

#[jit]
fn sorted_rows_and_columns(m: ArrayView2<f64>) -> (Array2<f64>, Array2<f64>) {
    (sort(m), sort(m, Axis(0)))
}

#[jit]
fn orders(m: ArrayView2<f64>) -> (Array2<i64>, Array2<i64>) {
    (argsort(m, Axis(-1)), argsort(m, Axis(0)))
}

#[jit]
fn largest3(m: ArrayView2<f64>) -> (Array2<f64>, Array2<i64>) {
    let (values, indices) = top_k(m, 3);
    (values, indices)
}

#[grad(sort_loss_grad, wrt = x)]
fn sort_loss(x: ArrayView2<f64>, w: ArrayView2<f64>) -> f64 {
    let (values, _) = top_k(x, 2);
    (w * sort(x)).sum() + (values.clone() * values).sum()
}

#[vmap(largest2_each, in_axes = (0))]
fn largest2(r: ArrayView1<f64>) -> (Array1<f64>, Array1<i64>) {
    let (values, indices) = top_k(r, 2);
    (values, indices)
}

fn as_f64(a: &Array2<i64>) -> Vec<f64> {
    a.iter().map(|&i| i as f64).collect()
}

#[test]
fn sort_and_argsort_of_a_vector_are_jaxs() {
    let v: Array1<f64> = jax("v").into_dimensionality().unwrap();
    same_bits(
        sorted(v.view()).as_slice().unwrap(),
        jax("sort_v").as_slice().unwrap(),
    );
    let idx: Vec<f64> = order(v.view()).iter().map(|&i| i as f64).collect();
    same_bits(&idx, jax("argsort_v").as_slice().unwrap());
}

#[test]
fn sort_argsort_and_top_k_of_a_matrix_are_jaxs() {
    let m = jax2("m");
    let (rows, cols) = sorted_rows_and_columns(m.view());
    same_bits(rows.as_slice().unwrap(), jax("sort_m").as_slice().unwrap());
    same_bits(
        cols.as_slice().unwrap(),
        jax("sort_m_axis0").as_slice().unwrap(),
    );
    let (last, first) = orders(m.view());
    same_bits(&as_f64(&last), jax("argsort_m").as_slice().unwrap());
    same_bits(&as_f64(&first), jax("argsort_m_axis0").as_slice().unwrap());
    let (values, indices) = largest3(m.view());
    same_bits(
        values.as_slice().unwrap(),
        jax("top_k_m_values").as_slice().unwrap(),
    );
    same_bits(
        &as_f64(&indices),
        jax("top_k_m_indices").as_slice().unwrap(),
    );
}

#[test]
fn gradient_through_sort_and_top_k_is_jaxs_and_central_differences() {
    let (x, w) = (jax2("x"), jax2("w"));
    let loss = sort_loss(x.view(), w.view());
    assert!((loss - jax("loss")[[]]).abs() <= 1e-14 * loss.abs().max(1.0));
    let g = sort_loss_grad(x.view(), w.view());
    let want = jax2("loss_grad");
    for (a, b) in g.iter().zip(&want) {
        assert!((a - b).abs() <= 1e-14, "{g} vs JAX {want}");
    }
    let h = 1e-6;
    for idx in [(0, 0), (0, 3), (1, 1), (1, 4)] {
        let (mut p, mut m) = (x.clone(), x.clone());
        p[idx] += h;
        m[idx] -= h;
        let fd = (sort_loss(p.view(), w.view()) - sort_loss(m.view(), w.view())) / (2.0 * h);
        assert!(
            (fd - g[idx]).abs() <= 1e-7,
            "at {idx:?}: {fd} vs {}",
            g[idx]
        );
    }
}

#[test]
fn vmap_of_top_k_is_jaxs() {
    let xs = jax2("xs");
    let (values, indices) = largest2_each(xs.view());
    same_bits(
        values.as_slice().unwrap(),
        jax("vmap_top_k_values").as_slice().unwrap(),
    );
    same_bits(
        &as_f64(&indices),
        jax("vmap_top_k_indices").as_slice().unwrap(),
    );
    // And each example's own top_k.
    for (r, row) in xs.axis_iter(Axis(0)).enumerate() {
        let (v, i) = largest2(row);
        assert_eq!(v, values.row(r));
        assert_eq!(i, indices.row(r));
    }
}
