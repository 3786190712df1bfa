"""JAX's values for `tests/suite/sort.rs`: jnp.sort, jnp.argsort and
lax.top_k (NaN, -0.0, ties), a loss through sort and top_k with its
gradient, and vmap of top_k. Inputs are written beside the outputs.

    python3 tests/reference/sort_jax.py > tests/reference/sort_jax.txt

Line format: `name dims: v v ...` (float64 reprs, row-major; dims `-` for a
scalar).
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def emit(name, a):
    a = np.asarray(a, dtype=np.float64)
    dims = ",".join(map(str, a.shape)) or "-"
    print(f"{name} {dims}: " + " ".join(repr(float(v)) for v in a.ravel()))


def loss(x, w):
    values, _ = jax.lax.top_k(x, 2)
    return jnp.sum(w * jnp.sort(x)) + jnp.sum(values * values)


def main():
    print(f"# JAX {jax.__version__}")
    v = jnp.array([1.0, jnp.nan, 3.0, 3.0, -0.0, 0.0, -jnp.inf, 2.0])
    emit("v", v)
    emit("sort_v", jnp.sort(v))
    emit("argsort_v", jnp.argsort(v))
    m = jnp.array([[2.0, 1.0, 2.0, 0.5], [1.0, 1.0, -3.0, 4.0], [0.0, 2.0, 2.0, 2.0]])
    emit("m", m)
    emit("sort_m", jnp.sort(m))
    emit("sort_m_axis0", jnp.sort(m, axis=0))
    emit("argsort_m", jnp.argsort(m))
    emit("argsort_m_axis0", jnp.argsort(m, axis=0))
    values, indices = jax.lax.top_k(m, 3)
    emit("top_k_m_values", values)
    emit("top_k_m_indices", indices)
    rng = np.random.default_rng(5)
    x = rng.uniform(-1.0, 1.0, (2, 5))
    w = rng.uniform(-1.0, 1.0, (2, 5))
    emit("x", x)
    emit("w", w)
    emit("loss", loss(x, w))
    emit("loss_grad", jax.grad(loss)(x, w))
    xs = rng.uniform(-1.0, 1.0, (3, 6))
    emit("xs", xs)
    values, indices = jax.vmap(lambda r: jax.lax.top_k(r, 2))(xs)
    emit("vmap_top_k_values", values)
    emit("vmap_top_k_indices", indices)


if __name__ == "__main__":
    main()
