"""JAX's values for oxla's second-day vocabulary tests (`tests/suite/second_day.rs`).

Run with 64-bit floats:

    python3 second_day_jax.py > second_day_jax.txt

Each construct is a scalar function of an input `x` (a closed form the Rust
test computes the same way): the weighted sum `sum(f(x) * w)` of its array
result `f(x)` with the weights `w = cos(0.3 q)` at flat index q. Each line is
`name.out`, `name.value` or `name.grad`, then `shape: v0 v1 ...` (row-major, repr of f64).
"""
import math
import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp


def grid(shape, f):
    """An array whose element at flat index q is f(q)."""
    n = math.prod(shape)
    return jnp.array([f(q) for q in range(n)], dtype=jnp.float64).reshape(shape)


def weights(shape):
    return grid(shape, lambda q: math.cos(0.3 * q))


X1 = grid((4,), lambda q: math.sin(0.7 * q + 0.3))
X2 = grid((3, 4), lambda q: math.sin(0.7 * q + 0.3))
X3 = grid((2, 3, 4), lambda q: math.sin(0.7 * q + 0.3))
X9 = grid((9,), lambda q: math.sin(0.7 * q + 0.3))
X12 = grid((12,), lambda q: math.sin(0.7 * q + 0.3))


def out(name, a):
    a = jnp.asarray(a, dtype=jnp.float64)
    vals = " ".join(repr(float(v)) for v in a.reshape(-1))
    print(f"{name} {','.join(str(d) for d in a.shape)}: {vals}")


def case(name, f, x):
    """The weighted sum of f(x) and its gradient."""
    shape = jnp.shape(f(x))
    w = weights(shape)
    loss = lambda x: jnp.sum(f(x) * w)
    value, grad = jax.value_and_grad(loss)(x)
    out(name + ".out", f(x))
    out(name + ".value", value)
    out(name + ".grad", grad)


C = jnp.array([1.0, -2.0, 0.5])

CASES = [
    # reshape family (already in the vocabulary)
    ("reshape", lambda x: x.reshape((3, 4)).reshape((2, 6)), X12),
    ("reshape_infer", lambda x: x.reshape((3, 4)).reshape((-1, 2)), X12),
    ("flatten", lambda x: x.reshape((3, 4)).ravel(), X12),
    ("insert_axis", lambda x: jnp.expand_dims(x, 1), X2),
    # reshape family (new)
    ("expand_dims", lambda x: jnp.expand_dims(x, 0), X2),
    ("expand_dims_neg", lambda x: jnp.expand_dims(x, -1), X2),
    ("squeeze", lambda x: jnp.squeeze(x.reshape((3, 1, 4, 1))), X12),
    ("squeeze_axis", lambda x: jnp.squeeze(x.reshape((3, 1, 4)), 1), X12),
    ("swapaxes", lambda x: jnp.swapaxes(x, 0, 2), X3),
    ("moveaxis", lambda x: jnp.moveaxis(x, 0, -1), X3),
    ("broadcast_to", lambda x: jnp.broadcast_to(x, (2, 3, 4)), X2),
    ("broadcast_to_row", lambda x: jnp.broadcast_to(x, (3, 4)), X1),
    ("tile", lambda x: jnp.tile(x, (2, 3)), X2),
    ("tile_static", lambda x: jnp.tile(x.reshape((3, 4)), (2, 1, 3)), X12),
    ("tile_1d", lambda x: jnp.tile(x, 3), X1),
    ("repeat_axis", lambda x: jnp.repeat(x, 2, axis=1), X2),
    ("repeat_static", lambda x: jnp.repeat(x.reshape((3, 4)), 2, axis=1), X12),
    ("repeat_axis0", lambda x: jnp.repeat(x, 3, axis=0), X2),
    ("repeat_flat", lambda x: jnp.repeat(x.reshape((3, 4)), 2), X12),
    # names (already in the vocabulary)
    ("var", lambda x: jnp.var(x), X2),
    ("std_axis", lambda x: jnp.std(x, axis=1, ddof=1), X2),
    ("sum_axis_neg", lambda x: jnp.sum(x, axis=-1), X2),
    ("row", lambda x: x[1], X2),
    ("column", lambda x: x[:, 2], X2),
    ("clip", lambda x: jnp.clip(x, -0.5, 0.5), X2),
    ("logaddexp", lambda x: jnp.logaddexp(x, 0.5 * x), X2),
    ("outer", lambda x: jnp.outer(x, x), X1),
    ("rows_loop", lambda x: sum(jnp.sin(r) * (i + 1.0) for i, r in enumerate(x)), X2),
    # names (new)
    ("norm", lambda x: jnp.linalg.norm(x), X1),
    ("norm_fro", lambda x: jnp.linalg.norm(x), X2),
    ("norm_axis", lambda x: jnp.linalg.norm(x, axis=1), X2),
    ("diag", lambda x: jnp.diag(x.reshape((3, 3))), X9),
    ("diag_rect", lambda x: jnp.diag(x.reshape((3, 4))), X12),
    ("diag_build", lambda x: jnp.diag(x), X1),
    ("einsum_matmul", lambda x: jnp.einsum("ij,kj->ik", x, x), X2),
    ("einsum_trace_free", lambda x: jnp.einsum("ij,ij->i", x, x), X2),
    ("einsum_batch", lambda x: jnp.einsum("bij,bkj->bik", x, x), X3),
    ("einsum_outer", lambda x: jnp.einsum("i,j->ij", x, x), X1),
    ("einsum_transpose", lambda x: jnp.einsum("ij->ji", x), X2),
    # array literals, const arrays, loops over arrays
    ("literal", lambda x: x * C[0] + x * x * C[1] + C[2], X1),
    ("for_literal", lambda x: sum(c * jnp.sin(c * x) for c in C), X1),
    ("for_iter", lambda x: sum(jnp.tanh(v) * v for v in x), X1),
]

for name, f, x in CASES:
    case(name, f, x)

# Integer division and remainder: JAX's `//` and `%` floor, `lax.div` and
# `lax.rem` truncate as Rust's `/` and `%` do.
a = jnp.array([-7, 7, -7, 7, 6], dtype=jnp.int32)
b = jnp.array([2, 2, -2, -2, 4], dtype=jnp.int32)
out("int_div_trunc", jax.lax.div(a, b))
out("int_rem_trunc", jax.lax.rem(a, b))
