"""JAX's values for oxla's functional-update tests (`tests/suite/updates.rs`).

Run with 64-bit floats:

    python3 updates_jax.py > updates_jax.txt

Each line is `name shape: v0 v1 ...` (row-major, repr of f64). The inputs
are closed forms (`grid`) the Rust test computes the same way; each
function is the one the Rust test writes with `x[i] = v`, `x[i] += v`,
`x.slice_mut(s![..]).assign(&y)`, windows `s![k..k + w]` and a loop that
writes `hs[t] = h`, here in JAX's spelling (`.at[]`, `lax.dynamic_slice`,
`lax.dynamic_update_slice`, `lax.scan`).
"""
import math
import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
from jax import lax


def grid(shape, f):
    """An array whose element at flat index q is f(q)."""
    n = math.prod(shape)
    return jnp.array([f(q) for q in range(n)], dtype=jnp.float64).reshape(shape)


def out(name, a):
    a = jnp.asarray(a, dtype=jnp.float64)
    vals = " ".join(repr(float(v)) for v in a.reshape(-1))
    print(f"{name} {','.join(str(d) for d in a.shape)}: {vals}")


X = grid((6,), lambda q: math.sin(0.9 * q + 0.4))
M = grid((4, 3), lambda q: math.cos(0.7 * q - 0.3))
R = grid((3,), lambda q: 0.5 - 0.3 * q)
Y = grid((3,), lambda q: math.sin(1.3 * q + 0.2))
Z = grid((8,), lambda q: math.cos(0.6 * q + 0.1))


# ---- elements ------------------------------------------------------------------

def elements(x, i):
    y = x.at[i].set(x[0] * 3.0)
    y = y.at[2].add(jnp.sin(x[1]))
    y = y.at[0].multiply(x[3])
    y = y.at[5].add(-x[2])  # `y[5] -= x[2]`
    y = y.at[i].max(x[4])  # `y[i] = y[i].max(x[4])`
    return jnp.sum(y * jnp.sin(y))


for i in (1, 3):
    out(f"elements.{i}.value", elements(X, i))
    out(f"elements.{i}.grad", jax.grad(elements)(X, i))


def matrix(m, r, i, j):
    a = m.at[i].set(jnp.sin(r))
    a = a.at[j, i].add(-(m[i, j] * 2.0))
    a = a.at[0, 1].set(5.0)
    a = a.at[j].multiply(r)
    return jnp.sum(a * a) + a[i, j] * a[j, 0]


for i, j in ((2, 1), (0, 2)):
    out(f"matrix.{i}{j}.value", matrix(M, R, i, j))
    gm, gr = jax.grad(matrix, argnums=(0, 1))(M, R, i, j)
    out(f"matrix.{i}{j}.grad_m", gm)
    out(f"matrix.{i}{j}.grad_r", gr)


def computed(x, i):
    # Indices computed in the body: `i + 5` out of range writes nothing,
    # `i - 3` negative is wrapped once (JAX's scatter rules).
    y = x.at[i + 5].set(100.0)
    y = y.at[i - 3].set(x[0] * x[1])
    return jnp.sum(y * y * jnp.arange(1.0, 7.0))


out("computed.value", computed(X, 1))
out("computed.grad", jax.grad(computed)(X, 1))


# ---- slices --------------------------------------------------------------------

def slices(z, y):
    w = z.at[1:4].set(y * 2.0)
    w = w.at[4::2].set(jnp.exp(y[:2]))
    return jnp.sum(w * jnp.cos(w))


out("slices.value", slices(Z, Y))
gz, gy = jax.grad(slices, argnums=(0, 1))(Z, Y)
out("slices.grad_z", gz)
out("slices.grad_y", gy)


def update_window(z, y, k):
    w = lax.dynamic_update_slice(z, jnp.sin(y), (k,))
    return jnp.sum(w * w * jnp.arange(1.0, 9.0))


def read_window(z, k):
    return jnp.sum(lax.dynamic_slice(z, (k,), (3,)) * jnp.array([1.0, -2.0, 0.5]))


for k in (2, -2, 7):
    out(f"update_window.{k}.value", update_window(Z, Y, k))
    gz, gy = jax.grad(update_window, argnums=(0, 1))(Z, Y, k)
    out(f"update_window.{k}.grad_z", gz)
    out(f"update_window.{k}.grad_y", gy)
    out(f"read_window.{k}.value", read_window(Z, k))
    out(f"read_window.{k}.grad", jax.grad(read_window)(Z, k))


# ---- a loop that writes `hs[t] = h`: lax.scan with stacked outputs ----------------

W = grid((3, 3), lambda q: 0.4 * math.sin(1.1 * q + 0.5))
U = grid((3, 2), lambda q: 0.6 * math.cos(0.8 * q - 0.2))
XS = grid((5, 2), lambda q: math.sin(0.5 * q) + 0.1 * q)


def rnn(w, u, xs):
    def step(h, x):
        h = jnp.tanh(w @ h + u @ x)
        return h, h

    _, hs = lax.scan(step, jnp.zeros(3), xs)
    return jnp.sum(hs * jnp.sin(hs)) + jnp.sum(hs[-1])


out("rnn.value", rnn(W, U, XS))
gw, gu = jax.grad(rnn, argnums=(0, 1))(W, U, XS)
out("rnn.grad_w", gw)
out("rnn.grad_u", gu)
