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

/// The predicted class of each image.
#[jit]
fn predicted_class(
    w1: ArrayView2<f32>,
    b1: ArrayView1<f32>,
    w2: ArrayView2<f32>,
    b2: ArrayView1<f32>,
    w3: ArrayView2<f32>,
    b3: ArrayView1<f32>,
    inputs: ArrayView2<f32>,
) -> Array1<i64> {
    argmax(predict(w1, b1, w2, b2, w3, b3, inputs), Axis(1))
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
) -> (Array2<f32>, Array2<f32>, Vec<usize>) {
    let (classes, pixels) = prototypes.dim();
    let labels: Vec<usize> = (0..n)
        .map(|_| ((rng.next() * classes as f32) as usize).min(classes - 1))
        .collect();
    let noise = rng.array((n, pixels), 1.5);
    let mut x = noise;
    let mut targets = Array2::zeros((n, classes));
    for (i, &c) in labels.iter().enumerate() {
        let mut row = x.row_mut(i);
        row += &prototypes.row(c);
        targets[[i, c]] = 1.0;
    }
    (x, targets, labels)
}

fn accuracy(p: &Params, x: &Array2<f32>, labels: &[usize]) -> f32 {
    let classes = predicted_class(
        p.0.view(),
        p.1.view(),
        p.2.view(),
        p.3.view(),
        p.4.view(),
        p.5.view(),
        x.view(),
    );
    let hits = classes
        .iter()
        .zip(labels)
        .filter(|(c, l)| **c as usize == **l)
        .count();
    hits as f32 / labels.len() as f32
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

    // The compiled step against the same step composed from the host: the
    // gradient called from Rust, the subtraction done by ndarray.
    {
        let p = &params;
        let (x, y) = (
            train_x.slice(s![..batch_size, ..]),
            train_y.slice(s![..batch_size, ..]),
        );
        let views = (
            p.0.view(),
            p.1.view(),
            p.2.view(),
            p.3.view(),
            p.4.view(),
            p.5.view(),
        );
        let stepped = update(
            views.0, views.1, views.2, views.3, views.4, views.5, x, y, step_size,
        );
        let g = loss_grad(views.0, views.1, views.2, views.3, views.4, views.5, x, y);
        let diff = |a: &Array2<f32>, w: &Array2<f32>, d: &Array2<f32>| {
            (a - &(w - &(d * step_size))).fold(0f32, |m, v| m.max(v.abs()))
        };
        println!(
            "update vs host-composed step: max |difference| {:.1e} (w1), {:.1e} (w3)",
            diff(&stepped.0, &p.0, &g.0),
            diff(&stepped.4, &p.4, &g.4),
        );
    }

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
        let p = &params;
        let l = loss(
            p.0.view(),
            p.1.view(),
            p.2.view(),
            p.3.view(),
            p.4.view(),
            p.5.view(),
            train_x.view(),
            train_y.view(),
        );
        println!(
            "epoch {epoch}: training loss {l:.4}, training accuracy {:.3}, test accuracy {:.3}",
            accuracy(p, &train_x, &train_labels),
            accuracy(p, &test_x, &test_labels),
        );
    }
}
