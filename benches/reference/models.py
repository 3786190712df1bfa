"""numpy and JAX on the model workloads of `benches/benches/models.rs`.

The same shapes and the same math as the oxla functions and the hand-written
Rust baselines in `benches/src/models.rs`:

  (a) logistic-regression loss and gradient, X 4096x256 f32;
  (b) per-example gradients of the same loss, 4096 x 256;
  (c) one training step (loss, gradient, SGD update) of an MLP
      784 -> 512 -> 10, tanh, softmax cross-entropy, batch 256, f32.

Prints the median of repeated timings for each, in the units of the README
table. Run it on the same machine, right after the criterion run:

    python3 -m pip install numpy "jax[cpu]"
    python3 benches/reference/models.py             # every core
    taskset -c 0 python3 benches/reference/models.py  # one core

numpy's (b) and (c) are written by hand (numpy has no autodiff); JAX's are
`jax.grad`, `jax.vmap(jax.grad)` and a jitted SGD step.
"""

import statistics
import sys
import time

import numpy as np


def median_seconds(fn, min_time=2.0, min_reps=20):
    fn()  # warm up (and compile, for JAX)
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < min_time or len(times) < min_reps:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def data():
    rng = np.random.default_rng(1)
    n, d = 4096, 256
    x = rng.uniform(-1, 1, (n, d)).astype(np.float32)
    w = rng.uniform(-0.1, 0.1, d).astype(np.float32)
    y = np.where(np.arange(n) % 3 == 0, 1.0, -1.0).astype(np.float32)
    batch, d_in, d_hidden, d_out = 256, 784, 512, 10
    xb = rng.uniform(-1, 1, (batch, d_in)).astype(np.float32)
    yb = np.zeros((batch, d_out), np.float32)
    yb[np.arange(batch), (np.arange(batch) * 7 + 3) % d_out] = 1.0
    params = [
        rng.uniform(-1, 1, (d_in, d_hidden)).astype(np.float32) / np.sqrt(d_in),
        np.zeros(d_hidden, np.float32),
        rng.uniform(-1, 1, (d_hidden, d_out)).astype(np.float32) / np.sqrt(d_hidden),
        np.zeros(d_out, np.float32),
    ]
    return (w, x, y), (params, xb, yb)


def numpy_rows(logistic, mlp):
    w, x, y = logistic

    def loss_and_grad():
        z = x @ w
        m = -y * z
        loss = np.logaddexp(0, m).mean()
        r = -y * (1 / (1 + np.exp(-m))) / len(y)
        return loss, r @ x

    def per_example():
        z = x @ w
        r = -y / (1 + np.exp(y * z))
        return r[:, None] * x

    params, xb, yb = mlp
    p = [a.copy() for a in params]

    def step():
        w1, b1, w2, b2 = p
        h = np.tanh(xb @ w1 + b1)
        logits = h @ w2 + b2
        mx = logits.max(axis=1, keepdims=True)
        lse = mx + np.log(np.exp(logits - mx).sum(axis=1, keepdims=True))
        loss = -(yb * (logits - lse)).sum(axis=1).mean()
        dlogits = (np.exp(logits - lse) - yb) / len(yb)
        g2 = h.T @ dlogits
        gb2 = dlogits.sum(axis=0)
        dh = (dlogits @ w2.T) * (1 - h * h)
        g1 = xb.T @ dh
        gb1 = dh.sum(axis=0)
        for a, g in zip(p, (g1, gb1, g2, gb2)):
            a -= 0.01 * g
        return loss

    return median_seconds(loss_and_grad), median_seconds(per_example), median_seconds(step)


def jax_rows(logistic, mlp):
    import jax
    import jax.numpy as jnp

    w, x, y = (jnp.asarray(a) for a in logistic)

    def loss(w, x, y):
        return jnp.logaddexp(0.0, -y * (x @ w)).mean()

    loss_and_grad = jax.jit(jax.value_and_grad(loss))

    def example_loss(w, xi, yi):
        return jnp.logaddexp(0.0, -yi * jnp.dot(w, xi))

    per_example = jax.jit(jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0)))

    params, xb, yb = mlp
    p = [jnp.asarray(a) for a in params]
    xb, yb = jnp.asarray(xb), jnp.asarray(yb)

    def mlp_loss(p, x, y):
        w1, b1, w2, b2 = p
        h = jnp.tanh(x @ w1 + b1)
        logits = h @ w2 + b2
        return -(y * jax.nn.log_softmax(logits, axis=1)).sum(axis=1).mean()

    @jax.jit
    def step(p, x, y):
        l, g = jax.value_and_grad(mlp_loss)(p, x, y)
        return l, [a - 0.01 * b for a, b in zip(p, g)]

    state = {"p": p}

    def run_step():
        l, state["p"] = step(state["p"], xb, yb)
        l.block_until_ready()

    return (
        median_seconds(lambda: jax.block_until_ready(loss_and_grad(w, x, y))),
        median_seconds(lambda: per_example(w, x, y).block_until_ready()),
        median_seconds(run_step),
    )


def main():
    logistic, mlp = data()
    rows = [("numpy", numpy_rows(logistic, mlp))]
    try:
        rows.append(("jax", jax_rows(logistic, mlp)))
    except ImportError:
        print("jax is not installed: numpy only", file=sys.stderr)
    print("| library | (a) logistic loss+grad | (b) per-example grads | (c) MLP step |")
    print("|---|---|---|---|")
    for name, (a, b, c) in rows:
        print(f"| {name} | {a * 1e6:.1f} µs | {b * 1e6:.1f} µs | {c * 1e3:.2f} ms |")


if __name__ == "__main__":
    main()
