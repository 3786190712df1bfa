//! `#[pmap]` across the processes of `mpirun -n 2` and `-n 4` (feature
//! `mpi`): each process maps its own device's slice, and the collectives,
//! their gradients and the data-parallel training step give, on every
//! process, what the same computation without pmap gives on the whole
//! batch (computed in each process from the data every process can make).

use ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use oxla::{grad, pmap, value_and_grad};
use oxla_test_support::mpirun::mpi_test;

const RANKS: &[usize] = &[2, 4];

/// Row `r` of the job-wide `x` (`P × 4`): `sin(0.7 q + 0.3)` at flat index
/// `q`.
fn row(r: usize) -> Array1<f64> {
    (0..4)
        .map(|j| (0.7 * (4 * r + j) as f64 + 0.3).sin())
        .collect()
}

/// `v` as a one-device slice (`1 × len`).
fn slice(v: &Array1<f64>) -> Array2<f64> {
    v.clone().insert_axis(ndarray::Axis(0))
}

#[track_caller]
fn assert_close(got: &[f64], want: &[f64], rtol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= rtol * w.abs().max(1.0),
            "{what}: element {k}: {g:e}, without pmap {w:e}"
        );
    }
}

#[pmap(psum_p, axis_name = i)]
fn psum_d(x: ArrayView1<f64>) -> Array1<f64> {
    psum(x.sin(), i)
}
#[grad(psum_g, wrt = x)]
fn psum_l(x: ArrayView2<f64>, w: ArrayView2<f64>) -> f64 {
    sum(psum_p(x) * w)
}

#[pmap(stats_p, axis_name = i)]
fn stats_d(x: ArrayView1<f64>) -> (Array1<f64>, Array1<f64>, Array1<f64>) {
    (pmean(x, i), pmax(x, i), pmin(x, i))
}

#[pmap(index_p, axis_name = i)]
fn index_d(x: ArrayView1<f64>) -> Array1<f64> {
    x * 0.0 + axis_index(i) as f64 + 10.0 * axis_size(i) as f64
}

#[pmap(swap_p, axis_name = i)]
fn swap_d(x: ArrayView1<f64>) -> Array1<f64> {
    ppermute(x, i, [(0, 1), (1, 0)])
}

#[test]
fn collectives_and_their_gradients_span_the_processes() {
    mpi_test(
        "collectives_and_their_gradients_span_the_processes",
        RANKS,
        &[],
        || {
            let mpi = oxla::distributed::init().expect("MPI");
            let (r, p) = (mpi.process_index(), mpi.process_count());
            let rows: Vec<Array1<f64>> = (0..p).map(row).collect();
            let x = slice(&rows[r]);

            let sum_sin: Array1<f64> = rows
                .iter()
                .map(|v| v.mapv(f64::sin))
                .fold(Array1::zeros(4), |a, b| a + b);
            assert_close(
                psum_p(x.view()).as_slice().unwrap(),
                sum_sin.as_slice().unwrap(),
                1e-15,
                "psum",
            );

            // d/dx_r Σ_r' (Σ_s sin x_s) · w_r' = cos(x_r) · Σ_r' w_r'.
            let w = |r: usize| row(r + 7);
            let w_sum = (0..p).map(w).fold(Array1::<f64>::zeros(4), |a, b| a + b);
            let g = psum_g(x.view(), slice(&w(r)).view());
            let want = rows[r].mapv(f64::cos) * &w_sum;
            assert_close(
                g.as_slice().unwrap(),
                want.as_slice().unwrap(),
                1e-14,
                "grad of psum",
            );

            let (mean, max, min) = stats_p(x.view());
            let fold = |f: fn(f64, f64) -> f64| {
                (0..4)
                    .map(|j| rows.iter().map(|v| v[j]).reduce(f).unwrap())
                    .collect::<Vec<_>>()
            };
            let mean_want: Vec<f64> = fold(|a, b| a + b).iter().map(|s| s / p as f64).collect();
            assert_close(mean.as_slice().unwrap(), &mean_want, 1e-15, "pmean");
            assert_close(max.as_slice().unwrap(), &fold(f64::max), 0.0, "pmax");
            assert_close(min.as_slice().unwrap(), &fold(f64::min), 0.0, "pmin");

            let idx = index_p(x.view());
            assert_close(
                idx.as_slice().unwrap(),
                &[(r + 10 * p) as f64; 4],
                0.0,
                "axis_index, axis_size",
            );

            let swapped = swap_p(x.view());
            let want = match r {
                0 => rows[1].to_vec(),
                1 => rows[0].to_vec(),
                _ => vec![0.0; 4],
            };
            assert_close(swapped.as_slice().unwrap(), &want, 0.0, "ppermute");

            // Each process passes one device's slice.
            let two = Array2::<f64>::zeros((2, 4));
            let err = std::panic::catch_unwind(|| psum_p(two.view())).unwrap_err();
            let msg = err
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            assert!(
                msg.contains("argument `x`") && msg.contains("its own device"),
                "{msg}"
            );
        },
    );
}

#[value_and_grad(loss_vg, wrt = w)]
fn loss(w: ArrayView2<f64>, x: ArrayView2<f64>, y: ArrayView2<f64>) -> f64 {
    let err = (x.dot(&w)).tanh() - y;
    mean(&err * &err)
}

/// The data-parallel step: the shard's loss and gradient, averaged over the
/// processes.
#[pmap(dp_step, axis_name = batch, in_axes = (None, 0, 0), out_axes = (None, None))]
fn dp(w: ArrayView2<f64>, x: ArrayView2<f64>, y: ArrayView2<f64>) -> (f64, Array2<f64>) {
    let (l, g) = loss_vg(w, x, y);
    (pmean(l, batch), pmean(g, batch))
}

#[test]
fn the_data_parallel_step_gives_the_full_batch_gradient() {
    mpi_test(
        "the_data_parallel_step_gives_the_full_batch_gradient",
        RANKS,
        &[],
        || {
            let mpi = oxla::distributed::init().expect("MPI");
            let (r, p) = (mpi.process_index(), mpi.process_count());
            let (n, d, k) = (8 * p, 5, 3);
            let grid = |shape: (usize, usize), a: f64| {
                Array2::from_shape_fn(shape, |(i, j)| (a * (i * shape.1 + j) as f64 + 0.1).sin())
            };
            let (w, x, y) = (grid((d, k), 0.37), grid((n, d), 0.11), grid((n, k), 0.23));
            let (l_full, g_full) = loss_vg(w.view(), x.view(), y.view());
            let shard = |a: &Array2<f64>| {
                let m = a.nrows() / p;
                a.slice(ndarray::s![r * m..(r + 1) * m, ..])
                    .to_owned()
                    .insert_axis(ndarray::Axis(0))
            };
            let (l, g) = dp_step(w.view(), shard(&x).view(), shard(&y).view());
            assert_close(&[l], &[l_full], 1e-13, "loss");
            assert_close(
                g.as_slice().unwrap(),
                g_full.as_slice().unwrap(),
                1e-13,
                "gradient",
            );
        },
    );
}
