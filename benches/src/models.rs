//! The model workloads of the benchmark table, each beside a hand-written
//! Rust baseline on the same data:
//!
//! - (a) the logistic-regression loss and its gradient, X of 4096×256 f32;
//! - (b) the per-example gradients of the same loss (4096 × 256);
//! - (c) one training step of an MLP 784→512→10 with tanh and softmax
//!   cross-entropy, batch 256: loss, gradient and SGD update.

use oxla::ndarray::{Array1, Array2, Array3, ArrayView1, ArrayView2, Axis};

// ---- (a) logistic regression: loss and gradient -----------------------------

/// Mean logistic loss of labels `y` in {-1, 1} under the linear model `x·w`.
#[oxla::value_and_grad(logistic_loss_and_grad, wrt = w)]
pub fn logistic_loss(w: ArrayView1<f32>, x: ArrayView2<f32>, y: ArrayView1<f32>) -> f32 {
    let z = x.dot(&w);
    (1.0 + (-y * z).exp()).ln().mean()
}

/// The hand-written baseline of (a): one pass over `x` for the margins, one
/// for the gradient, eight accumulators per row so rustc vectorizes.
pub fn logistic_loss_and_grad_rust(w: &[f32], x: &[f32], y: &[f32]) -> (f32, Vec<f32>) {
    let d = w.len();
    let n = y.len();
    let mut g = vec![0.0f32; d];
    let mut loss = 0.0f64;
    for (i, row) in x.chunks_exact(d).enumerate() {
        let z = dot8(row, w);
        let m = -y[i] * z;
        let e = m.exp();
        loss += (1.0 + e).ln() as f64;
        // d/dz log(1 + exp(-y z)) = -y e / (1 + e)
        let r = -y[i] * e / (1.0 + e) / n as f32;
        for (gj, xj) in g.iter_mut().zip(row) {
            *gj += r * xj;
        }
    }
    ((loss / n as f64) as f32, g)
}

fn dot8(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    let tail = a.len() - a.len() % 8;
    let mut s: f32 = acc.iter().sum();
    for i in tail..a.len() {
        s += a[i] * b[i];
    }
    s
}

// ---- (b) per-example gradients ----------------------------------------------

/// The logistic loss of one example, batched over the rows of `x`.
#[oxla::vmap(per_example_grads, in_axes = (None, 0, 0))]
#[oxla::grad(example_grad, wrt = w)]
pub fn example_loss(w: &[f32], x: &[f32], y: f32) -> f32 {
    (1.0 + (-y * dot(w, x)).exp()).ln()
}

/// The hand-written baseline of (b): each row's gradient is its features
/// scaled by one number.
pub fn per_example_grads_rust(w: &[f32], x: &[f32], y: &[f32], out: &mut [f32]) {
    let d = w.len();
    for (i, (row, o)) in x.chunks_exact(d).zip(out.chunks_exact_mut(d)).enumerate() {
        let e = (-y[i] * dot8(row, w)).exp();
        let r = -y[i] * e / (1.0 + e);
        for (oj, xj) in o.iter_mut().zip(row) {
            *oj = r * xj;
        }
    }
}

// ---- (c) an MLP training step ----------------------------------------------

/// Softmax cross-entropy of a two-layer tanh MLP against one-hot targets.
#[oxla::value_and_grad(mlp_loss_and_grad, wrt = (w1, b1, w2, b2))]
pub fn mlp_loss(
    w1: ArrayView2<f32>,
    b1: ArrayView1<f32>,
    w2: ArrayView2<f32>,
    b2: ArrayView1<f32>,
    x: ArrayView2<f32>,
    y: ArrayView2<f32>,
) -> f32 {
    let h = (x.dot(&w1) + b1).tanh();
    let logits = h.dot(&w2) + b2;
    -(y * log_softmax(logits, Axis(1))).sum_axis(Axis(1)).mean()
}

/// The parameters of the MLP.
pub struct Mlp {
    pub w1: Array2<f32>,
    pub b1: Array1<f32>,
    pub w2: Array2<f32>,
    pub b2: Array1<f32>,
}

impl Mlp {
    /// Deterministic initial parameters for `d_in → d_hidden → d_out`.
    pub fn new(d_in: usize, d_hidden: usize, d_out: usize) -> Mlp {
        let s1 = 1.0 / (d_in as f32).sqrt();
        let s2 = 1.0 / (d_hidden as f32).sqrt();
        Mlp {
            w1: uniform((d_in, d_hidden), s1, 11),
            b1: Array1::zeros(d_hidden),
            w2: uniform((d_hidden, d_out), s2, 12),
            b2: Array1::zeros(d_out),
        }
    }

    /// One step of SGD with oxla's loss and gradient; returns the loss.
    pub fn step_oxla(&mut self, x: &Array2<f32>, y: &Array2<f32>, lr: f32) -> f32 {
        let (loss, g1, gb1, g2, gb2) =
            mlp_loss_and_grad(&self.w1, &self.b1, &self.w2, &self.b2, x, y);
        self.w1.scaled_add(-lr, &g1);
        self.b1.scaled_add(-lr, &gb1);
        self.w2.scaled_add(-lr, &g2);
        self.b2.scaled_add(-lr, &gb2);
        loss
    }

    /// The same step with the gradients written into `g`'s buffers
    /// (`mlp_loss_and_grad_into`): a training loop's form, allocating nothing.
    pub fn step_oxla_into(
        &mut self,
        x: &Array2<f32>,
        y: &Array2<f32>,
        lr: f32,
        g: &mut Mlp,
    ) -> f32 {
        let loss = mlp_loss_and_grad_into(
            &self.w1, &self.b1, &self.w2, &self.b2, x, y, &mut g.w1, &mut g.b1, &mut g.w2,
            &mut g.b2,
        );
        self.w1.scaled_add(-lr, &g.w1);
        self.b1.scaled_add(-lr, &g.b1);
        self.w2.scaled_add(-lr, &g.w2);
        self.b2.scaled_add(-lr, &g.b2);
        loss
    }
}

/// Values in [-scale, scale) from a fixed seed (a 64-bit LCG).
pub fn uniform(shape: (usize, usize), scale: f32, seed: u64) -> Array2<f32> {
    let mut s = seed;
    let v = (0..shape.0 * shape.1)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0) * scale
        })
        .collect();
    Array2::from_shape_vec(shape, v).expect("shape")
}

/// `c = a · b` (row-major, `a` m×k, `b` k×n) with the `gemm` crate on one
/// thread; `ta`/`tb` read `a`/`b` transposed (then `a` is k×m, `b` n×k).
#[allow(clippy::too_many_arguments)]
fn matmul(c: &mut [f32], a: &[f32], b: &[f32], m: usize, k: usize, n: usize, ta: bool, tb: bool) {
    let (a_rs, a_cs) = if ta { (1, m as isize) } else { (k as isize, 1) };
    let (b_rs, b_cs) = if tb { (1, k as isize) } else { (n as isize, 1) };
    assert!(c.len() >= m * n && a.len() >= m * k && b.len() >= k * n);
    // SAFETY: the pointers are valid for the m×k, k×n and m×n elements the
    // strides address (checked above), and `c` does not alias `a` or `b`.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            a_cs,
            a_rs,
            b.as_ptr(),
            b_cs,
            b_rs,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// The hand-written baseline of (c): forward, backward and update with
/// `gemm` on one core and plain loops for the rest; buffers reused across
/// steps.
pub struct MlpRust {
    pub p: Mlp,
    h: Vec<f32>,
    logits: Vec<f32>,
    dh: Vec<f32>,
    g1: Vec<f32>,
    g2: Vec<f32>,
}

impl MlpRust {
    pub fn new(p: Mlp, batch: usize) -> MlpRust {
        let (d_in, d_hidden) = p.w1.dim();
        let d_out = p.w2.dim().1;
        MlpRust {
            h: vec![0.0; batch * d_hidden],
            logits: vec![0.0; batch * d_out],
            dh: vec![0.0; batch * d_hidden],
            g1: vec![0.0; d_in * d_hidden],
            g2: vec![0.0; d_hidden * d_out],
            p,
        }
    }

    pub fn step(&mut self, x: &[f32], y: &[f32], lr: f32) -> f32 {
        let (d_in, d_hidden) = self.p.w1.dim();
        let d_out = self.p.w2.dim().1;
        let n = y.len() / d_out;
        let w1 = self.p.w1.as_slice().expect("standard layout");
        let w2 = self.p.w2.as_slice().expect("standard layout");
        let (b1, b2) = (self.p.b1.as_slice().unwrap(), self.p.b2.as_slice().unwrap());
        // Forward.
        matmul(&mut self.h, x, w1, n, d_in, d_hidden, false, false);
        for row in self.h.chunks_exact_mut(d_hidden) {
            for (v, b) in row.iter_mut().zip(b1) {
                *v = (*v + b).tanh();
            }
        }
        matmul(
            &mut self.logits,
            &self.h,
            w2,
            n,
            d_hidden,
            d_out,
            false,
            false,
        );
        // Softmax cross-entropy; the logits become d loss / d logits.
        let mut loss = 0.0f32;
        for (row, t) in self
            .logits
            .chunks_exact_mut(d_out)
            .zip(y.chunks_exact(d_out))
        {
            let mut mx = f32::NEG_INFINITY;
            for (v, b) in row.iter_mut().zip(b2) {
                *v += b;
                mx = mx.max(*v);
            }
            let s: f32 = row.iter().map(|v| (v - mx).exp()).sum();
            let lse = mx + s.ln();
            for (v, t) in row.iter_mut().zip(t) {
                loss -= t * (*v - lse);
                *v = ((*v - lse).exp() - t) / n as f32;
            }
        }
        // Backward.
        matmul(
            &mut self.g2,
            &self.h,
            &self.logits,
            d_hidden,
            n,
            d_out,
            true,
            false,
        );
        let mut gb2 = vec![0.0f32; d_out];
        for row in self.logits.chunks_exact(d_out) {
            for (g, v) in gb2.iter_mut().zip(row) {
                *g += v;
            }
        }
        matmul(
            &mut self.dh,
            &self.logits,
            w2,
            n,
            d_out,
            d_hidden,
            false,
            true,
        );
        for (d, h) in self.dh.iter_mut().zip(&self.h) {
            *d *= 1.0 - h * h;
        }
        matmul(&mut self.g1, x, &self.dh, d_in, n, d_hidden, true, false);
        let mut gb1 = vec![0.0f32; d_hidden];
        for row in self.dh.chunks_exact(d_hidden) {
            for (g, v) in gb1.iter_mut().zip(row) {
                *g += v;
            }
        }
        // Update.
        for (w, g) in self.p.w1.iter_mut().zip(&self.g1) {
            *w -= lr * g;
        }
        for (w, g) in self.p.w2.iter_mut().zip(&self.g2) {
            *w -= lr * g;
        }
        for (b, g) in self.p.b1.iter_mut().zip(&gb1) {
            *b -= lr * g;
        }
        for (b, g) in self.p.b2.iter_mut().zip(&gb2) {
            *b -= lr * g;
        }
        loss / n as f32
    }
}

/// One-hot targets of `n` examples over `classes`, deterministic.
pub fn one_hot_targets(n: usize, classes: usize) -> Array2<f32> {
    let mut y = Array2::zeros((n, classes));
    for i in 0..n {
        y[[i, (i * 7 + 3) % classes]] = 1.0;
    }
    y
}

/// The mean over rows, for checks.
pub fn mean_rows(a: &Array2<f32>) -> Array1<f32> {
    a.mean_axis(Axis(0)).expect("rows")
}

// ---- (d) the same step, data-parallel with pmap ------------------------------

/// The MLP step on one device's shard of the batch: the loss and gradients
/// averaged over the devices (`pmean`), and the parameters after one step
/// of SGD with step 0.01 (the same on every device). JAX's
/// `pmap(value_and_grad)` + `pmean` training step.
#[oxla::pmap(
    mlp_dp_step,
    axis_name = batch,
    in_axes = (None, None, None, None, 0, 0),
    out_axes = (None, None, None, None, None)
)]
pub fn mlp_dp(
    w1: ArrayView2<f32>,
    b1: ArrayView1<f32>,
    w2: ArrayView2<f32>,
    b2: ArrayView1<f32>,
    x: ArrayView2<f32>,
    y: ArrayView2<f32>,
) -> (f32, Array2<f32>, Array1<f32>, Array2<f32>, Array1<f32>) {
    let (l, g1, gb1, g2, gb2) = mlp_loss_and_grad(w1, b1, w2, b2, x, y);
    (
        pmean(l, batch),
        w1 - 0.01 * pmean(g1, batch),
        b1 - 0.01 * pmean(gb1, batch),
        w2 - 0.01 * pmean(g2, batch),
        b2 - 0.01 * pmean(gb2, batch),
    )
}

impl Mlp {
    /// One data-parallel step: `xs` and `ys` hold one shard of the batch
    /// per device along their first axis; returns the loss.
    pub fn step_pmap(&mut self, xs: &Array3<f32>, ys: &Array3<f32>) -> f32 {
        let (loss, w1, b1, w2, b2) = mlp_dp_step(
            self.w1.view(),
            self.b1.view(),
            self.w2.view(),
            self.b2.view(),
            xs.view(),
            ys.view(),
        );
        (self.w1, self.b1, self.w2, self.b2) = (w1, b1, w2, b2);
        loss
    }
}

/// `a` split along its rows into `n` equal shards, stacked: `n × rows/n × cols`.
pub fn shards(a: &Array2<f32>, n: usize) -> Array3<f32> {
    let (rows, cols) = a.dim();
    a.clone()
        .into_shape_with_order((n, rows / n, cols))
        .expect("rows divisible by the shard count")
}
