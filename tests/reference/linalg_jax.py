"""JAX's values for `tests/suite/linalg.rs`: jnp.linalg.cholesky, solve, inv,
det, slogdet, jax.scipy.linalg.solve_triangular and cho_solve,
lax.linalg.triangular_solve; a loss through all of them with its gradient;
vmap over a batch of matrices; float32; the NaN factor of a matrix that is
not positive definite. Inputs are written beside the outputs.

    python3 tests/reference/linalg_jax.py > tests/reference/linalg_jax.txt

Line format: `name dims: v v ...` (float64 reprs, row-major; dims `-` for a
scalar).
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
import numpy as np  # noqa: E402


def emit(name, a):
    a = np.asarray(a, dtype=np.float64)
    dims = ",".join(map(str, a.shape)) or "-"
    print(f"{name} {dims}: " + " ".join(repr(float(v)) for v in a.ravel()))


def loss(a, b):
    s = a @ a.T
    l = jnp.linalg.cholesky(s)
    sign, logabsdet = jnp.linalg.slogdet(a)
    return (
        jnp.sum(l)
        + jnp.sum(jsl.cho_solve((l, True), b))
        + jnp.sum(jsl.solve_triangular(l, b, lower=True))
        + jnp.sum(jnp.linalg.solve(a, b) ** 2)
        + jnp.sum(jnp.linalg.inv(a))
        + jnp.linalg.det(a)
        + sign * logabsdet
    )


def main():
    print(f"# JAX {jax.__version__}")
    rng = np.random.default_rng(25)
    a = rng.uniform(-1.0, 1.0, (3, 3)) + 2.0 * np.eye(3)
    b = rng.uniform(-1.0, 1.0, (3, 2))
    bv = rng.uniform(-1.0, 1.0, (3,))
    br = rng.uniform(-1.0, 1.0, (2, 3))
    spd = a @ a.T
    emit("a", a)
    emit("b", b)
    emit("bv", bv)
    emit("br", br)
    emit("spd", spd)
    l = jnp.linalg.cholesky(spd)
    emit("cholesky_spd", l)
    emit("solve_a_b", jnp.linalg.solve(a, b))
    emit("solve_a_bv", jnp.linalg.solve(a, bv))
    emit("solve_triangular_lower", jsl.solve_triangular(l, b, lower=True))
    emit("solve_triangular_upper", jsl.solve_triangular(a, b, lower=False))
    emit(
        "triangular_solve_right_transposed",
        jax.lax.linalg.triangular_solve(
            a, br, left_side=False, lower=True, transpose_a=True, unit_diagonal=True
        ),
    )
    emit("cho_solve", jsl.cho_solve((l, True), b))
    emit("inv_a", jnp.linalg.inv(a))
    emit("det_a", jnp.linalg.det(a))
    sign, logabsdet = jnp.linalg.slogdet(-a)
    emit("slogdet_neg_a_sign", sign)
    emit("slogdet_neg_a_log", logabsdet)
    emit("loss", loss(a, b))
    ga, gb = jax.grad(loss, argnums=(0, 1))(a, b)
    emit("loss_grad_a", ga)
    emit("loss_grad_b", gb)
    batch = rng.uniform(-1.0, 1.0, (4, 3, 3)) + 2.0 * np.eye(3)
    emit("batch", batch)
    spds = jnp.einsum("kij,klj->kil", batch, batch)
    emit("vmap_cholesky", jax.vmap(jnp.linalg.cholesky)(spds))
    emit("vmap_solve", jax.vmap(jnp.linalg.solve, in_axes=(0, None))(batch, b))
    sign, logabsdet = jax.vmap(jnp.linalg.slogdet)(batch)
    emit("vmap_slogdet_sign", sign)
    emit("vmap_slogdet_log", logabsdet)
    a32 = jnp.asarray(a, dtype=jnp.float32)
    b32 = jnp.asarray(b, dtype=jnp.float32)
    emit("cholesky_f32", jnp.linalg.cholesky(a32 @ a32.T))
    emit("solve_f32", jnp.linalg.solve(a32, b32))
    not_pd = jnp.array([[1.0, 2.0], [2.0, 1.0]])
    emit("not_pd", not_pd)
    emit("cholesky_not_pd", jnp.linalg.cholesky(not_pd))


if __name__ == "__main__":
    main()
