"""JAX's values for `tests/suite/custom_derivatives.rs`: functions with
`jax.custom_jvp` and `jax.custom_vjp` rules, their values and what grad,
jvp, vmap and hessian give through the rules. Inputs are written beside the
outputs.

    python3 tests/reference/custom_derivatives_jax.py > tests/reference/custom_derivatives_jax.txt

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


# log1pexp as in JAX's custom_jvp tutorial: the naive derivative is
# inf/inf = NaN where exp(x) overflows (x = 1000 in float64, x = 100 in
# float32); the rule stays finite.
@jax.custom_jvp
def log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), (1.0 - 1.0 / (1.0 + jnp.exp(x))) * t


def log1pexp_naive(x):
    return jnp.log(1.0 + jnp.exp(x))


# A rule that is not the function's derivative, so that a result equal to
# JAX's proves the rule is what is used: sin(x)·y with the tangent of
# x³·y in x.
@jax.custom_jvp
def odd_rule(x, y):
    return jnp.sin(x) * y


@odd_rule.defjvp
def odd_rule_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return odd_rule(x, y), 3.0 * x * x * y * tx + jnp.sin(x) * ty


def odd_loss(x, y):
    return odd_rule(x, y) + x * y


# Gradient clipping in the backward pass (JAX's custom_vjp tutorial).
@jax.custom_vjp
def clip_gradient(lo, hi, x):
    return x


def clip_gradient_fwd(lo, hi, x):
    return x, (lo, hi)


def clip_gradient_bwd(res, g):
    lo, hi = res
    return (jnp.zeros_like(lo), jnp.zeros_like(hi), jnp.clip(g, lo, hi))


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


def clipped_loss(x):
    return jnp.sum(clip_gradient(-0.5, 0.5, 3.0 * jnp.sin(x)))


# A custom_vjp with a residual, whose backward pass is half the true one:
# the gradient, forward over reverse (hessian) and reverse over reverse go
# through fwd and bwd.
@jax.custom_vjp
def half_grad_softplus(x):
    return jnp.logaddexp(x, 0.0)


def half_grad_softplus_fwd(x):
    return jnp.logaddexp(x, 0.0), jax.nn.sigmoid(x)


def half_grad_softplus_bwd(s, g):
    return (0.5 * s * g,)


half_grad_softplus.defvjp(half_grad_softplus_fwd, half_grad_softplus_bwd)


def main():
    print(f"# JAX {jax.__version__}")
    xs = jnp.array([-3.0, 0.0, 2.0, 100.0, 1000.0])
    emit("log1pexp_x", xs)
    emit("log1pexp_value", jax.vmap(log1pexp)(xs))
    emit("log1pexp_grad", jax.vmap(jax.grad(log1pexp))(xs))
    emit("log1pexp_naive_grad", jax.vmap(jax.grad(log1pexp_naive))(xs))
    emit("log1pexp_hessian", jax.vmap(jax.hessian(log1pexp))(xs))
    x32 = jnp.array([100.0], dtype=jnp.float32)
    emit("log1pexp_f32_grad_100", jax.grad(log1pexp)(x32[0]))
    emit("log1pexp_naive_f32_grad_100", jax.grad(log1pexp_naive)(x32[0]))

    x, y = 0.7, -1.3
    emit("odd_x", x)
    emit("odd_y", y)
    emit("odd_value", odd_loss(x, y))
    gx, gy = jax.grad(odd_loss, argnums=(0, 1))(x, y)
    emit("odd_grad_x", gx)
    emit("odd_grad_y", gy)
    _, t = jax.jvp(odd_loss, (x, y), (0.25, -2.0))
    emit("odd_jvp_dir", jnp.array([0.25, -2.0]))
    emit("odd_jvp", t)
    emit("odd_hessian_x", jax.hessian(odd_loss, argnums=0)(x, y))
    bx = jnp.array([0.1, -0.4, 1.5, 2.2])
    emit("odd_batch_x", bx)
    emit("odd_vmap_grad_x", jax.vmap(jax.grad(odd_loss), in_axes=(0, None))(bx, y))

    cx = jnp.array([0.1, -0.8, 1.2, 2.9, -2.0])
    emit("clip_x", cx)
    emit("clip_value", clipped_loss(cx))
    emit("clip_grad", jax.grad(clipped_loss)(cx))
    emit("clip_true_grad", jax.grad(lambda x: jnp.sum(3.0 * jnp.sin(x)))(cx))
    cb = jnp.array([[0.1, -0.8, 1.2], [2.9, -2.0, 0.05]])
    emit("clip_batch", cb)
    emit("clip_vmap_grad", jax.vmap(jax.grad(clipped_loss))(cb))
    try:
        jax.jvp(clipped_loss, (cx,), (cx,))
        emit("clip_jvp_raises", 0.0)
    except TypeError:
        emit("clip_jvp_raises", 1.0)

    sx = jnp.array([-1.5, 0.0, 0.8, 3.0])
    emit("half_x", sx)
    loss = lambda x: jnp.sum(half_grad_softplus(x) * x)  # noqa: E731
    emit("half_value", loss(sx))
    emit("half_grad", jax.grad(loss)(sx))
    emit("half_hessian", jax.hessian(loss)(sx))
    emit("half_grad_of_grad", jax.grad(lambda x: jnp.sum(jax.grad(loss)(x)))(sx))
    try:
        jax.jacrev(jax.jacfwd(loss))(sx)
        emit("half_jacrev_of_jacfwd_raises", 0.0)
    except TypeError:
        emit("half_jacrev_of_jacfwd_raises", 1.0)


if __name__ == "__main__":
    main()
