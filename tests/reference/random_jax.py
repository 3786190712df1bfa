"""jax.random's outputs for `tests/suite/random.rs`: keys, splits, fold_in,
bits, uniform, normal, bernoulli, permutation, gumbel, truncated_normal and
categorical for several keys, shapes and
dtypes, with JAX's default PRNG (threefry2x32, `jax_threefry_partitionable`
on, the default since JAX 0.5). Every value is written as its bits in hex
(floats bit-cast to unsigned integers), so the test compares bit for bit.

    python3 tests/reference/random_jax.py > tests/reference/random_jax.txt

Line format: `name dtype shape: hex hex ...` (shape `-` for a scalar list).
"""

import jax

jax.config.update("jax_enable_x64", True)  # f64 samples and 64-bit seeds

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def emit(name, a):
    a = np.asarray(a)
    if a.dtype == np.bool_:
        bits = a.astype(np.uint8)
    else:
        bits = a.view(UINT[a.dtype.itemsize])
    shape = ",".join(map(str, a.shape)) or "-"
    print(f"{name} {a.dtype} {shape}: " + " ".join(f"{int(b):x}" for b in bits.ravel()))


def data(k):
    return jax.random.key_data(k)


def main():
    print(f"# JAX {jax.__version__}, partitionable {jax.config.jax_threefry_partitionable}")
    for seed in [0, 42, 2**40 + 5]:
        k = jax.random.key(seed)
        emit(f"key.{seed}", data(k))
        emit(f"split3.{seed}", data(jax.random.split(k, 3)))
        emit(f"fold_in7.{seed}", data(jax.random.fold_in(k, 7)))
        emit(f"fold_in_big.{seed}", data(jax.random.fold_in(k, 2**31 + 3)))
        emit(f"bits32.{seed}", jax.random.bits(k, (2, 3), jnp.uint32))
        emit(f"bits16.{seed}", jax.random.bits(k, (5,), jnp.uint16))
        emit(f"bits8.{seed}", jax.random.bits(k, (5,), jnp.uint8))
        emit(f"bits64.{seed}", jax.random.bits(k, (3,), jnp.uint64))
        emit(f"uniform32.{seed}", jax.random.uniform(k, (3, 4), jnp.float32))
        emit(f"uniform32_ab.{seed}", jax.random.uniform(k, (7,), jnp.float32, -2.0, 3.0))
        emit(f"uniform64.{seed}", jax.random.uniform(k, (5,), jnp.float64))
        emit(f"normal32.{seed}", jax.random.normal(k, (1000,), jnp.float32))
        emit(f"normal64.{seed}", jax.random.normal(k, (50,), jnp.float64))
        emit(f"bernoulli.{seed}", jax.random.bernoulli(k, jnp.float32(0.3), (20,)))
        emit(f"permutation10.{seed}", jax.random.permutation(k, 10))
        emit(f"permutation2000.{seed}", jax.random.permutation(k, 2000))
        # A chain, as a training loop draws: split, then sample with a subkey.
        k1, k2 = jax.random.split(jax.random.fold_in(k, 3))
        emit(f"chain.{seed}", jax.random.uniform(k2, (4,), jnp.float32))
        emit(f"gumbel32.{seed}", jax.random.gumbel(k, (1000,), jnp.float32))
        emit(f"gumbel64.{seed}", jax.random.gumbel(k, (50,), jnp.float64))
        emit(f"truncated32.{seed}", jax.random.truncated_normal(k, -1.0, 2.0, (1000,), jnp.float32))
        emit(f"truncated64.{seed}", jax.random.truncated_normal(k, 0.5, 3.0, (50,), jnp.float64))
        # Logits with a spread, ties and a -inf category (never drawn).
        logits = jnp.log(jnp.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25], [0.7, 0.0, 0.2, 0.1]]))
        emit(f"categorical_last.{seed}", jax.random.categorical(k, logits.astype(jnp.float32), axis=-1))
        emit(f"categorical_first.{seed}", jax.random.categorical(k, logits, axis=0))
        # Many draws from one distribution: the frequencies follow softmax.
        row = jnp.tile(logits[0].astype(jnp.float32), (4000, 1))
        emit(f"categorical_many.{seed}", jax.random.categorical(k, row))


if __name__ == "__main__":
    main()
