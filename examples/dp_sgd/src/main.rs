//! DP-SGD (Abadi et al. 2016) on a one-hidden-layer MLP whose parameters
//! are one struct: per-example gradients by `vmap` of `grad` with respect to
//! the struct, each clipped to norm `C`, summed, noised with a Gaussian of
//! standard deviation `σ·C` and averaged — as a JAX user writes it:
//!
//! ```python
//! per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(params, xs, ys)
//! norms = jnp.sqrt(sum(jnp.sum(g.reshape(n, -1) ** 2, 1) for g in jax.tree.leaves(per_example)))
//! scale = jnp.minimum(1.0, C / norms)
//! ```
//!
//! Before training it checks one per-example gradient against central
//! differences, and that the per-example gradients' mean is the gradient of
//! the batch's mean loss. Run with `cargo run --release -p dp_sgd`.

use oxla::ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use oxla::random;
use oxla::{Batched, Tree};

/// The model: one hidden layer of `tanh` units and a linear output.
#[derive(oxla::Tree, Clone, Debug)]
struct Mlp {
    w1: Array2<f64>,
    b1: Array1<f64>,
    w2: Array1<f64>,
    b2: f64,
}

/// One example's loss, and JAX's `vmap(grad(loss), in_axes=(None, 0, 0))`:
/// the gradient with respect to `p` for each example of a batch, a
/// `Batched<Mlp>` (each field with a leading batch axis).
#[oxla::transforms(vmap(per_example_grads, in_axes = (None, 0, 0), of = grad(wrt = p)))]
fn loss(p: &Mlp, x: ArrayView1<f64>, y: f64) -> f64 {
    let h = (x.dot(&p.w1) + &p.b1).tanh();
    let err = h.dot(&p.w2) + p.b2 - y;
    err * err
}

/// The batch's mean loss and its gradient (for the mean check).
#[oxla::value_and_grad(batch_loss_and_grad, wrt = p)]
fn batch_loss(p: &Mlp, xs: ArrayView2<f64>, ys: ArrayView1<f64>) -> f64 {
    let h = (xs.dot(&p.w1) + &p.b1).tanh();
    let err = h.dot(&p.w2) + p.b2 - ys;
    (&err * &err).mean()
}

/// Standard normal values of `shape` from `key`.
fn normal2(key: random::Key, shape: (usize, usize), scale: f64) -> Array2<f64> {
    let a = random::normal::<f64>(key, &[shape.0, shape.1]) * scale;
    a.into_dimensionality().expect("rank 2")
}

fn init(key: random::Key, inputs: usize, hidden: usize) -> Mlp {
    let [k1, k2] = random::split2(key);
    Mlp {
        w1: normal2(k1, (inputs, hidden), 1.0 / (inputs as f64).sqrt()),
        b1: Array1::zeros(hidden),
        w2: normal2(k2, (hidden, 1), 1.0 / (hidden as f64).sqrt())
            .column(0)
            .to_owned(),
        b2: 0.0,
    }
}

/// The clipped, noised mean of the per-example gradients: each scaled to
/// norm at most `clip`, summed, a Gaussian of standard deviation
/// `noise · clip` added to every element, divided by the batch size.
fn private_gradient(per_example: &Batched<Mlp>, clip: f64, noise: f64, key: random::Key) -> Mlp {
    let mut sum = per_example.example(0).zeros_like();
    for g in per_example.iter() {
        let scale = (clip / g.norm2()).min(1.0);
        sum.axpy(scale, &g);
    }
    let keys = random::split(key, sum.num_leaves());
    let mut k = 0;
    sum.for_each_leaf_mut(&mut |mut leaf| {
        let z = random::normal::<f64>(keys[k], leaf.shape());
        leaf.zip_mut_with(&z, |v, z| *v += noise * clip * z);
        k += 1;
    });
    sum.scale(1.0 / per_example.len() as f64);
    sum
}

/// The largest difference between a per-example gradient and central
/// differences of that example's loss, element by element.
fn central_difference_error(p: &Mlp, x: ArrayView1<f64>, y: f64, g: &Mlp) -> f64 {
    let h = 1e-6;
    let nudged = |k: usize, d: f64| {
        let mut q = p.clone();
        let mut j = 0;
        q.for_each_leaf_mut(&mut |mut leaf| {
            for v in leaf.iter_mut() {
                if j == k {
                    *v += d;
                }
                j += 1;
            }
        });
        loss(&q, x, y)
    };
    g.flatten()
        .iter()
        .enumerate()
        .map(|(k, gk)| {
            let fd = (nudged(k, h) - nudged(k, -h)) / (2.0 * h);
            (gk - fd).abs() / (1.0 + fd.abs())
        })
        .fold(0.0, f64::max)
}

fn main() {
    let (n, inputs, hidden) = (64, 4, 16);
    let [k_data, k_init, mut k_noise] = {
        let k = random::split(random::key(0), 3);
        [k[0], k[1], k[2]]
    };
    // Synthetic regression: y = sin(x · a) for a fixed direction a.
    let xs = normal2(k_data, (n, inputs), 1.0);
    let a = Array1::from_vec(vec![0.8, -0.5, 0.3, 0.6]);
    let ys = xs.dot(&a).mapv(f64::sin);
    let mut p = init(k_init, inputs, hidden);

    // Checks before training.
    let per_example = per_example_grads(&p, xs.view(), ys.view());
    let err = central_difference_error(&p, xs.row(3), ys[3], &per_example.example(3));
    println!(
        "per-example gradient of example 3 vs central differences: max relative error {err:.2e}"
    );
    assert!(
        err < 1e-7,
        "per-example gradient disagrees with central differences"
    );
    let (_, batch_grad) = batch_loss_and_grad(&p, xs.view(), ys.view());
    let mean = per_example.mean();
    let gap = mean.zip_map(&batch_grad, |a, b| a - b).norm2() / batch_grad.norm2();
    println!("mean of per-example gradients vs batch gradient: relative difference {gap:.2e}");
    assert!(
        gap < 1e-12,
        "the per-example gradients' mean is not the batch gradient"
    );

    // Training: clip each example's gradient to norm `clip`, add noise.
    let (clip, noise, lr, steps) = (1.0, 0.05, 0.2, 300);
    let first = batch_loss(&p, xs.view(), ys.view());
    for step in 0..steps {
        let per_example = per_example_grads(&p, xs.view(), ys.view());
        let [k, next] = random::split2(k_noise);
        k_noise = next;
        let g = private_gradient(&per_example, clip, noise, k);
        p.axpy(-lr, &g);
        if step % 50 == 0 || step == steps - 1 {
            let clipped = per_example.iter().filter(|g| g.norm2() > clip).count();
            println!(
                "step {step:>3}: loss {:.5}, {clipped}/{n} examples clipped",
                batch_loss(&p, xs.view(), ys.view())
            );
        }
    }
    let last = batch_loss(&p, xs.view(), ys.view());
    println!("loss {first:.5} -> {last:.5}");
    assert!(last < first, "training did not lower the loss");
}
