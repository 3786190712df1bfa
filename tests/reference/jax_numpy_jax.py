"""JAX's values for `tests/suite/jax_numpy.rs`: every supported row of
the jax.numpy / lax name table (`docs/JAX_NUMPY.md`) evaluated on fixed
inputs, and the gradient of the sum of each differentiable one.

Generated from `macros/lower/src/lower/vocab/jax_names.rs` by
`OXLA_BLESS=1 cargo test -p oxla-lower jax_table`: edit the rows there, then

    python3 tests/reference/jax_numpy_jax.py > tests/reference/jax_numpy_jax.txt

Line format: `name dims: v v ...` (float64 reprs, row-major; dims `-` for a
scalar); a tuple's parts are joined, booleans and integers written as floats.
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import jax.scipy.special  # noqa: E402,F401
import jax.scipy.linalg  # noqa: E402,F401
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402


def emit(name, a):
    if isinstance(a, tuple):
        a = np.concatenate([np.asarray(p, dtype=np.float64).ravel() for p in a])
    a = np.asarray(a, dtype=np.float64)
    dims = ",".join(map(str, a.shape)) or "-"
    print(f"{name} {dims}: " + " ".join(repr(float(v)) for v in a.ravel()))


def main():
    print(f"# JAX {jax.__version__}")
    x = jnp.asarray(0.15 + 0.12 * np.arange(6.0))
    y = jnp.asarray(1.3 - 0.17 * np.arange(6.0))
    m = jnp.asarray(np.sin(0.7 * np.arange(12.0) + 0.3).reshape(3, 4))
    a = jnp.asarray(0.3 * np.cos(0.9 * np.arange(9.0)).reshape(3, 3) + 2.0 * np.eye(3))
    n = jnp.asarray(np.cos(0.4 * np.arange(8.0) + 0.2).reshape(4, 2))
    v = jnp.asarray(np.sin(1.1 * np.arange(4.0)) + 0.5)
    idx = jnp.asarray([2, 0, 3])
    i = 2
    k = 2
    w = 0.7
    emit("input.x", x)
    emit("input.y", y)
    emit("input.m", m)
    emit("input.a", a)
    emit("input.n", n)
    emit("input.v", v)
    emit("input.idx", idx)
    emit("input.i", i)
    emit("input.k", k)
    emit("input.w", w)
    # jnp.sin
    emit("jnp_sin", jnp.sin(x))
    emit("jnp_sin.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.sin(x))))(x))
    # jnp.cos
    emit("jnp_cos", jnp.cos(x))
    emit("jnp_cos.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.cos(x))))(x))
    # jnp.tan
    emit("jnp_tan", jnp.tan(x))
    emit("jnp_tan.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.tan(x))))(x))
    # jnp.tanh
    emit("jnp_tanh", jnp.tanh(m))
    emit("jnp_tanh.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.tanh(m))))(m))
    # jnp.sinh
    emit("jnp_sinh", jnp.sinh(m))
    emit("jnp_sinh.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.sinh(m))))(m))
    # jnp.cosh
    emit("jnp_cosh", jnp.cosh(m))
    emit("jnp_cosh.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.cosh(m))))(m))
    # jnp.exp
    emit("jnp_exp", jnp.exp(m))
    emit("jnp_exp.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.exp(m))))(m))
    # jnp.exp2
    emit("jnp_exp2", jnp.exp2(x))
    emit("jnp_exp2.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.exp2(x))))(x))
    # jnp.expm1
    emit("jnp_expm1", 2.0 * jnp.expm1(m))
    emit("jnp_expm1.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(2.0 * jnp.expm1(m))))(m))
    # jnp.log
    emit("jnp_log", jnp.log(x))
    emit("jnp_log.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.log(x))))(x))
    # jnp.log2
    emit("jnp_log2", jnp.log2(x))
    emit("jnp_log2.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.log2(x))))(x))
    # jnp.log10
    emit("jnp_log10", jnp.log10(x))
    emit("jnp_log10.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.log10(x))))(x))
    # jnp.log1p
    emit("jnp_log1p", 2.0 * jnp.log1p(m))
    emit("jnp_log1p.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(2.0 * jnp.log1p(m))))(m))
    # jnp.sqrt
    emit("jnp_sqrt", jnp.sqrt(x))
    emit("jnp_sqrt.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.sqrt(x))))(x))
    # jnp.square
    emit("jnp_square", jnp.square(m))
    emit("jnp_square.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.square(m))))(m))
    # jnp.reciprocal
    emit("jnp_reciprocal", jnp.reciprocal(x))
    emit("jnp_reciprocal.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.reciprocal(x))))(x))
    # jnp.abs
    emit("jnp_abs", jnp.abs(m))
    emit("jnp_abs.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.abs(m))))(m))
    # jnp.absolute
    emit("jnp_absolute", jnp.absolute(m) * 2.0)
    emit("jnp_absolute.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.absolute(m) * 2.0)))(m))
    # jnp.negative
    emit("jnp_negative", jnp.negative(m))
    emit("jnp_negative.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.negative(m))))(m))
    # jnp.add
    emit("jnp_add", jnp.add(m, v))
    emit("jnp_add.grad", jax.grad(lambda m, v: jnp.sum(jnp.asarray(jnp.add(m, v))))(m, v))
    # jnp.subtract
    emit("jnp_subtract", jnp.subtract(x, y))
    emit("jnp_subtract.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(jnp.subtract(x, y))))(x, y))
    # jnp.multiply
    emit("jnp_multiply", jnp.multiply(x, y))
    emit("jnp_multiply.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(jnp.multiply(x, y))))(x, y))
    # jnp.divide
    emit("jnp_divide", jnp.divide(x, y))
    emit("jnp_divide.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(jnp.divide(x, y))))(x, y))
    # jnp.true_divide
    emit("jnp_true_divide", jnp.true_divide(y, x))
    emit("jnp_true_divide.grad", jax.grad(lambda y, x: jnp.sum(jnp.asarray(jnp.true_divide(y, x))))(y, x))
    # jnp.power
    emit("jnp_power", 3.0 * jnp.power(x, y))
    emit("jnp_power.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(3.0 * jnp.power(x, y))))(x, y))
    # lax.integer_pow
    emit("lax_integer_pow", lax.integer_pow(m, 3))
    emit("lax_integer_pow.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(lax.integer_pow(m, 3))))(m))
    # jnp.maximum
    emit("jnp_maximum", jnp.maximum(x, y))
    emit("jnp_maximum.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(jnp.maximum(x, y))))(x, y))
    # jnp.minimum
    emit("jnp_minimum", jnp.minimum(x, y))
    emit("jnp_minimum.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(jnp.minimum(x, y))))(x, y))
    # jnp.clip
    emit("jnp_clip", 2.0 * jnp.clip(m, -0.5, 0.5))
    emit("jnp_clip.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(2.0 * jnp.clip(m, -0.5, 0.5))))(m))
    # jnp.sign
    emit("jnp_sign", 2.0 * jnp.sign(m))
    emit("jnp_sign.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(2.0 * jnp.sign(m))))(m))
    # jnp.floor
    emit("jnp_floor", jnp.floor(m * 3.0))
    emit("jnp_floor.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.floor(m * 3.0))))(m))
    # jnp.ceil
    emit("jnp_ceil", jnp.ceil(m * 3.0))
    emit("jnp_ceil.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.ceil(m * 3.0))))(m))
    # jnp.round
    emit("jnp_round", 2.0 * jnp.round(m * 3.0))
    emit("jnp_round.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(2.0 * jnp.round(m * 3.0))))(m))
    # jnp.trunc
    emit("jnp_trunc", jnp.trunc(m * 3.0))
    emit("jnp_trunc.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.trunc(m * 3.0))))(m))
    # jnp.fmod
    emit("jnp_fmod", jnp.fmod(y, x))
    emit("jnp_fmod.grad", jax.grad(lambda y, x: jnp.sum(jnp.asarray(jnp.fmod(y, x))))(y, x))
    # jnp.remainder
    emit("jnp_remainder", jnp.remainder(y, x))
    emit("jnp_remainder.grad", jax.grad(lambda y, x: jnp.sum(jnp.asarray(jnp.remainder(y, x))))(y, x))
    # jnp.floor_divide
    emit("jnp_floor_divide", jnp.floor_divide(y, x))
    emit("jnp_floor_divide.grad", jax.grad(lambda y, x: jnp.sum(jnp.asarray(jnp.floor_divide(y, x))))(y, x))
    # jnp.logaddexp
    emit("jnp_logaddexp", jnp.logaddexp(m, v))
    emit("jnp_logaddexp.grad", jax.grad(lambda m, v: jnp.sum(jnp.asarray(jnp.logaddexp(m, v))))(m, v))
    # jnp.hypot
    emit("jnp_hypot", jnp.hypot(x, y))
    emit("jnp_hypot.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(jnp.hypot(x, y))))(x, y))
    # jnp.deg2rad
    emit("jnp_deg2rad", jnp.deg2rad(x))
    emit("jnp_deg2rad.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.deg2rad(x))))(x))
    # lax.erf
    emit("lax_erf", lax.erf(m))
    emit("lax_erf.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(lax.erf(m))))(m))
    # lax.erf_inv
    emit("lax_erf_inv", lax.erf_inv(x))
    emit("lax_erf_inv.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.erf_inv(x))))(x))
    # lax.rsqrt
    emit("lax_rsqrt", lax.rsqrt(x))
    emit("lax_rsqrt.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.rsqrt(x))))(x))
    # jnp.isnan
    emit("jnp_isnan", jnp.isnan(jnp.log(m)))
    # jnp.greater
    emit("jnp_greater", jnp.greater(x, y))
    # jnp.greater_equal
    emit("jnp_greater_equal", jnp.greater_equal(x, y))
    # jnp.less
    emit("jnp_less", jnp.less(x, y))
    # jnp.less_equal
    emit("jnp_less_equal", jnp.less_equal(x, y))
    # jnp.equal
    emit("jnp_equal", jnp.equal(jnp.floor(x * 4.0), jnp.floor(y * 4.0)))
    # jnp.not_equal
    emit("jnp_not_equal", jnp.not_equal(x, y))
    # jax.nn.relu
    emit("jax_nn_relu", jax.nn.relu(m))
    emit("jax_nn_relu.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jax.nn.relu(m))))(m))
    # jax.nn.sigmoid
    emit("jax_nn_sigmoid", jax.nn.sigmoid(m))
    emit("jax_nn_sigmoid.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jax.nn.sigmoid(m))))(m))
    # jax.nn.softplus
    emit("jax_nn_softplus", jax.nn.softplus(m))
    emit("jax_nn_softplus.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jax.nn.softplus(m))))(m))
    # jax.nn.log_sigmoid
    emit("jax_nn_log_sigmoid", jax.nn.log_sigmoid(m))
    emit("jax_nn_log_sigmoid.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jax.nn.log_sigmoid(m))))(m))
    # jax.nn.silu
    emit("jax_nn_silu", jax.nn.silu(m))
    emit("jax_nn_silu.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jax.nn.silu(m))))(m))
    # jax.nn.gelu
    emit("jax_nn_gelu", jax.nn.gelu(m, approximate=False))
    emit("jax_nn_gelu.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jax.nn.gelu(m, approximate=False))))(m))
    # jax.nn.elu
    emit("jax_nn_elu", jax.nn.elu(m))
    emit("jax_nn_elu.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jax.nn.elu(m))))(m))
    # jax.nn.leaky_relu
    emit("jax_nn_leaky_relu", jax.nn.leaky_relu(m, 0.01))
    emit("jax_nn_leaky_relu.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jax.nn.leaky_relu(m, 0.01))))(m))
    # jax.nn.relu6
    emit("jax_nn_relu6", jax.nn.relu6(m * 8.0))
    emit("jax_nn_relu6.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jax.nn.relu6(m * 8.0))))(m))
    # jax.nn.softmax
    emit("jax_nn_softmax", jax.nn.softmax(m, axis=1))
    emit("jax_nn_softmax.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jax.nn.softmax(m, axis=1))))(m))
    # jax.nn.log_softmax
    emit("jax_nn_log_softmax", jax.nn.log_softmax(m, axis=0))
    emit("jax_nn_log_softmax.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jax.nn.log_softmax(m, axis=0))))(m))
    # jax.nn.logsumexp
    emit("jax_nn_logsumexp", jax.nn.logsumexp(m, axis=1))
    emit("jax_nn_logsumexp.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jax.nn.logsumexp(m, axis=1))))(m))
    # jax.scipy.special.logsumexp
    emit("jax_scipy_special_logsumexp", jax.scipy.special.logsumexp(m))
    emit("jax_scipy_special_logsumexp.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jax.scipy.special.logsumexp(m))))(m))
    # jax.nn.one_hot
    emit("jax_nn_one_hot", jax.nn.one_hot(idx, 4))
    # jax.nn.standardize
    emit("jax_nn_standardize", jax.nn.standardize(x, epsilon=1e-5))
    emit("jax_nn_standardize.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jax.nn.standardize(x, epsilon=1e-5))))(x))
    # jnp.sum
    emit("jnp_sum", 3.0 * jnp.sum(m))
    emit("jnp_sum.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(3.0 * jnp.sum(m))))(m))
    # jnp.mean
    emit("jnp_mean", jnp.mean(m, axis=1) + 2.0 * jnp.mean(m))
    emit("jnp_mean.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.mean(m, axis=1) + 2.0 * jnp.mean(m))))(m))
    # jnp.average
    emit("jnp_average", jnp.average(x))
    emit("jnp_average.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.average(x))))(x))
    # jnp.max
    emit("jnp_max", jnp.max(m, axis=0) + 2.0 * jnp.max(m))
    emit("jnp_max.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.max(m, axis=0) + 2.0 * jnp.max(m))))(m))
    # jnp.min
    emit("jnp_min", jnp.min(m, axis=1) + 2.0 * jnp.min(m))
    emit("jnp_min.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.min(m, axis=1) + 2.0 * jnp.min(m))))(m))
    # jnp.amax
    emit("jnp_amax", jnp.amax(x))
    emit("jnp_amax.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.amax(x))))(x))
    # jnp.amin
    emit("jnp_amin", jnp.amin(x))
    emit("jnp_amin.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.amin(x))))(x))
    # jnp.prod
    emit("jnp_prod", 3.0 * jnp.prod(m, axis=0) + 2.0 * jnp.prod(m))
    emit("jnp_prod.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(3.0 * jnp.prod(m, axis=0) + 2.0 * jnp.prod(m))))(m))
    # jnp.cumsum
    emit("jnp_cumsum", 2.0 * jnp.cumsum(m, axis=1))
    emit("jnp_cumsum.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(2.0 * jnp.cumsum(m, axis=1))))(m))
    # jnp.cumprod
    emit("jnp_cumprod", 2.0 * jnp.cumprod(m, axis=0))
    emit("jnp_cumprod.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(2.0 * jnp.cumprod(m, axis=0))))(m))
    # jnp.var
    emit("jnp_var", jnp.var(m, axis=1, ddof=1) + jnp.var(m))
    emit("jnp_var.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.var(m, axis=1, ddof=1) + jnp.var(m))))(m))
    # jnp.std
    emit("jnp_std", jnp.std(m, axis=0) + jnp.std(m, ddof=1))
    emit("jnp_std.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.std(m, axis=0) + jnp.std(m, ddof=1))))(m))
    # jnp.ptp
    emit("jnp_ptp", jnp.ptp(x))
    emit("jnp_ptp.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.ptp(x))))(x))
    # jnp.median
    emit("jnp_median", jnp.median(x))
    emit("jnp_median.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.median(x))))(x))
    # jnp.argmax
    emit("jnp_argmax", jnp.argmax(m, axis=1))
    # jnp.argmin
    emit("jnp_argmin", jnp.argmin(m))
    # jnp.sort
    emit("jnp_sort", jnp.sort(m, axis=0))
    emit("jnp_sort.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.sort(m, axis=0))))(m))
    # jnp.argsort
    emit("jnp_argsort", jnp.argsort(m))
    # lax.sort
    emit("lax_sort", lax.sort(x * -1.0))
    emit("lax_sort.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.sort(x * -1.0))))(x))
    # lax.top_k
    emit("lax_top_k", lax.top_k(m, 2))
    # jnp.reshape
    emit("jnp_reshape", 3.0 * jnp.reshape(m, (4, 3)))
    emit("jnp_reshape.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(3.0 * jnp.reshape(m, (4, 3)))))(m))
    # jnp.ravel
    emit("jnp_ravel", 2.0 * jnp.ravel(m))
    emit("jnp_ravel.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(2.0 * jnp.ravel(m))))(m))
    # jnp.transpose
    emit("jnp_transpose", 3.0 * jnp.transpose(m))
    emit("jnp_transpose.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(3.0 * jnp.transpose(m))))(m))
    # jnp.swapaxes
    emit("jnp_swapaxes", 2.0 * jnp.swapaxes(m, 0, 1))
    emit("jnp_swapaxes.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(2.0 * jnp.swapaxes(m, 0, 1))))(m))
    # jnp.moveaxis
    emit("jnp_moveaxis", jnp.moveaxis(m, 0, 1))
    emit("jnp_moveaxis.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.moveaxis(m, 0, 1))))(m))
    # jnp.expand_dims
    emit("jnp_expand_dims", 2.0 * jnp.expand_dims(x, 0))
    emit("jnp_expand_dims.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(2.0 * jnp.expand_dims(x, 0))))(x))
    # jnp.squeeze
    emit("jnp_squeeze", 3.0 * jnp.squeeze(jnp.expand_dims(x, 1)))
    emit("jnp_squeeze.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(3.0 * jnp.squeeze(jnp.expand_dims(x, 1)))))(x))
    # jnp.broadcast_to
    emit("jnp_broadcast_to", 2.0 * jnp.broadcast_to(x, (3, 6)))
    emit("jnp_broadcast_to.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(2.0 * jnp.broadcast_to(x, (3, 6)))))(x))
    # jnp.tile
    emit("jnp_tile", jnp.tile(m, (2, 1)))
    emit("jnp_tile.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.tile(m, (2, 1)))))(m))
    # jnp.repeat
    emit("jnp_repeat", jnp.repeat(m, 2, axis=1))
    emit("jnp_repeat.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.repeat(m, 2, axis=1))))(m))
    # jnp.concatenate
    emit("jnp_concatenate", jnp.concatenate([x, y]))
    emit("jnp_concatenate.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(jnp.concatenate([x, y]))))(x, y))
    # jnp.hstack
    emit("jnp_hstack", jnp.hstack([x, y]))
    emit("jnp_hstack.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(jnp.hstack([x, y]))))(x, y))
    # jnp.vstack
    emit("jnp_vstack", jnp.vstack([x, y]))
    emit("jnp_vstack.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(jnp.vstack([x, y]))))(x, y))
    # jnp.stack
    emit("jnp_stack", jnp.stack([x, y], axis=1))
    emit("jnp_stack.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(jnp.stack([x, y], axis=1))))(x, y))
    # jnp.roll
    emit("jnp_roll", jnp.roll(m, 3, axis=1))
    emit("jnp_roll.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.roll(m, 3, axis=1))))(m))
    # jnp.asarray
    emit("jnp_asarray", 2.0 * jnp.asarray(m))
    emit("jnp_asarray.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(2.0 * jnp.asarray(m))))(m))
    # jnp.copy
    emit("jnp_copy", 2.0 * jnp.copy(m))
    emit("jnp_copy.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(2.0 * jnp.copy(m))))(m))
    # jnp.shape
    emit("jnp_shape", m.shape[1] * 1000 + m.shape[0] * 100 + m.shape[0] * 10 + m.shape[1])
    # len
    emit("py_len", len(x))
    # jnp.size
    emit("jnp_size", jnp.size(m))
    # x[i]
    emit("py_x_i", x[i] * 2.0)
    emit("py_x_i.grad", jax.grad(lambda x, i: jnp.sum(jnp.asarray(x[i] * 2.0)))(x, i))
    # x[i, j]
    emit("py_x_i_j", m[i, 1] * 2.0)
    emit("py_x_i_j.grad", jax.grad(lambda m, i: jnp.sum(jnp.asarray(m[i, 1] * 2.0)))(m, i))
    # x[i, :]
    emit("py_x_i_s", m[i, :] + m[:1, i])
    emit("py_x_i_s.grad", jax.grad(lambda m, i: jnp.sum(jnp.asarray(m[i, :] + m[:1, i])))(m, i))
    # x[a:b:c]
    emit("py_x_asbsc", m[1:, ::2] + m[0:2, 1:3])
    emit("py_x_asbsc.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(m[1:, ::2] + m[0:2, 1:3])))(m))
    # x[None]
    emit("py_x_none", x[None])
    emit("py_x_none.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(x[None])))(x))
    # x[idx]
    emit("py_x_idx", m[:, idx])
    emit("py_x_idx.grad", jax.grad(lambda m, idx: jnp.sum(jnp.asarray(m[:, idx])))(m, idx))
    # jnp.take
    emit("jnp_take", jnp.take(x, idx, axis=0))
    emit("jnp_take.grad", jax.grad(lambda x, idx: jnp.sum(jnp.asarray(jnp.take(x, idx, axis=0))))(x, idx))
    # jnp.take_along_axis
    emit("jnp_take_along_axis", jnp.take_along_axis(m, idx[:, None], axis=1)[:, 0])
    emit("jnp_take_along_axis.grad", jax.grad(lambda m, idx: jnp.sum(jnp.asarray(jnp.take_along_axis(m, idx[:, None], axis=1)[:, 0])))(m, idx))
    # x.at[i].set
    emit("py_x_at_i_set", x.at[i].set(x[0] * 3.0))
    emit("py_x_at_i_set.grad", jax.grad(lambda x, i: jnp.sum(jnp.asarray(x.at[i].set(x[0] * 3.0))))(x, i))
    # x.at[i].add
    emit("py_x_at_i_add", x.at[i].add(jnp.sin(x[1])))
    emit("py_x_at_i_add.grad", jax.grad(lambda x, i: jnp.sum(jnp.asarray(x.at[i].add(jnp.sin(x[1])))))(x, i))
    # x.at[i].multiply
    emit("py_x_at_i_multiply", x.at[i].multiply(x[4]))
    emit("py_x_at_i_multiply.grad", jax.grad(lambda x, i: jnp.sum(jnp.asarray(x.at[i].multiply(x[4]))))(x, i))
    # x.at[a:b].set
    emit("py_x_at_asb_set", x.at[1:4].set(y[:3] * 2.0))
    emit("py_x_at_asb_set.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(x.at[1:4].set(y[:3] * 2.0))))(x, y))
    # lax.dynamic_slice
    emit("lax_dynamic_slice", lax.dynamic_slice(x, (k,), (3,)))
    emit("lax_dynamic_slice.grad", jax.grad(lambda x, k: jnp.sum(jnp.asarray(lax.dynamic_slice(x, (k,), (3,)))))(x, k))
    # lax.dynamic_update_slice
    emit("lax_dynamic_update_slice", lax.dynamic_update_slice(x, y[:3], (k,)))
    emit("lax_dynamic_update_slice.grad", jax.grad(lambda x, y, k: jnp.sum(jnp.asarray(lax.dynamic_update_slice(x, y[:3], (k,)))))(x, y, k))
    # jnp.zeros
    emit("jnp_zeros", m + jnp.zeros((3, 4)))
    emit("jnp_zeros.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(m + jnp.zeros((3, 4)))))(m))
    # jnp.ones
    emit("jnp_ones", m * jnp.ones((3, 4)))
    emit("jnp_ones.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(m * jnp.ones((3, 4)))))(m))
    # jnp.full
    emit("jnp_full", jnp.full((2, 3), x[1]))
    emit("jnp_full.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.full((2, 3), x[1]))))(x))
    # jnp.zeros_like
    emit("jnp_zeros_like", jnp.zeros_like(x) + x)
    emit("jnp_zeros_like.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.zeros_like(x) + x)))(x))
    # jnp.ones_like
    emit("jnp_ones_like", jnp.ones_like(x) * x)
    emit("jnp_ones_like.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.ones_like(x) * x)))(x))
    # jnp.full_like
    emit("jnp_full_like", jnp.full_like(x, x[2]))
    emit("jnp_full_like.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.full_like(x, x[2]))))(x))
    # jnp.arange
    emit("jnp_arange", jnp.arange(6) * x)
    emit("jnp_arange.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.arange(6) * x)))(x))
    # jnp.linspace
    emit("jnp_linspace", jnp.linspace(0.0, 1.0, 6) + x)
    emit("jnp_linspace.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.linspace(0.0, 1.0, 6) + x)))(x))
    # jnp.eye
    emit("jnp_eye", jnp.eye(3) * a)
    emit("jnp_eye.grad", jax.grad(lambda a: jnp.sum(jnp.asarray(jnp.eye(3) * a)))(a))
    # jnp.identity
    emit("jnp_identity", jnp.identity(3) + a)
    emit("jnp_identity.grad", jax.grad(lambda a: jnp.sum(jnp.asarray(jnp.identity(3) + a)))(a))
    # jnp.where
    emit("jnp_where", jnp.where(x < y, x * 2.0, y) + jnp.where(x > y, x, y))
    emit("jnp_where.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(jnp.where(x < y, x * 2.0, y) + jnp.where(x > y, x, y))))(x, y))
    # jnp.meshgrid
    emit("jnp_meshgrid", (lambda g: g[0] * g[1] + g[0])(jnp.meshgrid(x, v)))
    emit("jnp_meshgrid.grad", jax.grad(lambda x, v: jnp.sum(jnp.asarray((lambda g: g[0] * g[1] + g[0])(jnp.meshgrid(x, v)))))(x, v))
    # jnp.dot
    emit("jnp_dot", 2.0 * jnp.dot(m, v))
    emit("jnp_dot.grad", jax.grad(lambda m, v: jnp.sum(jnp.asarray(2.0 * jnp.dot(m, v))))(m, v))
    # jnp.matmul
    emit("jnp_matmul", jnp.matmul(m, n))
    emit("jnp_matmul.grad", jax.grad(lambda m, n: jnp.sum(jnp.asarray(jnp.matmul(m, n))))(m, n))
    # a @ b
    emit("py_a_matmul_b", m @ n)
    emit("py_a_matmul_b.grad", jax.grad(lambda m, n: jnp.sum(jnp.asarray(m @ n)))(m, n))
    # jnp.vdot
    emit("jnp_vdot", jnp.vdot(x, y))
    emit("jnp_vdot.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(jnp.vdot(x, y))))(x, y))
    # jnp.inner
    emit("jnp_inner", jnp.inner(y, x))
    emit("jnp_inner.grad", jax.grad(lambda y, x: jnp.sum(jnp.asarray(jnp.inner(y, x))))(y, x))
    # jnp.outer
    emit("jnp_outer", jnp.outer(x, v))
    emit("jnp_outer.grad", jax.grad(lambda x, v: jnp.sum(jnp.asarray(jnp.outer(x, v))))(x, v))
    # jnp.einsum
    emit("jnp_einsum", jnp.einsum('ij,jk->ki', m, n))
    emit("jnp_einsum.grad", jax.grad(lambda m, n: jnp.sum(jnp.asarray(jnp.einsum('ij,jk->ki', m, n))))(m, n))
    # jnp.tensordot
    emit("jnp_tensordot", jnp.tensordot(m, a, axes=([0], [0])))
    emit("jnp_tensordot.grad", jax.grad(lambda m, a: jnp.sum(jnp.asarray(jnp.tensordot(m, a, axes=([0], [0])))))(m, a))
    # lax.dot_general
    emit("lax_dot_general", lax.dot_general(m, n, (([1], [0]), ([], []))))
    emit("lax_dot_general.grad", jax.grad(lambda m, n: jnp.sum(jnp.asarray(lax.dot_general(m, n, (([1], [0]), ([], []))))))(m, n))
    # jnp.linalg.norm
    emit("jnp_linalg_norm", jnp.linalg.norm(m, axis=1) + jnp.linalg.norm(m))
    emit("jnp_linalg_norm.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(jnp.linalg.norm(m, axis=1) + jnp.linalg.norm(m))))(m))
    # jnp.diag
    emit("jnp_diag", jnp.diag(x))
    emit("jnp_diag.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(jnp.diag(x))))(x))
    # jnp.diagonal
    emit("jnp_diagonal", 2.0 * jnp.diagonal(m))
    emit("jnp_diagonal.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(2.0 * jnp.diagonal(m))))(m))
    # jnp.trace
    emit("jnp_trace", jnp.trace(a))
    emit("jnp_trace.grad", jax.grad(lambda a: jnp.sum(jnp.asarray(jnp.trace(a))))(a))
    # jnp.linalg.cholesky
    emit("jnp_linalg_cholesky", jnp.linalg.cholesky(a @ a.T))
    emit("jnp_linalg_cholesky.grad", jax.grad(lambda a: jnp.sum(jnp.asarray(jnp.linalg.cholesky(a @ a.T))))(a))
    # jnp.linalg.solve
    emit("jnp_linalg_solve", jnp.linalg.solve(a, m))
    emit("jnp_linalg_solve.grad", jax.grad(lambda a, m: jnp.sum(jnp.asarray(jnp.linalg.solve(a, m))))(a, m))
    # jnp.linalg.inv
    emit("jnp_linalg_inv", jnp.linalg.inv(a))
    emit("jnp_linalg_inv.grad", jax.grad(lambda a: jnp.sum(jnp.asarray(jnp.linalg.inv(a))))(a))
    # jnp.linalg.det
    emit("jnp_linalg_det", jnp.linalg.det(a))
    emit("jnp_linalg_det.grad", jax.grad(lambda a: jnp.sum(jnp.asarray(jnp.linalg.det(a))))(a))
    # jnp.linalg.slogdet
    emit("jnp_linalg_slogdet", jnp.linalg.slogdet(a)[0] * jnp.linalg.slogdet(a)[1])
    emit("jnp_linalg_slogdet.grad", jax.grad(lambda a: jnp.sum(jnp.asarray(jnp.linalg.slogdet(a)[0] * jnp.linalg.slogdet(a)[1])))(a))
    # jax.scipy.linalg.solve_triangular
    emit("jax_scipy_linalg_solve_triangular", jax.scipy.linalg.solve_triangular(a, m, lower=True))
    emit("jax_scipy_linalg_solve_triangular.grad", jax.grad(lambda a, m: jnp.sum(jnp.asarray(jax.scipy.linalg.solve_triangular(a, m, lower=True))))(a, m))
    # jax.scipy.linalg.cho_solve
    emit("jax_scipy_linalg_cho_solve", jax.scipy.linalg.cho_solve((jnp.linalg.cholesky(a @ a.T), True), m))
    emit("jax_scipy_linalg_cho_solve.grad", jax.grad(lambda a, m: jnp.sum(jnp.asarray(jax.scipy.linalg.cho_solve((jnp.linalg.cholesky(a @ a.T), True), m))))(a, m))
    # lax.linalg.triangular_solve
    emit("lax_linalg_triangular_solve", lax.linalg.triangular_solve(a, m, left_side=True, lower=False, transpose_a=True))
    emit("lax_linalg_triangular_solve.grad", jax.grad(lambda a, m: jnp.sum(jnp.asarray(lax.linalg.triangular_solve(a, m, left_side=True, lower=False, transpose_a=True))))(a, m))
    # lax.fori_loop
    emit("lax_fori_loop", lax.fori_loop(0, 4, lambda t, c: c + x[t] * x[t + 1], 0.0))
    emit("lax_fori_loop.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.fori_loop(0, 4, lambda t, c: c + x[t] * x[t + 1], 0.0))))(x))
    # lax.while_loop
    emit("lax_while_loop", lax.while_loop(lambda st: st[0] < 2.0, lambda st: (st[0] + 0.5, jnp.sin(st[1]) * 1.1 + x), (w, x))[1])
    # lax.scan
    emit("lax_scan", lax.scan(lambda h, xt: (jnp.tanh(h + xt), jnp.tanh(h + xt)), 0.0, x)[1])
    emit("lax_scan.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.scan(lambda h, xt: (jnp.tanh(h + xt), jnp.tanh(h + xt)), 0.0, x)[1])))(x))
    # lax.cond
    emit("lax_cond", lax.cond(w < 1.0, lambda: jnp.sin(x), lambda: jnp.cos(x)))
    emit("lax_cond.grad", jax.grad(lambda x, w: jnp.sum(jnp.asarray(lax.cond(w < 1.0, lambda: jnp.sin(x), lambda: jnp.cos(x)))))(x, w))
    # lax.switch
    emit("lax_switch", lax.switch(i, [lambda: jnp.sin(x), lambda: jnp.cos(x), lambda: jnp.exp(x)]))
    emit("lax_switch.grad", jax.grad(lambda x, i: jnp.sum(jnp.asarray(lax.switch(i, [lambda: jnp.sin(x), lambda: jnp.cos(x), lambda: jnp.exp(x)]))))(x, i))
    # lax.select
    emit("lax_select", lax.select(x < y, x, y))
    emit("lax_select.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(lax.select(x < y, x, y))))(x, y))
    # jax.checkpoint
    emit("jax_checkpoint", lax.fori_loop(0, 5, lambda t, c: jnp.sin(c + x[t]), 0.0))
    emit("jax_checkpoint.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.fori_loop(0, 5, lambda t, c: jnp.sin(c + x[t]), 0.0))))(x))
    # jax.custom_jvp
    @jax.custom_jvp
    def jax_custom_jvp_f(x):
        return jnp.log(1.0 + jnp.exp(x))
    
    @jax_custom_jvp_f.defjvp
    def jax_custom_jvp_rule(p, t):
        e = jnp.exp(p[0])
        return jnp.log(1.0 + e), 2.0 * (1.0 - 1.0 / (1.0 + e)) * t[0]
    emit("jax_custom_jvp", jax.grad(lambda x: jax_custom_jvp_f(x) * x)(1.5))
    # jax.custom_vjp
    @jax.custom_vjp
    def jax_custom_vjp_f(x):
        return jnp.sin(x)
    
    def jax_custom_vjp_fwd(x):
        return jnp.sin(x), jnp.cos(x)
    
    def jax_custom_vjp_bwd(c, g):
        return (jnp.clip(c * g, -0.1, 0.1),)
    
    jax_custom_vjp_f.defvjp(jax_custom_vjp_fwd, jax_custom_vjp_bwd)
    emit("jax_custom_vjp", jax.grad(lambda x: jax_custom_vjp_f(x) * 3.0)(0.5))
    # lax.stop_gradient
    emit("lax_stop_gradient", lax.stop_gradient(x) * x)
    emit("lax_stop_gradient.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.stop_gradient(x) * x)))(x))
    # lax.logistic
    emit("lax_logistic", lax.logistic(x))
    emit("lax_logistic.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.logistic(x))))(x))
    # lax.clamp
    emit("lax_clamp", lax.clamp(-0.3, m, 0.3))
    emit("lax_clamp.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(lax.clamp(-0.3, m, 0.3))))(m))
    # lax.pow
    emit("lax_pow", lax.pow(x, y))
    emit("lax_pow.grad", jax.grad(lambda x, y: jnp.sum(jnp.asarray(lax.pow(x, y))))(x, y))
    # lax.broadcast_in_dim
    emit("lax_broadcast_in_dim", lax.broadcast_in_dim(x, (6, 2), (0,)))
    emit("lax_broadcast_in_dim.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.broadcast_in_dim(x, (6, 2), (0,)))))(x))
    # lax.reshape
    emit("lax_reshape", lax.reshape(m, (2, 6)))
    emit("lax_reshape.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(lax.reshape(m, (2, 6)))))(m))
    # lax.transpose
    emit("lax_transpose", lax.transpose(m, (1, 0)))
    emit("lax_transpose.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(lax.transpose(m, (1, 0)))))(m))
    # lax.squeeze
    emit("lax_squeeze", lax.squeeze(x[None], (0,)))
    emit("lax_squeeze.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.squeeze(x[None], (0,)))))(x))
    # lax.expand_dims
    emit("lax_expand_dims", lax.expand_dims(x, (1,)))
    emit("lax_expand_dims.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.expand_dims(x, (1,)))))(x))
    # lax.iota
    emit("lax_iota", lax.iota(jnp.float64, 6))
    # lax.full
    emit("lax_full", lax.full((4,), x[3]))
    emit("lax_full.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.full((4,), x[3]))))(x))
    # lax.slice
    emit("lax_slice", lax.slice(x, (1,), (5,), (2,)))
    emit("lax_slice.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.slice(x, (1,), (5,), (2,)))))(x))
    # lax.concatenate
    emit("lax_concatenate", lax.concatenate([m, m], 1))
    emit("lax_concatenate.grad", jax.grad(lambda m: jnp.sum(jnp.asarray(lax.concatenate([m, m], 1))))(m))
    # lax.cumsum
    emit("lax_cumsum", lax.cumsum(x, axis=0))
    emit("lax_cumsum.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.cumsum(x, axis=0))))(x))
    # lax.div
    emit("lax_div", lax.div(idx, 2))
    # lax.rem
    emit("lax_rem", lax.rem(idx, 2))
    # lax.convert_element_type
    emit("lax_convert_element_type", lax.convert_element_type(x * 10.0, jnp.int32))
    # jnp.astype
    emit("jnp_astype", (x * 10.0).astype(jnp.int64))
    # lax.reduce_window
    emit("lax_reduce_window", lax.reduce_window(x.reshape(1, 1, 6), -jnp.inf, lax.max, (1, 1, 2), (1, 1, 2), 'VALID') + lax.reduce_window(x.reshape(1, 1, 6), 0.0, lax.add, (1, 1, 2), (1, 1, 2), 'VALID'))
    emit("lax_reduce_window.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.reduce_window(x.reshape(1, 1, 6), -jnp.inf, lax.max, (1, 1, 2), (1, 1, 2), 'VALID') + lax.reduce_window(x.reshape(1, 1, 6), 0.0, lax.add, (1, 1, 2), (1, 1, 2), 'VALID'))))(x))
    # lax.conv_general_dilated
    emit("lax_conv_general_dilated", lax.conv_general_dilated(x.reshape(1, 2, 3), jnp.asarray([[[0.5, -1.0], [0.25, 2.0]]]), (1,), [(1, 1)], (1,), (2,)))
    emit("lax_conv_general_dilated.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.conv_general_dilated(x.reshape(1, 2, 3), jnp.asarray([[[0.5, -1.0], [0.25, 2.0]]]), (1,), [(1, 1)], (1,), (2,)))))(x))
    # lax.conv
    emit("lax_conv", lax.conv(x.reshape(1, 1, 6), jnp.asarray([[[1.0, -2.0, 0.5]]]), (1,), 'VALID'))
    emit("lax_conv.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.conv(x.reshape(1, 1, 6), jnp.asarray([[[1.0, -2.0, 0.5]]]), (1,), 'VALID'))))(x))
    # flax.linen.max_pool
    emit("flax_linen_max_pool", lax.reduce_window(x.reshape(1, 1, 6), -jnp.inf, lax.max, (1, 1, 2), (1, 1, 2), 'VALID'))
    emit("flax_linen_max_pool.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.reduce_window(x.reshape(1, 1, 6), -jnp.inf, lax.max, (1, 1, 2), (1, 1, 2), 'VALID'))))(x))
    # flax.linen.avg_pool
    emit("flax_linen_avg_pool", lax.reduce_window(x.reshape(1, 1, 6), 0.0, lax.add, (1, 1, 3), (1, 1, 1), 'VALID') / 3.0)
    emit("flax_linen_avg_pool.grad", jax.grad(lambda x: jnp.sum(jnp.asarray(lax.reduce_window(x.reshape(1, 1, 6), 0.0, lax.add, (1, 1, 3), (1, 1, 1), 'VALID') / 3.0)))(x))
    # lax.psum
    emit("lax_psum", jax.vmap(lambda r: lax.psum(r, 'j') * r, axis_name='j')(x))
    # lax.pmean
    emit("lax_pmean", jax.vmap(lambda r: lax.pmean(r, 'j') - r, axis_name='j')(v))
    # lax.pmax
    emit("lax_pmax", jax.vmap(lambda r: lax.pmax(r, 'j'), axis_name='j')(x))
    # lax.pmin
    emit("lax_pmin", jax.vmap(lambda r: lax.pmin(r, 'j'), axis_name='j')(x))
    # lax.all_gather
    emit("lax_all_gather", jax.vmap(lambda r: lax.all_gather(r, 'j'), axis_name='j')(x))
    # lax.psum_scatter
    emit("lax_psum_scatter", jax.vmap(lambda r: lax.psum_scatter(r, 'j'), axis_name='j')(a))
    # lax.ppermute
    emit("lax_ppermute", jax.vmap(lambda r: lax.ppermute(r, 'j', [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0)]), axis_name='j')(x))
    # lax.all_to_all
    emit("lax_all_to_all", jax.vmap(lambda r: lax.all_to_all(r, 'j', 0, 0), axis_name='j')(a))
    # lax.axis_index
    emit("lax_axis_index", jax.vmap(lambda r: r + lax.axis_index('j'), axis_name='j')(x))
    # lax.axis_size
    emit("lax_axis_size", jax.vmap(lambda r: r * lax.axis_size('j'), axis_name='j')(v))
    # jax.jit
    emit("jax_jit", jax.jit(lambda x: jnp.sin(x) * 2.0)(x))
    # jax.grad
    emit("jax_grad", jax.grad(lambda x, y: jnp.sum(jnp.sin(x) * y))(x, y))
    # jax.value_and_grad
    emit("jax_value_and_grad", jax.value_and_grad(lambda x: jnp.sum(jnp.exp(x) * x))(x))
    # jax.jvp
    emit("jax_jvp", jax.jvp(lambda x: jnp.sin(x) * jnp.sum(x), (x,), (y,)))
    # jax.vjp
    emit("jax_vjp", (lambda p: (p[0], p[1](y)[0]))(jax.vjp(lambda x: jnp.sin(x) * jnp.sum(x), x)))
    # jax.vmap
    emit("jax_vmap", jax.vmap(lambda r, v: jnp.sum(jnp.sin(r) * v), in_axes=(0, None))(m, v))
    # jax.pmap
    emit("jax_pmap", jax.vmap(lambda r: lax.psum(jnp.sum(r), 'i') * jnp.sum(r), axis_name='i')(n))
    # jax.jacfwd
    emit("jax_jacfwd", jax.jacfwd(lambda x: jnp.sin(x) * jnp.sum(x))(x))
    # jax.jacrev
    emit("jax_jacrev", jax.jacrev(lambda x: jnp.exp(x) * jnp.sum(x))(x))
    # jax.hessian
    emit("jax_hessian", jax.hessian(lambda x: jnp.sum(jnp.sin(x) * x) * jnp.sum(x))(x))


if __name__ == "__main__":
    main()
