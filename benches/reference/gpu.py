# JAX on the same GPU as `gpu_check` and `examples/devices`: the figures they print for oxla.
import os, time, statistics
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax, jax.numpy as jnp
print("jax", jax.__version__, jax.devices())

def med(f, *a, runs=20, warm=3):
    for _ in range(warm):
        f(*a).block_until_ready()
    ts = []
    for _ in range(runs):
        t = time.perf_counter(); f(*a).block_until_ready(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)

n = 10_000_000
k = jax.random.split(jax.random.PRNGKey(0), 3)
x, y, z = (jax.random.normal(kk, (n,), jnp.float32) for kk in k)
fs = jax.jit(lambda x, y, z: jnp.sum(x * 2 * y + z))
t = med(fs, x, y, z)
print(f"JAX fused sum 10M f32: {t*1e6:.1f} us = {12*n/t/1e9:.0f} GB/s")
tiny = jax.jit(lambda x: x + 1.0)
s = jnp.ones((1,), jnp.float32)
print(f"JAX launch+sync latency (x+1 on 1 element): {med(tiny, s, runs=200)*1e6:.1f} us")
for dt, prec in [(jnp.float32, "highest"), (jnp.float32, "default"), (jnp.bfloat16, "default")]:
    m = 4096
    a = jax.random.normal(k[0], (m, m), dt); b = jax.random.normal(k[1], (m, m), dt)
    mm = jax.jit(lambda a, b: jnp.matmul(a, b, precision=prec))
    t = med(mm, a, b, runs=10, warm=2)
    print(f"JAX {jnp.dtype(dt).name} {m}^3 matmul precision={prec}: {t*1e3:.2f} ms = {2*m**3/t/1e12:.1f} TFLOP/s")

# The MLP training steps of examples/devices, jit'd as a JAX user writes them.
def mlp_step_time(d_in, d_h, d_out, batch=256, steps=50, lr=0.1):
    ks = jax.random.split(jax.random.PRNGKey(1), 4)
    x = jax.random.uniform(ks[0], (batch, d_in), jnp.float32, -1, 1)
    y = jax.random.uniform(ks[1], (batch, d_out), jnp.float32, -1, 1)
    p = (jax.random.uniform(ks[2], (d_in, d_h), jnp.float32, -.05, .05), jnp.zeros(d_h),
         jax.random.uniform(ks[3], (d_h, d_out), jnp.float32, -.05, .05), jnp.zeros(d_out))
    def loss(p, x, y):
        w1, b1, w2, b2 = p
        h = jnp.tanh(x @ w1 + b1)
        return jnp.mean((h @ w2 + b2 - y) ** 2)
    @jax.jit
    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return l, tuple(a - lr * b for a, b in zip(p, g))
    l, p = step(p, x, y); l.block_until_ready()
    t = time.perf_counter()
    for _ in range(steps):
        l, p = step(p, x, y)
    l.block_until_ready()
    return (time.perf_counter() - t) / steps

for dims in [(8, 32, 2), (784, 512, 10)]:
    print(f"JAX MLP {dims} batch 256, jit'd value_and_grad + SGD step: {mlp_step_time(*dims)*1e6:.1f} us per step")
