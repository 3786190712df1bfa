"""JAX's pmap on the data-parallel MLP step of `benches/benches/models.rs`
(`mlp_pmap` group): 784 -> 512 -> 10, tanh, softmax cross-entropy, batch
256, f32, the batch split over 1 and 2 host devices, gradients `pmean`'d,
SGD with step 0.01 on every device. Beside them, the same step jitted on one
device without pmap. Prints medians in ms. Run on the same machine, right
after the criterion run:

    python3 benches/reference/pmap.py
"""

import os

os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2"
)

import functools  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from models import data, median_seconds  # noqa: E402


def mlp_loss(p, x, y):
    w1, b1, w2, b2 = p
    h = jnp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    return -(y * jax.nn.log_softmax(logits, axis=1)).sum(axis=1).mean()


@functools.partial(jax.pmap, axis_name="batch", in_axes=(None, 0, 0), out_axes=None)
def dp_step(p, x, y):
    l, g = jax.value_and_grad(mlp_loss)(p, x, y)
    g = jax.lax.pmean(g, "batch")
    return jax.lax.pmean(l, "batch"), [a - 0.01 * b for a, b in zip(p, g)]


@jax.jit
def step(p, x, y):
    l, g = jax.value_and_grad(mlp_loss)(p, x, y)
    return l, [a - 0.01 * b for a, b in zip(p, g)]


def main():
    _, (params, xb, yb) = data()
    p = [jnp.asarray(a) for a in params]
    rows = []
    state = {"p": p}

    def run_jit():
        l, state["p"] = step(state["p"], xb, yb)
        l.block_until_ready()

    rows.append(("jit, no pmap", median_seconds(run_jit)))
    for n in (1, 2):
        xs = jnp.asarray(np.reshape(xb, (n, -1, xb.shape[1])))
        ys = jnp.asarray(np.reshape(yb, (n, -1, yb.shape[1])))
        state["p"] = p

        def run_pmap():
            l, state["p"] = dp_step(state["p"], xs, ys)
            l.block_until_ready()

        rows.append((f"pmap, {n} device{'s' if n > 1 else ''}", median_seconds(run_pmap)))
    print(f"JAX {jax.__version__}, {jax.device_count()} host devices")
    for name, s in rows:
        print(f"| {name} | {s * 1e3:.2f} ms |")


if __name__ == "__main__":
    main()
