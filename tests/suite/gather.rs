//! Gather by an integer index array: `x.select(Axis(k), &idx)` (ndarray's
//! spelling) and `take(x, &idx, Axis(k))` (numpy's), with indices of any
//! shape. The values against ndarray's `select` and a loop; an embedding
//! lookup's gradient against its closed form (the cotangent scattered into
//! the picked rows, added where a row is picked twice) and central
//! differences; the indices carry no derivative.

use crate::panic_message;
use oxla::ndarray::{Array1, Array2, Array3, ArrayView1, ArrayView2, Axis};
use oxla::{grad, jit, value_and_grad, vmap};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[jit]
fn embed(table: ArrayView2<f32>, ids: ArrayView1<i32>) -> Array2<f32> {
    table.select(Axis(0), &ids)
}

#[jit]
fn embed_f64(table: ArrayView2<f64>, ids: ArrayView1<i64>) -> Array2<f64> {
    table.select(Axis(0), &ids)
}

#[jit]
fn take_cols(x: ArrayView2<f32>, idx: ArrayView2<i64>) -> Array3<f32> {
    take(x, &idx, Axis(1))
}

#[grad(embed_grad, wrt = table)]
fn embed_loss(table: ArrayView2<f64>, ids: ArrayView1<i64>, w: ArrayView2<f64>) -> f64 {
    let e = table.select(Axis(0), &ids);
    (e * e * w).sum()
}

#[test]
fn select_matches_ndarray() {
    let mut rng = StdRng::seed_from_u64(21);
    for (v, d, n) in [(1, 1, 1), (5, 3, 8), (17, 4, 3), (3, 7, 0), (64, 16, 100)] {
        let table = Array2::from_shape_fn((v, d), |_| rng.gen_range(-2.0f32..2.0));
        let ids: Array1<i32> = (0..n).map(|_| rng.gen_range(0..v as i32)).collect();
        let got = embed(table.view(), ids.view());
        let idx: Vec<usize> = ids.iter().map(|i| *i as usize).collect();
        assert_eq!(got, table.select(Axis(0), &idx), "{v}×{d}, {n} ids");
        let t64 = table.mapv(|x| x as f64);
        let ids64 = ids.mapv(|i| i as i64);
        assert_eq!(
            embed_f64(t64.view(), ids64.view()),
            t64.select(Axis(0), &idx)
        );
    }
}

#[test]
fn take_with_a_matrix_of_indices() {
    let x = Array2::from_shape_fn((4, 5), |(i, j)| (10 * i + j) as f32);
    let idx = Array2::from_shape_vec((2, 3), vec![4i64, 0, 2, 2, 2, 1]).unwrap();
    let got = take_cols(x.view(), idx.view());
    assert_eq!(got.dim(), (4, 2, 3));
    for ((i, a, b), v) in got.indexed_iter() {
        assert_eq!(*v, x[[i, idx[[a, b]] as usize]], "at ({i}, {a}, {b})");
    }
    // No indices: an empty result.
    let none = take_cols(x.view(), Array2::<i64>::zeros((0, 3)).view());
    assert_eq!(none.dim(), (4, 0, 3));
}

#[test]
fn embedding_gradient_scatters_and_adds() {
    let mut rng = StdRng::seed_from_u64(22);
    for (v, d, n) in [(1, 1, 2), (6, 3, 10), (9, 5, 4), (4, 2, 0)] {
        let table = Array2::from_shape_fn((v, d), |_| rng.gen_range(-2.0..2.0));
        let mut ids: Array1<i64> = (0..n).map(|_| rng.gen_range(0..v as i64)).collect();
        if n >= 2 {
            ids[1] = ids[0]; // a row picked twice
        }
        let w = Array2::from_shape_fn((n, d), |_| rng.gen_range(-1.0..1.0));
        let g = embed_grad(&table, &ids, &w);
        // Closed form: d/dtable[r, j] = sum over b with ids[b] = r of
        // 2 table[r, j] w[b, j].
        let mut want = Array2::<f64>::zeros((v, d));
        for b in 0..n {
            let r = ids[b] as usize;
            for j in 0..d {
                want[[r, j]] += 2.0 * table[[r, j]] * w[[b, j]];
            }
        }
        for (a, b) in g.iter().zip(&want) {
            assert!((a - b).abs() <= 1e-14 * (1.0 + b.abs()), "{a} vs {b}");
        }
        // Central differences, every coordinate.
        for r in 0..v {
            for j in 0..d {
                let h = 1e-6;
                let (mut p, mut m) = (table.clone(), table.clone());
                p[[r, j]] += h;
                m[[r, j]] -= h;
                let fd = (embed_loss(p.view(), ids.view(), w.view())
                    - embed_loss(m.view(), ids.view(), w.view()))
                    / (2.0 * h);
                assert!(
                    (g[[r, j]] - fd).abs() <= 1e-7,
                    "d/dtable[{r},{j}] {} vs {fd}",
                    g[[r, j]]
                );
            }
        }
    }
}

#[jit]
fn take_by_argmax(x: ArrayView2<f32>, scores: ArrayView2<f32>) -> Array2<f32> {
    take(x, &argmax(scores, Axis(1)), Axis(0))
}

#[test]
fn an_index_out_of_range_is_an_error_naming_the_argument() {
    let table = Array2::from_shape_fn((3, 2), |(i, j)| (1 + 2 * i + j) as f32);
    for (ids, bad) in [
        (vec![1, 3], "index 3 at position 1"),
        (vec![-1, 0], "index -1 at position 0"),
        (vec![0, 2, i32::MAX], "index 2147483647 at position 2"),
    ] {
        let t = table.clone();
        let msg = panic_message(move || {
            embed(t.view(), Array1::from(ids).view());
        });
        assert!(
            msg.contains("argument `ids` of `embed`")
                && msg.contains(bad)
                && msg.contains("size 3"),
            "{msg}"
        );
    }
    // The gradient's function checks its indices too (i64 here).
    let t64 = table.mapv(|x| x as f64);
    let msg = panic_message(move || {
        embed_grad(&t64, &Array1::from(vec![0i64, 7]), &Array2::ones((2, 2)));
    });
    assert!(
        msg.contains("argument `ids` of `embed_grad`") && msg.contains("index 7 at position 1"),
        "{msg}"
    );
    // The largest valid index picks the last row.
    let got = embed(table.view(), Array1::from(vec![2, 0]).view());
    assert_eq!(got.row(0).to_vec(), vec![5.0, 6.0]);
}

#[jit]
fn embed_tail(table: ArrayView2<f32>, ids: ArrayView1<i64>) -> Array2<f32> {
    table.slice(s![1.., ..]).select(Axis(0), &ids)
}

#[test]
fn indices_into_a_slice_are_checked_against_its_length() {
    let table = Array2::from_shape_fn((4, 2), |(i, j)| (1 + 2 * i + j) as f32);
    let got = embed_tail(table.view(), Array1::from(vec![2i64, 0]).view());
    assert_eq!(got, table.select(Axis(0), &[3, 1]));
    let msg = panic_message(move || {
        embed_tail(table.view(), Array1::from(vec![3i64]).view());
    });
    assert!(
        msg.contains("argument `ids` of `embed_tail`") && msg.contains("size 3"),
        "{msg}"
    );
}

#[vmap(embed_batch, in_axes = (None, 0))]
#[jit]
fn embed_one(table: ArrayView2<f32>, ids: ArrayView1<i32>) -> Array2<f32> {
    take(table, &ids, Axis(0))
}

#[test]
fn batched_lookups_match_a_loop_and_are_checked() {
    let table = Array2::from_shape_fn((5, 3), |(i, j)| (10 * i + j) as f32);
    let ids = Array2::from_shape_vec((2, 4), vec![0, 4, 4, 1, 3, 3, 2, 0]).unwrap();
    let got = embed_batch(&table, &ids);
    assert_eq!(got.dim(), (2, 4, 3));
    for b in 0..2 {
        let row = embed_one(table.view(), ids.row(b));
        assert_eq!(got.index_axis(Axis(0), b), row, "batch {b}");
    }
    let mut bad = ids.clone();
    bad[[1, 2]] = 5;
    let msg = panic_message(move || {
        embed_batch(&table, &bad);
    });
    assert!(
        msg.contains("argument `ids` of `embed_batch`")
            && msg.contains("index 5 at position 6")
            && msg.contains("size 5"),
        "{msg}"
    );
}

#[test]
fn computed_indices_out_of_range_are_clamped() {
    // Indices computed in the body are not checked at the call; an index
    // past the axis is clamped into it (JAX's gather default): index 3 of
    // x's two rows reads row 1, never reading outside `x`.
    let x = Array2::from_shape_fn((2, 3), |(i, j)| (1 + 3 * i + j) as f32);
    let scores = Array2::from_shape_vec(
        (3, 4),
        vec![
            9.0, 0.0, 0.0, 0.0, //
            0.0, 9.0, 0.0, 0.0, //
            0.0, 0.0, 0.0, 9.0,
        ],
    )
    .unwrap();
    let got = take_by_argmax(x.view(), scores.view());
    assert_eq!(got.row(0).to_vec(), vec![1.0, 2.0, 3.0]);
    assert_eq!(got.row(1).to_vec(), vec![4.0, 5.0, 6.0]);
    assert_eq!(got.row(2).to_vec(), vec![4.0, 5.0, 6.0]);
}

#[test]
fn a_large_table_gathered_by_a_few_indices_matches_a_loop() {
    // 100000 rows × 8, 10 ids (some repeated, the first and last rows): a
    // one-hot lowering would compare every row with every id; the gather
    // reads 10 rows.
    let (v, d) = (100_000usize, 8usize);
    let table = Array2::from_shape_fn((v, d), |(i, j)| (i * 8 + j) as f32 * 0.25);
    let ids = Array1::from(vec![
        0i32, 99_999, 12_345, 7, 12_345, 50_000, 1, 99_998, 0, 31_337,
    ]);
    let got = embed(table.view(), ids.view());
    assert_eq!(got.dim(), (ids.len(), d));
    for (b, id) in ids.iter().enumerate() {
        for j in 0..d {
            assert_eq!(got[[b, j]], table[[*id as usize, j]], "id {b}, column {j}");
        }
    }
}

#[grad(take_by_argmax_grad, wrt = x)]
fn take_by_argmax_loss(x: ArrayView2<f64>, scores: ArrayView2<f64>) -> f64 {
    let picked = take(x, &argmax(scores, Axis(1)), Axis(0));
    (picked * picked).sum()
}

#[test]
fn computed_indices_out_of_range_scatter_to_the_clamped_row() {
    // Row 1 of x is picked by scores' rows 0 and 1, row 0 by row 3; row 2
    // picks index 3, past x's two rows: clamped to row 1, which gets its
    // cotangent too (as JAX's gradient of a clamping gather).
    let x = Array2::from_shape_fn((2, 3), |(i, j)| (1 + 3 * i + j) as f64);
    let scores = Array2::from_shape_vec(
        (4, 4),
        vec![
            0.0, 9.0, 0.0, 0.0, //
            0.0, 9.0, 0.0, 0.0, //
            0.0, 0.0, 0.0, 9.0, //
            9.0, 0.0, 0.0, 0.0,
        ],
    )
    .unwrap();
    let g = take_by_argmax_grad(&x, &scores);
    // Row 1 picked three times, row 0 once: d/dx = 2·x·(times picked).
    for ((i, j), v) in g.indexed_iter() {
        let times = [1.0, 3.0][i];
        assert_eq!(*v, 2.0 * x[[i, j]] * times, "at ({i}, {j})");
    }
}

#[jit]
fn pick_labels(logits: ArrayView2<f64>, labels: ArrayView1<i64>) -> Array1<f64> {
    take_along_axis(logits, &labels, Axis(1))
}

#[jit]
fn pick_rows(x: ArrayView2<f64>, cols: ArrayView1<i64>) -> Array1<f64> {
    take_along_axis(x, &cols, Axis(0))
}

#[test]
fn take_along_axis_picks_one_element_per_lane() {
    let x = Array2::from_shape_fn((4, 3), |(i, j)| (10 * i + j) as f64);
    let labels = Array1::from(vec![2i64, 0, 1, 2]);
    let got = pick_labels(x.view(), labels.view());
    for i in 0..4 {
        assert_eq!(got[i], x[[i, labels[i] as usize]]);
    }
    // Along the first axis: x is read with that axis moved last.
    let rows = Array1::from(vec![3i64, 0, 2]);
    let got = pick_rows(x.view(), rows.view());
    for j in 0..3 {
        assert_eq!(got[j], x[[rows[j] as usize, j]]);
    }
    // A label parameter out of range is an error at the call, as `take`'s
    // index parameters are.
    let msg = panic_message(move || {
        pick_labels(x.view(), Array1::from(vec![3i64, -1, 0, 1]).view());
    });
    assert!(
        msg.contains("argument `labels` of `pick_labels`")
            && msg.contains("index 3 at position 0")
            && msg.contains("size 3"),
        "{msg}"
    );
}

// ---- `x[i]` with a run-time index -----------------------------------------

#[value_and_grad(pick_vg, wrt = x)]
fn pick_square(x: &[f64], i: usize) -> f64 {
    x[i] * x[i].sin()
}

#[grad(entry_grad, wrt = a)]
fn entry(a: ArrayView2<f64>, i: usize, j: i64, k: usize) -> f64 {
    (a[[i, k]] * a[[k, j]] + a[i][j]).exp()
}

#[jit]
fn row_of(a: ArrayView2<f32>, i: u32) -> Array1<f32> {
    a[i] * 2.0
}

#[test]
fn a_run_time_index_reads_its_element_and_scatters_its_gradient() {
    let mut rng = StdRng::seed_from_u64(31);
    let x: Vec<f64> = (0..7).map(|_| rng.gen_range(-2.0..2.0)).collect();
    for i in 0..x.len() {
        let (v, g) = pick_vg(&x, i);
        assert_eq!(v, x[i] * x[i].sin());
        for (k, gk) in g.iter().enumerate() {
            let want = if k == i {
                x[i].sin() + x[i] * x[i].cos()
            } else {
                0.0
            };
            assert!(
                (gk - want).abs() <= 1e-15 * (1.0 + want.abs()),
                "∂x{k} at i = {i}: {gk} vs {want}"
            );
        }
    }
    let a = Array2::from_shape_fn((4, 3), |_| rng.gen_range(-1.0..1.0));
    for (i, j) in [(0usize, 0i64), (3, 2), (1, 1), (2, 0)] {
        let ju = j as usize;
        let f = |a: &Array2<f64>| (a[[i, 1]] * a[[1, ju]] + a[[i, ju]]).exp();
        assert!((entry(a.view(), i, j, 1) - f(&a)).abs() <= 1e-14 * f(&a).abs());
        let g = entry_grad(a.view(), i, j, 1);
        for ((r, c), gv) in g.indexed_iter() {
            let h = 1e-6;
            let (mut up, mut down) = (a.clone(), a.clone());
            up[[r, c]] += h;
            down[[r, c]] -= h;
            let fd = (f(&up) - f(&down)) / (2.0 * h);
            assert!(
                (gv - fd).abs() <= 1e-7 * (1.0 + fd.abs()),
                "∂a[{r},{c}] at ({i}, {j}): {gv} vs {fd}"
            );
        }
    }
    let m = Array2::from_shape_fn((3, 5), |(r, c)| (10 * r + c) as f32);
    for i in 0..3u32 {
        assert_eq!(row_of(m.view(), i), m.row(i as usize).mapv(|v| v * 2.0));
    }
}

#[test]
fn a_run_time_index_out_of_range_is_an_error_naming_the_argument() {
    let x = vec![1.0, 2.0, 3.0];
    let msg = panic_message(move || {
        pick_vg(&x, 3);
    });
    assert!(
        msg.contains("argument `i` of `pick_vg`") && msg.contains("size 3"),
        "{msg}"
    );
    let a = Array2::<f64>::zeros((2, 4));
    let msg = panic_message(move || {
        entry_grad(a.view(), 0, 4, 1);
    });
    assert!(
        msg.contains("argument `j` of `entry_grad`") && msg.contains("size 4"),
        "{msg}"
    );
}

/// numpy's `f[x0, y0]` with two index arrays (written `f[[x0, y0]]`), as a
/// JAX fluid simulation samples a grid, with its gradient: each element
/// read adds its cotangent back where it was read (twice for a repeat).
#[grad(sampled_grad, wrt = f)]
fn sampled(
    f: ArrayView2<f64>,
    x0: ArrayView1<i64>,
    y0: ArrayView1<i64>,
    w: ArrayView1<f64>,
) -> f64 {
    (f[[x0, y0]].sin() * w).sum()
}

/// Three index arrays of shape [2, 2] into a 3-d array, and one index
/// array alone (rows).
#[jit]
fn picked3(
    t: oxla::ndarray::ArrayView3<f64>,
    i: ArrayView2<i64>,
    j: ArrayView2<i64>,
    k: ArrayView2<i64>,
) -> (Array2<f64>, oxla::ndarray::Array4<f64>) {
    (t[[i, j, k]], t[[i]])
}

#[test]
fn indexing_by_several_index_arrays_as_numpy() {
    let f = Array2::from_shape_fn((3, 4), |(i, j)| i as f64 * 1.5 - j as f64 * 0.4);
    let x0 = Array1::from(vec![0i64, 2, 1, 2]);
    let y0 = Array1::from(vec![3i64, 0, 1, 0]);
    let w = Array1::from(vec![1.0, -0.5, 2.0, 0.25]);
    let want: f64 = (0..4)
        .map(|s| f[[x0[s] as usize, y0[s] as usize]].sin() * w[s])
        .sum();
    assert!((sampled(f.view(), x0.view(), y0.view(), w.view()) - want).abs() < 1e-14);
    let g = sampled_grad(f.view(), x0.view(), y0.view(), w.view());
    let mut expect = Array2::<f64>::zeros((3, 4));
    for s in 0..4 {
        let (a, b) = (x0[s] as usize, y0[s] as usize);
        expect[[a, b]] += f[[a, b]].cos() * w[s];
    }
    assert_eq!(g.dim(), (3, 4));
    for (p, q) in g.iter().zip(expect.iter()) {
        assert!((p - q).abs() < 1e-15, "{g} vs {expect}");
    }
    // A parameter index out of range is an error at the call naming it.
    let bad = Array1::from(vec![0i64, 4, 1, 2]);
    let msg = panic_message(|| {
        sampled(f.view(), x0.view(), bad.view(), w.view());
    });
    assert!(msg.contains("`y0`"), "{msg}");

    let t = Array3::from_shape_fn((2, 3, 4), |(a, b, c)| (a * 100 + b * 10 + c) as f64);
    let i = Array2::from_shape_vec((2, 2), vec![1i64, 0, 1, 1]).unwrap();
    let j = Array2::from_shape_vec((2, 2), vec![2i64, 0, 1, 2]).unwrap();
    let k = Array2::from_shape_vec((2, 2), vec![3i64, 1, 0, 2]).unwrap();
    let (p, rows) = picked3(t.view(), i.view(), j.view(), k.view());
    for ((r, c), v) in p.indexed_iter() {
        let want = t[[i[[r, c]] as usize, j[[r, c]] as usize, k[[r, c]] as usize]];
        assert_eq!(*v, want, "[{r}, {c}]");
    }
    assert_eq!(rows.dim(), (2, 2, 3, 4));
    for ((r, c, b, d), v) in rows.indexed_iter() {
        assert_eq!(*v, t[[i[[r, c]] as usize, b, d]]);
    }
}
