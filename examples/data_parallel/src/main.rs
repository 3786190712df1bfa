//! Data-parallel training with `#[pmap]`, as a JAX user writes it:
//!
//! ```python
//! @partial(jax.pmap, axis_name="batch", in_axes=(None, 0, 0))
//! def step(params, x, y):
//!     loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
//!     grads = lax.pmean(grads, "batch")
//!     return lax.pmean(loss, "batch"), sgd(params, grads)
//! ```
//!
//! A 784-512-10 MLP (f64) trained on a synthetic batch of 256 examples,
//! split over 1, 2 and 4 CPU devices: each device computes the gradient of
//! its shard's loss, the gradients are averaged across devices (`pmean`)
//! and every device applies the same update. With equal shards the mean of
//! the shard losses is the full batch's loss, so the three runs print the
//! same losses (to rounding: the sums run in another order). A gradient
//! entry is checked against a central difference first. Run with
//! `cargo run --release -p data_parallel`.
//!
//! Across processes (feature `mpi`): `mpirun -n 2 target/release/data_parallel`
//! after `cargo build --release -p data_parallel --features mpi`. Each process
//! then maps its own shard, the `pmean`s are MPI's all-reduces, and process
//! 0 prints the losses beside those of plain gradient descent on the whole
//! batch without pmap.

use oxla::ndarray::{Array1, Array2, Array3, ArrayView1, ArrayView2};
use oxla::{pmap, value_and_grad};

#[value_and_grad(loss_vg, wrt = (w1, b1, w2, b2))]
fn loss(
    w1: ArrayView2<f64>,
    b1: ArrayView1<f64>,
    w2: ArrayView2<f64>,
    b2: ArrayView1<f64>,
    x: ArrayView2<f64>,
    y: ArrayView2<f64>,
) -> f64 {
    let h = (x.dot(&w1) + b1).tanh();
    let err = h.dot(&w2) + b2 - y;
    mean(&err * &err)
}

/// One step on a device's shard: the shard's loss and gradients, averaged
/// over the devices along `batch`, and the parameters after one step of
/// gradient descent with step 0.1 (the same on every device: `out_axes =
/// None`).
#[pmap(
    train_step,
    axis_name = batch,
    in_axes = (None, None, None, None, 0, 0),
    out_axes = (None, None, None, None, None)
)]
fn step(
    w1: ArrayView2<f64>,
    b1: ArrayView1<f64>,
    w2: ArrayView2<f64>,
    b2: ArrayView1<f64>,
    x: ArrayView2<f64>,
    y: ArrayView2<f64>,
) -> (f64, Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>) {
    let (l, g1, gb1, g2, gb2) = loss_vg(w1, b1, w2, b2, x, y);
    (
        pmean(l, batch),
        w1 - 0.1 * pmean(g1, batch),
        b1 - 0.1 * pmean(gb1, batch),
        w2 - 0.1 * pmean(g2, batch),
        b2 - 0.1 * pmean(gb2, batch),
    )
}

/// Values in [-scale, scale) from a fixed seed (a 64-bit LCG).
fn uniform(shape: (usize, usize), scale: f64, seed: u64) -> Array2<f64> {
    let mut s = seed;
    let v = (0..shape.0 * shape.1)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0) * scale
        })
        .collect();
    Array2::from_shape_vec(shape, v).unwrap()
}

struct Params {
    w1: Array2<f64>,
    b1: Array1<f64>,
    w2: Array2<f64>,
    b2: Array1<f64>,
}

/// `steps` steps over `devices` devices; the loss before each.
fn train(p: &Params, x: &Array2<f64>, y: &Array2<f64>, devices: usize, steps: usize) -> Vec<f64> {
    let shard = |a: &Array2<f64>| -> Array3<f64> {
        let (n, k) = a.dim();
        a.clone()
            .into_shape_with_order((devices, n / devices, k))
            .unwrap()
    };
    run_steps(p, &shard(x), &shard(y), steps)
}

/// `steps` steps of `train_step` on the devices' shards `xs`, `ys`; the
/// loss before each.
fn run_steps(p: &Params, xs: &Array3<f64>, ys: &Array3<f64>, steps: usize) -> Vec<f64> {
    let (mut w1, mut b1, mut w2, mut b2) = (p.w1.clone(), p.b1.clone(), p.w2.clone(), p.b2.clone());
    let mut losses = Vec::new();
    for _ in 0..steps {
        let (l, n1, nb1, n2, nb2) = train_step(
            w1.view(),
            b1.view(),
            w2.view(),
            b2.view(),
            xs.view(),
            ys.view(),
        );
        losses.push(l);
        (w1, b1, w2, b2) = (n1, nb1, n2, nb2);
    }
    losses
}

/// `steps` steps of plain gradient descent on the whole batch, without
/// pmap; the loss before each.
#[cfg(feature = "mpi")]
fn train_whole(p: &Params, x: &Array2<f64>, y: &Array2<f64>, steps: usize) -> Vec<f64> {
    let (mut w1, mut b1, mut w2, mut b2) = (p.w1.clone(), p.b1.clone(), p.w2.clone(), p.b2.clone());
    let mut losses = Vec::new();
    for _ in 0..steps {
        let (l, g1, gb1, g2, gb2) = loss_vg(&w1, &b1, &w2, &b2, x, y);
        losses.push(l);
        w1 = w1 - 0.1 * g1;
        b1 = b1 - 0.1 * gb1;
        w2 = w2 - 0.1 * g2;
        b2 = b2 - 0.1 * gb2;
    }
    losses
}

/// The run of each process of an MPI job: `train_step` on this process's
/// shard (one device's slice), the `pmean`s across the processes.
#[cfg(feature = "mpi")]
fn train_across_processes(
    mpi: &oxla::distributed::Distributed,
    p: &Params,
    x: &Array2<f64>,
    y: &Array2<f64>,
    steps: usize,
) {
    let (rank, procs) = (mpi.process_index(), mpi.process_count());
    let shard = |a: &Array2<f64>| -> Array3<f64> {
        let m = a.nrows() / procs;
        a.slice(oxla::ndarray::s![rank * m..(rank + 1) * m, ..])
            .to_owned()
            .insert_axis(oxla::ndarray::Axis(0))
    };
    let losses = run_steps(p, &shard(x), &shard(y), steps);
    let whole = train_whole(p, x, y, steps);
    let mut worst: f64 = 0.0;
    if rank == 0 {
        println!(
            "loss per step, the batch of {} split over {procs} MPI processes:",
            x.nrows()
        );
        println!("step  whole batch, no pmap  {procs} processes          rel. diff");
    }
    for s in 0..steps {
        let rel = ((losses[s] - whole[s]) / whole[s]).abs();
        worst = worst.max(rel);
        if rank == 0 {
            println!("{s:4}  {:.15}     {:.15}  {rel:.1e}", whole[s], losses[s]);
        }
    }
    assert!(
        worst <= 1e-6,
        "process {rank}: the runs differ by {worst:e}"
    );
    assert!(losses[steps - 1] < losses[0], "the loss did not fall");
}

fn main() {
    let (n, d_in, d_hidden, d_out) = (256, 784, 512, 10);
    // Under `mpirun` (feature `mpi`): a pmap spans the processes. A job of
    // one process runs the CPU-device threads below.
    #[cfg(feature = "mpi")]
    let mpi = Some(oxla::distributed::init().expect("MPI")).filter(|m| m.process_count() > 1);
    #[cfg(feature = "mpi")]
    let leader = mpi.as_ref().is_none_or(|m| m.process_index() == 0);
    #[cfg(not(feature = "mpi"))]
    let leader = true;
    oxla::set_cpu_device_count(4);
    let x = uniform((n, d_in), 1.0, 1);
    // Targets from a fixed random "teacher" network.
    let teacher = uniform((d_in, d_out), 0.1, 2);
    let y = x.dot(&teacher).mapv(f64::tanh);
    let p = Params {
        w1: uniform((d_in, d_hidden), 0.05, 3),
        b1: Array1::zeros(d_hidden),
        w2: uniform((d_hidden, d_out), 0.05, 4),
        b2: Array1::zeros(d_out),
    };

    // One gradient entry against a central difference of the loss.
    let (_, g1, _, _, _) = loss_vg(&p.w1, &p.b1, &p.w2, &p.b2, &x, &y);
    let h = 1e-5;
    let at = |w1: &Array2<f64>| {
        loss(
            w1.view(),
            p.b1.view(),
            p.w2.view(),
            p.b2.view(),
            x.view(),
            y.view(),
        )
    };
    let (mut plus, mut minus) = (p.w1.clone(), p.w1.clone());
    plus[[100, 7]] += h;
    minus[[100, 7]] -= h;
    let fd = (at(&plus) - at(&minus)) / (2.0 * h);
    if leader {
        println!(
            "gradient check: d loss / d w1[100, 7] = {:.9e} (central difference {fd:.9e})",
            g1[[100, 7]]
        );
    }

    let steps = 8;
    #[cfg(feature = "mpi")]
    if let Some(mpi) = &mpi {
        return train_across_processes(mpi, &p, &x, &y, steps);
    }
    let runs: Vec<(usize, Vec<f64>)> = [1, 2, 4]
        .into_iter()
        .map(|d| (d, train(&p, &x, &y, d, steps)))
        .collect();
    println!("loss per step, the batch of {n} split over 1, 2 and 4 CPU devices:");
    println!("step  1 device             2 devices            4 devices            max rel. diff");
    let mut worst: f64 = 0.0;
    for s in 0..steps {
        let one = runs[0].1[s];
        let rel = runs[1..]
            .iter()
            .map(|(_, l)| ((l[s] - one) / one).abs())
            .fold(0.0, f64::max);
        worst = worst.max(rel);
        println!(
            "{s:4}  {:.15}  {:.15}  {:.15}  {rel:.1e}",
            one, runs[1].1[s], runs[2].1[s]
        );
    }
    assert!(worst <= 1e-6, "the runs differ by {worst:e}");
    assert!(runs[0].1[steps - 1] < runs[0].1[0], "the loss did not fall");
}
