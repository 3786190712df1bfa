//! Gather by an integer index array: `x.select(Axis(k), &idx)` (ndarray's
//! spelling) and `take(x, &idx, Axis(k))` (numpy's), with indices of any
//! shape. The values against ndarray's `select` and a loop; an embedding
//! lookup's gradient against its closed form (the cotangent scattered into
//! the picked rows, added where a row is picked twice) and central
//! differences; the indices carry no derivative.

use oxla::ndarray::{Array1, Array2, Array3, ArrayView1, ArrayView2, Axis};
use oxla::{grad, jit};
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

#[test]
fn an_index_out_of_range_picks_zero_and_gets_no_gradient() {
    let table = Array2::from_shape_fn((3, 2), |(i, j)| (1 + 2 * i + j) as f32);
    let got = embed(table.view(), Array1::from(vec![1, 3, -1, i32::MAX]).view());
    assert_eq!(got.row(0).to_vec(), vec![3.0, 4.0]);
    for r in 1..4 {
        assert_eq!(got.row(r).to_vec(), vec![0.0, 0.0], "row {r}");
    }
    let t64 = table.mapv(|x| x as f64);
    let g = embed_grad(&t64, &Array1::from(vec![7i64, -2]), &Array2::ones((2, 2)));
    assert_eq!(g, Array2::<f64>::zeros((3, 2)));
}
