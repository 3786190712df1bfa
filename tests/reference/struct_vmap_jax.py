"""JAX's values for `tests/suite/struct_vmap.rs`: per-example gradients with
respect to a parameter struct (a pytree), `vmap` batching a struct and
returning one, and Jacobians and Hessians of functions taking one, on the
same inputs the Rust test builds (the formulas in `inputs` below).

    python3 tests/reference/struct_vmap_jax.py > tests/reference/struct_vmap_jax.txt

Line format: `name shape: value value ...` (shape `-` for a scalar), each
value printed with 17 significant digits, row-major.
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def emit(name, a):
    a = np.asarray(a, dtype=np.float64)
    shape = ",".join(map(str, a.shape)) or "-"
    print(f"{name} {shape}: " + " ".join(f"{v:.17g}" for v in a.ravel()))


def grid(shape, a, b):
    """`sin(a·k + b)` for the row-major index k (the Rust test's `grid`)."""
    k = np.arange(int(np.prod(shape)), dtype=np.float64)
    return jnp.asarray(np.sin(a * k + b).reshape(shape))


def inputs():
    mlp = {
        "w1": grid((3, 4), 0.7, 0.1),
        "b1": grid((4,), 1.3, 0.2) * 0.1,
        "w2": grid((4,), 0.9, 0.3),
        "b2": jnp.asarray(0.25),
    }
    xs = grid((5, 3), 0.37, 0.5)
    ys = grid((5,), 1.1, -0.4)
    lines = {"w": grid((4, 3), 0.53, 0.7), "b": grid((4,), 0.8, 0.9)}
    line = {"w": grid((3,), 0.61, -0.2), "b": jnp.asarray(0.4)}
    a = grid((4,), 0.45, 0.3)
    return mlp, xs, ys, lines, line, a


def loss(p, x, y):
    h = jnp.tanh(x @ p["w1"] + p["b1"])
    r = h @ p["w2"] + p["b2"] - y
    return r * r


def batch_loss(p, xs, ys):
    return jnp.mean(jax.vmap(loss, in_axes=(None, 0, 0))(p, xs, ys))


def predict(l, x):
    return jnp.tanh(jnp.dot(l["w"], x) + l["b"])


def shift(l, a):
    return {"w": l["w"] * a, "b": l["b"] + a}


def feat(l, x):
    return jnp.sin(l["w"] * x) + l["b"]


def energy(l, x):
    return jnp.sum(jnp.sin(l["w"] * x)) * l["b"] + jnp.dot(x, x) * jnp.sum(l["w"])


def main():
    print(f"# JAX {jax.__version__}")
    mlp, xs, ys, lines, line, a = inputs()
    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(mlp, xs, ys)
    for k in ["w1", "b1", "w2", "b2"]:
        emit(f"per_example.{k}", per_example[k])
    emit("per_example_loss", jax.vmap(loss, in_axes=(None, 0, 0))(mlp, xs, ys))
    g = jax.grad(batch_loss)(mlp, xs, ys)
    for k in ["w1", "b1", "w2", "b2"]:
        emit(f"batch_grad.{k}", g[k])
    emit("predict_batched", jax.vmap(predict, in_axes=(0, 0))(lines, xs[:4]))
    emit("predict_lines", jax.vmap(predict, in_axes=(0, None))(lines, xs[0]))
    pg = jax.vmap(jax.grad(predict), in_axes=(0, 0))(lines, xs[:4])
    for k in ["w", "b"]:
        emit(f"predict_grad_batched.{k}", pg[k])
    s = jax.vmap(shift, in_axes=(None, 0))(line, a)
    for k in ["w", "b"]:
        emit(f"shift.{k}", s[k])
    x = xs[1]
    emit("feat_jacfwd", jax.jacfwd(feat, argnums=1)(line, x))
    emit("feat_jacrev", jax.jacrev(feat, argnums=1)(line, x))
    emit("energy_hessian", jax.hessian(energy, argnums=1)(line, x))


main()
