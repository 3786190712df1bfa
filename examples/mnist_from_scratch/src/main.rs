//! JAX's `mnist_classifier_fromscratch`, in oxla: an MLP classifier whose
//! jit'd `update` calls the generated gradient of `loss`, as JAX's
//!
//! ```python
//! def predict(params, inputs):
//!   activations = inputs
//!   for w, b in params[:-1]:
//!     activations = jnp.tanh(jnp.dot(activations, w) + b)
//!   final_w, final_b = params[-1]
//!   logits = jnp.dot(activations, final_w) + final_b
//!   return logits - logsumexp(logits, axis=1, keepdims=True)
//!
//! def loss(params, batch):
//!   inputs, targets = batch
//!   return -jnp.mean(jnp.sum(predict(params, inputs) * targets, axis=1))
//!
//! @jit
//! def update(params, batch):
//!   grads = grad(loss)(params, batch)
//!   return [(w - step_size * dw, b - step_size * db)
//!           for (w, b), (dw, db) in zip(params, grads)]
//! ```
//!
//! `update` is one compiled function: the gradient's IR is inlined into it
//! and fused with the step. The images are synthetic (this example reads
//! no files): ten noisy class prototypes of 8×8 pixels. Run with
//! `cargo run --release -p mnist_from_scratch`.

use oxla::ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis};
use oxla::{grad, jit};

/// Log-probabilities of each class, one row per image.
#[jit]
fn predict(
    w1: ArrayView2<f32>,
    b1: ArrayView1<f32>,
    w2: ArrayView2<f32>,
    b2: ArrayView1<f32>,
    w3: ArrayView2<f32>,
    b3: ArrayView1<f32>,
    inputs: ArrayView2<f32>,
) -> Array2<f32> {
    let h1 = (inputs.dot(&w1) + b1).tanh();
    let h2 = (h1.dot(&w2) + b2).tanh();
    let logits = h2.dot(&w3) + b3;
    log_softmax(logits, Axis(1))
}

/// Cross-entropy against one-hot `targets`, and its gradient `loss_grad`.
#[grad(loss_grad, wrt = (w1, b1, w2, b2, w3, b3))]
fn loss(
    w1: ArrayView2<f32>,
    b1: ArrayView1<f32>,
    w2: ArrayView2<f32>,
    b2: ArrayView1<f32>,
    w3: ArrayView2<f32>,
    b3: ArrayView1<f32>,
    inputs: ArrayView2<f32>,
    targets: ArrayView2<f32>,
) -> f32 {
    let preds = predict(w1, b1, w2, b2, w3, b3, inputs);
    -(preds * targets).sum_axis(Axis(1)).mean()
}

type Params = (
    Array2<f32>,
    Array1<f32>,
    Array2<f32>,
    Array1<f32>,
    Array2<f32>,
    Array1<f32>,
);

/// One step of gradient descent: calls the generated gradient.
#[jit]
fn update(
    w1: ArrayView2<f32>,
    b1: ArrayView1<f32>,
    w2: ArrayView2<f32>,
    b2: ArrayView1<f32>,
    w3: ArrayView2<f32>,
    b3: ArrayView1<f32>,
    inputs: ArrayView2<f32>,
    targets: ArrayView2<f32>,
    step_size: f32,
) -> (
    Array2<f32>,
    Array1<f32>,
    Array2<f32>,
    Array1<f32>,
    Array2<f32>,
    Array1<f32>,
) {
    let (dw1, db1, dw2, db2, dw3, db3) = loss_grad(w1, b1, w2, b2, w3, b3, inputs, targets);
    (
        w1 - step_size * dw1,
        b1 - step_size * db1,
        w2 - step_size * dw2,
        b2 - step_size * db2,
        w3 - step_size * dw3,
        b3 - step_size * db3,
    )
}

/// `steps` calls of `update` on one batch: a training run as one compiled
/// program (JAX's `fori_loop` over `update`).
#[jit]
fn train(
    w1: ArrayView2<f32>,
    b1: ArrayView1<f32>,
    w2: ArrayView2<f32>,
    b2: ArrayView1<f32>,
    w3: ArrayView2<f32>,
    b3: ArrayView1<f32>,
    inputs: ArrayView2<f32>,
    targets: ArrayView2<f32>,
    step_size: f32,
    steps: usize,
) -> (
    Array2<f32>,
    Array1<f32>,
    Array2<f32>,
    Array1<f32>,
    Array2<f32>,
    Array1<f32>,
) {
    let mut p1 = w1.to_owned();
    let mut c1 = b1.to_owned();
    let mut p2 = w2.to_owned();
    let mut c2 = b2.to_owned();
    let mut p3 = w3.to_owned();
    let mut c3 = b3.to_owned();
    for _ in 0..steps {
        let (n1, m1, n2, m2, n3, m3) = update(
            p1.view(),
            c1.view(),
            p2.view(),
            c2.view(),
            p3.view(),
            c3.view(),
            inputs,
            targets,
            step_size,
        );
        p1 = n1;
        c1 = m1;
        p2 = n2;
        c2 = m2;
        p3 = n3;
        c3 = m3;
    }
    (p1, c1, p2, c2, p3, c3)
}

/// The fraction of images whose predicted class is their label, as JAX's
/// `jnp.mean(jnp.argmax(predict(params, inputs), axis=1) == labels)`.
#[jit]
fn accuracy(
    w1: ArrayView2<f32>,
    b1: ArrayView1<f32>,
    w2: ArrayView2<f32>,
    b2: ArrayView1<f32>,
    w3: ArrayView2<f32>,
    b3: ArrayView1<f32>,
    inputs: ArrayView2<f32>,
    labels: ArrayView1<i64>,
) -> f32 {
    let predicted = argmax(predict(w1, b1, w2, b2, w3, b3, inputs), Axis(1));
    (predicted == labels).mapv(|hit| hit as i32 as f32).mean()
}

/// A 64-bit LCG: uniform values in [0, 1).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    fn array(&mut self, shape: (usize, usize), scale: f32) -> Array2<f32> {
        Array2::from_shape_simple_fn(shape, || (self.next() * 2.0 - 1.0) * scale)
    }
}

/// `n` images of ten classes (`pixels` each), their one-hot targets and
/// their labels.
fn images(
    prototypes: &Array2<f32>,
    n: usize,
    rng: &mut Lcg,
) -> (Array2<f32>, Array2<f32>, Array1<i64>) {
    let (classes, pixels) = prototypes.dim();
    let labels: Vec<usize> = (0..n)
        .map(|_| ((rng.next() * classes as f32) as usize).min(classes - 1))
        .collect();
    let noise = rng.array((n, pixels), 2.5);
    let mut x = noise;
    let mut targets = Array2::zeros((n, classes));
    for (i, &c) in labels.iter().enumerate() {
        let mut row = x.row_mut(i);
        row += &prototypes.row(c);
        targets[[i, c]] = 1.0;
    }
    (x, targets, labels.iter().map(|&c| c as i64).collect())
}

fn accuracy_of(p: &Params, x: &Array2<f32>, labels: &Array1<i64>) -> f32 {
    accuracy(
        p.0.view(),
        p.1.view(),
        p.2.view(),
        p.3.view(),
        p.4.view(),
        p.5.view(),
        x.view(),
        labels.view(),
    )
}

fn loss_of(p: &Params, x: ArrayView2<f32>, y: ArrayView2<f32>) -> f32 {
    loss(
        p.0.view(),
        p.1.view(),
        p.2.view(),
        p.3.view(),
        p.4.view(),
        p.5.view(),
        x,
        y,
    )
}

fn main() {
    let (pixels, hidden, classes) = (64, 128, 10);
    let (train_n, test_n, batch_size, epochs) = (4096, 1024, 128, 8);
    let step_size = 0.05f32;
    let param_scale = 0.1f32;

    let mut rng = Lcg(7);
    let prototypes = rng.array((classes, pixels), 1.0);
    let (train_x, train_y, train_labels) = images(&prototypes, train_n, &mut rng);
    let (test_x, _, test_labels) = images(&prototypes, test_n, &mut rng);

    let mut params: Params = (
        rng.array((pixels, hidden), param_scale),
        Array1::zeros(hidden),
        rng.array((hidden, hidden), param_scale),
        Array1::zeros(hidden),
        rng.array((hidden, classes), param_scale),
        Array1::zeros(classes),
    );

    let first = s![..batch_size, ..];
    let (x, y) = (train_x.slice(first), train_y.slice(first));

    // The compiled step against the same step composed from the host: the
    // gradient called from Rust, the subtraction done by ndarray.
    let p = &params;
    let stepped = update(
        p.0.view(),
        p.1.view(),
        p.2.view(),
        p.3.view(),
        p.4.view(),
        p.5.view(),
        x,
        y,
        step_size,
    );
    let g = loss_grad(
        p.0.view(),
        p.1.view(),
        p.2.view(),
        p.3.view(),
        p.4.view(),
        p.5.view(),
        x,
        y,
    );
    let gap = |a: &Array2<f32>, w: &Array2<f32>, d: &Array2<f32>| {
        (a - &(w - &(d * step_size))).fold(0f32, |m, v| m.max(v.abs()))
    };
    println!(
        "update vs the host-composed step: max |difference| {:.1e} (w1), {:.1e} (w3)",
        gap(&stepped.0, &p.0, &g.0),
        gap(&stepped.4, &p.4, &g.4),
    );

    // A training run of `steps` updates as one compiled function, against
    // the same updates called one by one from the host.
    let steps = 25;
    let mut host = params.clone();
    for _ in 0..steps {
        let p = &host;
        host = update(
            p.0.view(),
            p.1.view(),
            p.2.view(),
            p.3.view(),
            p.4.view(),
            p.5.view(),
            x,
            y,
            step_size,
        );
    }
    let p = &params;
    let compiled = train(
        p.0.view(),
        p.1.view(),
        p.2.view(),
        p.3.view(),
        p.4.view(),
        p.5.view(),
        x,
        y,
        step_size,
        steps,
    );
    let programs: Vec<_> = oxla::compile_log()
        .into_iter()
        .filter(|r| r.function == "train")
        .collect();
    println!(
        "{steps} steps: loss {:.6} (one `train` call: {} compiled program) vs {:.6} ({steps} host calls of `update`)",
        loss_of(&compiled, x, y),
        programs.len(),
        loss_of(&host, x, y),
    );

    // JAX's loop: epochs of minibatches, one `update` call each.
    let batches = train_n / batch_size;
    for epoch in 0..epochs {
        for b in 0..batches {
            let rows = s![b * batch_size..(b + 1) * batch_size, ..];
            let p = &params;
            params = update(
                p.0.view(),
                p.1.view(),
                p.2.view(),
                p.3.view(),
                p.4.view(),
                p.5.view(),
                train_x.slice(rows),
                train_y.slice(rows),
                step_size,
            );
        }
        println!(
            "epoch {epoch}: training loss {:.4}, training accuracy {:.3}, test accuracy {:.3}",
            loss_of(&params, train_x.view(), train_y.view()),
            accuracy_of(&params, &train_x, &train_labels),
            accuracy_of(&params, &test_x, &test_labels),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> (Params, Array2<f32>, Array2<f32>, Array1<i64>) {
        let mut rng = Lcg(3);
        let prototypes = rng.array((10, 12), 1.0);
        let (x, y, labels) = images(&prototypes, 40, &mut rng);
        let p = (
            rng.array((12, 16), 0.3),
            rng.array((1, 16), 0.1).into_shape_with_order(16).unwrap(),
            rng.array((16, 16), 0.3),
            Array1::zeros(16),
            rng.array((16, 10), 0.3),
            Array1::zeros(10),
        );
        (p, x, y, labels)
    }

    fn call_update(p: &Params, x: ArrayView2<f32>, y: ArrayView2<f32>) -> Params {
        update(
            p.0.view(),
            p.1.view(),
            p.2.view(),
            p.3.view(),
            p.4.view(),
            p.5.view(),
            x,
            y,
            0.1,
        )
    }

    #[test]
    fn a_compiled_training_run_equals_host_calls_of_update() {
        let (p, x, y, _) = small();
        for steps in [0usize, 1, 7] {
            let mut host = p.clone();
            for _ in 0..steps {
                host = call_update(&host, x.view(), y.view());
            }
            let got = train(
                p.0.view(),
                p.1.view(),
                p.2.view(),
                p.3.view(),
                p.4.view(),
                p.5.view(),
                x.view(),
                y.view(),
                0.1,
                steps,
            );
            assert_eq!(got, host, "{steps} steps");
            let (a, b) = (
                loss_of(&got, x.view(), y.view()),
                loss_of(&host, x.view(), y.view()),
            );
            assert_eq!(a, b);
        }
    }

    #[test]
    fn accuracy_is_the_fraction_of_argmax_hits() {
        let (p, x, _, labels) = small();
        let logp = predict(
            p.0.view(),
            p.1.view(),
            p.2.view(),
            p.3.view(),
            p.4.view(),
            p.5.view(),
            x.view(),
        );
        // Plain Rust: the first index of each row's maximum, as argmax.
        let hits = logp
            .rows()
            .into_iter()
            .zip(labels.iter())
            .filter(|(row, &l)| {
                let best = (0..row.len()).fold(0, |b, k| if row[k] > row[b] { k } else { b });
                best as i64 == l
            })
            .count();
        let want = hits as f32 / labels.len() as f32;
        assert_eq!(accuracy_of(&p, &x, &labels), want);
        assert!(want > 0.0 && want < 1.0, "{want}: a test that can tell");
    }
}
