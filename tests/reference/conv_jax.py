"""JAX's values for `tests/suite/conv.rs`: lax.conv_general_dilated in 1, 2
and 3 spatial dimensions (strides, padding "SAME"/"VALID"/explicit, lhs and
rhs dilation, feature groups, NHWC/HWIO), each with the gradient of
`sum(y * y)` with respect to the input and the kernel; vmap of a
convolution over the input; max, sum and average pooling
(lax.reduce_window, average = sum / window size) with gradients, on inputs
with ties. Inputs are written beside the outputs.

    python3 tests/reference/conv_jax.py > tests/reference/conv_jax.txt

Line format: `name dims: v v ...` (float64 reprs, row-major; dims `-` for a
scalar).
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402


def emit(name, a):
    a = np.asarray(a, dtype=np.float64)
    dims = ",".join(map(str, a.shape)) or "-"
    print(f"{name} {dims}: " + " ".join(repr(float(v)) for v in a.ravel()))


# name, input shape, kernel shape, keyword arguments of conv_general_dilated
CASES = [
    ("c2d", (2, 3, 7, 6), (4, 3, 3, 2),
     dict(window_strides=(2, 1), padding=((1, 2), (2, 0)), rhs_dilation=(2, 1))),
    ("same", (1, 2, 5, 5), (3, 2, 3, 3), dict(window_strides=(2, 2), padding="SAME")),
    ("nhwc", (2, 5, 6, 3), (3, 2, 3, 4),
     dict(window_strides=(1, 1), padding="VALID", rhs_dilation=(1, 2),
          dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ("groups", (2, 4, 5, 5), (6, 2, 3, 3),
     dict(window_strides=(1, 2), padding=((1, 1), (1, 1)), feature_group_count=2)),
    ("c1d", (2, 2, 9), (3, 2, 4), dict(window_strides=(3,), padding=((1, 1),))),
    ("c3d", (1, 2, 4, 3, 4), (2, 2, 2, 2, 3),
     dict(window_strides=(1, 1, 2), padding="SAME")),
    ("lhsdil", (1, 2, 4, 5), (2, 2, 2, 3),
     dict(window_strides=(1, 2), padding=((0, 1), (0, 1)), lhs_dilation=(2, 1))),
]


def conv(x, w, kw):
    return lax.conv_general_dilated(x, w, **kw)


def main():
    print(f"# JAX {jax.__version__}")
    rng = np.random.default_rng(25)
    for name, xs, ws, kw in CASES:
        x = rng.uniform(-1.0, 1.0, xs)
        w = rng.uniform(-1.0, 1.0, ws)
        emit(f"{name}_x", x)
        emit(f"{name}_w", w)
        emit(f"{name}_y", conv(x, w, kw))
        gx, gw = jax.grad(lambda x, w: jnp.sum(conv(x, w, kw) ** 2), argnums=(0, 1))(x, w)
        emit(f"{name}_gx", gx)
        emit(f"{name}_gw", gw)
    # vmap over the input (axis 0), the kernel shared.
    xb = rng.uniform(-1.0, 1.0, (3, 2, 2, 5, 4))
    wb = rng.uniform(-1.0, 1.0, (3, 2, 2, 2))
    kw = dict(window_strides=(1, 2), padding=((1, 0), (0, 1)))
    emit("vmap_x", xb)
    emit("vmap_w", wb)
    emit("vmap_y", jax.vmap(lambda x: conv(x, wb, kw))(xb))
    # Pooling, on small integers (ties in most windows).
    p = rng.integers(0, 3, (2, 2, 6, 5)).astype(np.float64)
    c = rng.uniform(-1.0, 1.0, (2, 2, 3, 2))
    emit("pool_x", p)
    emit("pool_c", c)

    def max_pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def sum_pool(x):
        return lax.reduce_window(x, 0.0, lax.add, (1, 1, 3, 3), (1, 1, 2, 1), "SAME")

    def avg_pool(x):
        return sum_pool(x) / 9.0

    def max_pool_same(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), "SAME")

    emit("max_pool_y", max_pool(p))
    emit("max_pool_g", jax.grad(lambda x: jnp.sum(c * max_pool(x)))(p))
    emit("sum_pool_y", sum_pool(p))
    emit("sum_pool_g", jax.grad(lambda x: jnp.sum(sum_pool(x) ** 2))(p))
    emit("avg_pool_y", avg_pool(p))
    emit("avg_pool_g", jax.grad(lambda x: jnp.sum(avg_pool(x) ** 2))(p))
    emit("max_pool_same_y", max_pool_same(p))
    c2 = rng.uniform(-1.0, 1.0, max_pool_same(p).shape)
    emit("max_pool_same_c", c2)
    emit("max_pool_same_g", jax.grad(lambda x: jnp.sum(c2 * max_pool_same(x)))(p))


if __name__ == "__main__":
    main()
