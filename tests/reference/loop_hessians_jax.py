"""Second derivatives of loop functions by JAX, for `tests/suite/loop_hessians.rs`:
the same functions written with `lax.fori_loop` over static bounds (a scan,
which JAX differentiates twice in reverse mode), differentiated by
`jax.grad(jax.grad(..))` (reverse over reverse) and checked here against
`jax.hessian` (forward over reverse) before printing.

    python3 tests/reference/loop_hessians_jax.py > tests/reference/loop_hessians_jax.txt

Line format: `name: value value ...` (f64, `repr`).
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402


def emit(name, a):
    a = np.asarray(a, dtype=np.float64).ravel()
    print(f"{name}: " + " ".join(repr(float(v)) for v in a))


def spiral(x, n):
    def body(i, c):
        u, v = c
        t = i * 0.1
        un = u - 0.3 * jnp.sin(u * v) + t * x
        return un, v + 0.2 * jnp.tanh(un) * x

    u, v = lax.fori_loop(0, n, body, (x, 1.0))
    return u * v


def rk4(k, u0, n):
    dt = 0.05

    def rate(u):
        return -k * u + 0.5 * jnp.sin(u)

    def body(_, u):
        k1 = rate(u)
        k2 = rate(u + 0.5 * dt * k1)
        k3 = rate(u + 0.5 * dt * k2)
        k4 = rate(u + dt * k3)
        return u + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    u = lax.fori_loop(0, n, body, u0)
    return u * u


def decay(x, n):
    # oxla's `while i < n` with a counter carry: a fori_loop here.
    y = lax.fori_loop(0, n, lambda _, y: y - 0.1 * jnp.sin(y) * x, x)
    return y * y


def rayleigh(x, m, n):
    def body(_, v):
        y = m @ v
        return y / jnp.sqrt(y @ y)

    v = lax.fori_loop(0, n, body, x)
    return v @ (m @ v)


def check(a, b):
    assert np.allclose(a, b, rtol=1e-12, atol=1e-12), (a, b)


def main():
    print(f"# JAX {jax.__version__}")
    for n in [0, 1, 5]:
        for x in [-0.7, 0.4, 1.1]:
            f = lambda x: spiral(x, n)  # noqa: E731
            d2 = jax.grad(jax.grad(f))(x)
            check(d2, jax.hessian(f)(x))
            emit(f"spiral n={n} x={x}", d2)
    for k, u0 in [(0.7, 1.2), (1.5, -0.4)]:
        f = lambda k, u0: rk4(k, u0, 20)  # noqa: E731
        d2 = jax.grad(jax.grad(f, 0), (0, 1))(k, u0)
        check(np.array(d2), jax.hessian(f, (0, 1))(k, u0)[0])
        emit(f"rk4 k={k} u0={u0}", d2)
    for n in [0, 3, 8]:
        for x in [0.5, 1.3]:
            f = lambda x: decay(x, n)  # noqa: E731
            d2 = jax.grad(jax.grad(f))(x)
            check(d2, jax.hessian(f)(x))
            emit(f"decay n={n} x={x}", d2)
    x = jnp.array([0.3, -1.0, 0.8])
    m = jnp.array([[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, 0.5]])
    u = jnp.array([1.0, 0.5, -2.0])
    for n in [0, 1, 4]:
        g = jax.grad(rayleigh)
        hvp = jax.grad(lambda x: g(x, m, n) @ u)(x)
        full = jax.jacrev(g)(x, m, n)
        check(full, jax.hessian(rayleigh)(x, m, n))
        check(hvp, full @ u)
        emit(f"rayleigh hvp n={n}", hvp)
        emit(f"rayleigh hessian n={n}", full)


if __name__ == "__main__":
    main()
