"""numpy and JAX on the fused-sum workloads of `benches/benches/fused_sum.rs`.

The same inputs and math as the oxla functions and the hand-written Rust
baselines in `benches/src/`:

  sum(x * 2 * y + z)         n = 10^3 and 10^7, f32 (memory-bound)
  sum(tanh(x) * exp(-y*y))   n = 10^3 and 10^7, f32 (math-heavy)
  sum(gelu(x)), exact (erf)  n = 10^6, f32

Prints the median of repeated timings of each, in the units of the README
table. JAX runs the jitted function (compiled in the warm-up) and waits for
its result (`block_until_ready`). Run it on the same machine, right after the
criterion run:

    python3 -m pip install numpy "jax[cpu]"
    python3 benches/reference/fused.py             # every core
    taskset -c 0 python3 benches/reference/fused.py  # one core
"""

import numpy as np

from models import median_seconds


def inputs(n):
    i = np.arange(n)
    x = ((i % 7) * 0.25).astype(np.float32)
    y = ((i % 5) * 0.5).astype(np.float32)
    z = ((i % 3) - 1.0).astype(np.float32)
    return x, y, z


def spread(n, seed):
    """Pseudo-random values in [-3, 3): the bench's `spread`."""
    h = (np.arange(n, dtype=np.uint64) ^ np.uint64(seed)) * np.uint64(2654435761)
    h = (h & np.uint64(0xFFFFFFFF)) >> np.uint64(8)
    return (h.astype(np.float32) / np.float32(16777216.0) * np.float32(6.0) - np.float32(3.0)).astype(
        np.float32
    )


def show(name, seconds):
    if seconds < 1e-3:
        print(f"{name:<40} {seconds * 1e6:10.2f} µs")
    else:
        print(f"{name:<40} {seconds * 1e3:10.3f} ms")


def main():
    import jax
    import jax.numpy as jnp

    fused = jax.jit(lambda x, y, z: jnp.sum(x * 2 * y + z))
    tanh_exp = jax.jit(lambda x, y: jnp.sum(jnp.tanh(x) * jnp.exp(-y * y)))
    for n in (1_000, 10_000_000):
        x, y, z = inputs(n)
        show(f"numpy fused_sum n={n}", median_seconds(lambda: np.sum(x * 2 * y + z)))
        jx, jy, jz = (jax.device_put(a) for a in (x, y, z))
        show(f"jax fused_sum n={n}", median_seconds(lambda: fused(jx, jy, jz).block_until_ready()))
        x, y = spread(n, 1), spread(n, 2)
        show(
            f"numpy tanh_exp_sum n={n}",
            median_seconds(lambda: np.sum(np.tanh(x) * np.exp(-y * y))),
        )
        jx, jy = jax.device_put(x), jax.device_put(y)
        show(f"jax tanh_exp_sum n={n}", median_seconds(lambda: tanh_exp(jx, jy).block_until_ready()))
    gelu = jax.jit(lambda x: jnp.sum(jax.nn.gelu(x, approximate=False)))
    n = 1_000_000
    jx = jax.device_put(spread(n, 3))
    show(f"jax gelu_sum n={n}", median_seconds(lambda: gelu(jx).block_until_ready()))


if __name__ == "__main__":
    main()
