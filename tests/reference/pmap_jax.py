"""JAX's values for oxla's pmap tests (`tests/suite/pmap.rs`).

Run with 4 host devices and 64-bit floats:

    XLA_FLAGS=--xla_force_host_platform_device_count=4 python3 pmap_jax.py > pmap_jax.txt

Each line is `name shape: v0 v1 ...` (row-major, repr of f64). The inputs
are closed forms the Rust test computes the same way.
"""
import math
import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
from jax import lax

N = 4
assert jax.local_device_count() == N, "set --xla_force_host_platform_device_count=4"


def grid(shape, f):
    """An array whose element at flat index q is f(q)."""
    n = math.prod(shape)
    return jnp.array([f(q) for q in range(n)], dtype=jnp.float64).reshape(shape)


X = grid((N, 4), lambda q: math.sin(0.7 * q + 0.3))
X3 = grid((N, 3, 2), lambda q: math.cos(0.4 * q - 0.2))


def out(name, a):
    a = jnp.asarray(a, dtype=jnp.float64)
    vals = " ".join(repr(float(v)) for v in a.reshape(-1))
    print(f"{name} {','.join(str(d) for d in a.shape)}: {vals}")


COLLECTIVES = {
    "psum": lambda x: lax.psum(x, "i"),
    "pmean": lambda x: lax.pmean(x, "i"),
    "pmax": lambda x: lax.pmax(x, "i"),
    "pmin": lambda x: lax.pmin(x, "i"),
    "all_gather0": lambda x: lax.all_gather(x, "i", axis=0),
    "all_gather1": lambda x: lax.all_gather(x, "i", axis=1),
    "psum_scatter": lambda x: lax.psum_scatter(x, "i", scatter_dimension=0),
    "ppermute_ring": lambda x: lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]),
    "ppermute_partial": lambda x: lax.ppermute(x, "i", [(0, 2), (1, 3)]),
    "all_to_all": lambda x: lax.all_to_all(x, "i", 0, 0),
    "axis_index": lambda x: x * 0 + lax.axis_index("i"),
}

for name, c in COLLECTIVES.items():
    per_device = lambda x, c=c: c(jnp.sin(x))
    y = jax.pmap(per_device, axis_name="i")(X)
    out(f"{name}.value", y)
    # The gradient of a weighted sum of the stacked results: JAX's
    # transposes of the collectives. (JAX has no derivative for pmax and
    # pmin; oxla's, reduce_max's chooser rule, is checked against central
    # differences instead.)
    if name in ("pmax", "pmin"):
        continue
    w = grid(y.shape, lambda q: math.cos(0.3 * q))
    loss = lambda x, w=w, f=per_device: jnp.sum(jax.pmap(f, axis_name="i")(x) * w)
    out(f"{name}.grad", jax.grad(loss)(X))

# vmap inside pmap: a psum over the vmap's axis j and one over the pmap's i.
both = lambda x: lax.psum(jnp.sin(x), "j") * lax.psum(x, "i")
out("vmap_in_pmap.value", jax.pmap(jax.vmap(both, axis_name="j"), axis_name="i")(X3))
w3 = grid((N, 3, 2), lambda q: math.sin(0.5 * q))
loss3 = lambda x: jnp.sum(jax.pmap(jax.vmap(both, axis_name="j"), axis_name="i")(x) * w3)
out("vmap_in_pmap.grad", jax.grad(loss3)(X3))

# The data-parallel step: per-device gradients of a pmean'd loss with
# respect to replicated parameters (in_axes None).
K, M = 5, 3
W0 = grid((K,), lambda q: 0.2 * math.cos(q + 0.5))
XS = grid((N, M, K), lambda q: math.sin(0.37 * q))
YS = grid((N, M), lambda q: math.cos(0.21 * q))


def shard_loss(w, x, y):
    return lax.pmean(jnp.mean((jnp.tanh(x @ w) - y) ** 2), "i")


g = jax.pmap(jax.value_and_grad(shard_loss), axis_name="i", in_axes=(None, 0, 0))(W0, XS, YS)
out("data_parallel.loss", g[0])
out("data_parallel.grad", g[1])
