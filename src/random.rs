//! JAX's random numbers: `jax.random`'s threefry2x32 generator, bit for bit.
//!
//! A [`Key`] is two `u32` words, as a JAX key's `key_data`. The functions
//! are JAX's, with JAX's default implementation (threefry2x32 with
//! `jax_threefry_partitionable` on, the default since JAX 0.5): the same key,
//! shape and type give the same numbers as JAX, so a ported script draws
//! the same samples.
//!
//! ```
//! use oxla::random;
//! let key = random::key(0);
//! let [k1, k2] = random::split2(key);
//! let u = random::uniform::<f32>(k1, &[3], 0.0, 1.0); // jax.random.uniform(k1, (3,))
//! let z = random::normal::<f64>(k2, &[2, 2]);         // jax.random.normal(k2, (2, 2), float64)
//! assert!(u.iter().all(|x| (0.0..1.0).contains(x)));
//! assert_eq!(z.shape(), &[2, 2]);
//! ```
//!
//! Host functions for now: inside annotated functions, pass samples in as
//! arguments (a VAE's `mu + sigma * eps` with `eps` drawn here
//! differentiates as usual).
//!
//! Keys, `split`, `fold_in`, `bits*`, `uniform`, `bernoulli` and
//! `permutation` are JAX's bit for bit (`tests/suite/random.rs` against
//! `tests/reference/random_jax.py`'s output). `normal` follows XLA's
//! inverse error function step for step but takes the platform's `log1p`,
//! where XLA has its own: 99.5% of f32 samples are JAX's bits (the others
//! within 2 ulp), 95% of f64 samples (within 17 ulp), measured over 3,150
//! samples.
//!
//! `gumbel` and `truncated_normal` take the platform's `log` and `erf`
//! where XLA has its own (within 2 ε·max(1, |x|) of JAX's f32 samples, 13 ε
//! for f64 truncated normal, measured in `tests/suite/random.rs`);
//! `categorical` is JAX's Gumbel-max draw, the
//! same indices as JAX unless two perturbed logits tie to the last bit.
//!
//! Not yet: `choice`, `categorical` without replacement, key arrays under
//! `vmap`, and sampling inside annotated functions.

use ndarray::{ArrayBase, ArrayD, Axis, Data, Dimension, IxDyn};
use oxla_core::ops::elementwise::erf;
use oxla_core::ops::erf_inv;

/// A PRNG key: the two words of JAX's `jax.random.key_data(key)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key([u32; 2]);

impl Key {
    /// The key with these words (JAX's `jax.random.wrap_key_data`).
    pub fn from_data(data: [u32; 2]) -> Key {
        Key(data)
    }

    /// Its two words (JAX's `jax.random.key_data`).
    pub fn data(self) -> [u32; 2] {
        self.0
    }
}

/// The key of `seed` (JAX's `jax.random.key(seed)` / `PRNGKey(seed)`): the
/// high and low 32 bits of the seed.
pub fn key(seed: u64) -> Key {
    Key([(seed >> 32) as u32, seed as u32])
}

/// `num` new keys from `key` (JAX's `jax.random.split(key, num)`).
pub fn split(key: Key, num: usize) -> Vec<Key> {
    (0..num as u64)
        .map(|i| {
            let (a, b) = threefry2x32(key.0, [(i >> 32) as u32, i as u32]);
            Key([a, b])
        })
        .collect()
}

/// `split(key, 2)` as a pair, for `let [a, b] = split2(key)`.
pub fn split2(key: Key) -> [Key; 2] {
    let k = split(key, 2);
    [k[0], k[1]]
}

/// A key made from `key` and `data` (JAX's `jax.random.fold_in`).
pub fn fold_in(key: Key, data: u32) -> Key {
    // threefry_2x32 over the seed words of `data`: [0, data].
    let (a, b) = threefry2x32(key.0, [0, data]);
    Key([a, b])
}

/// The two hash words of element `i` (the partitionable counters: the
/// element's flat index as a 64-bit count, high word first).
fn words(key: Key, i: u64) -> (u32, u32) {
    threefry2x32(key.0, [(i >> 32) as u32, i as u32])
}

fn shaped<T>(shape: &[usize], f: impl FnMut(u64) -> T) -> ArrayD<T> {
    let n: usize = shape.iter().product();
    let v: Vec<T> = (0..n as u64).map(f).collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).expect("the shape's element count")
}

/// Uniform random `u32`s (JAX's `jax.random.bits(key, shape, uint32)`).
pub fn bits(key: Key, shape: &[usize]) -> ArrayD<u32> {
    shaped(shape, |i| {
        let (a, b) = words(key, i);
        a ^ b
    })
}

/// Uniform random `u64`s (`jax.random.bits(key, shape, uint64)`).
pub fn bits64(key: Key, shape: &[usize]) -> ArrayD<u64> {
    shaped(shape, |i| {
        let (a, b) = words(key, i);
        (u64::from(a) << 32) | u64::from(b)
    })
}

/// Uniform random `u16`s (`jax.random.bits(key, shape, uint16)`).
pub fn bits16(key: Key, shape: &[usize]) -> ArrayD<u16> {
    bits(key, shape).mapv(|b| b as u16)
}

/// Uniform random `u8`s (`jax.random.bits(key, shape, uint8)`).
pub fn bits8(key: Key, shape: &[usize]) -> ArrayD<u8> {
    bits(key, shape).mapv(|b| b as u8)
}

/// A float type `jax.random` samples.
pub trait RandomFloat:
    Copy
    + PartialOrd
    + std::fmt::Debug
    + std::ops::Neg<Output = Self>
    + std::ops::Add<Output = Self>
    + 'static
{
    #[doc(hidden)]
    const ONE: Self;
    /// A number in [1, 2) from random bits: the mantissa from the high bits,
    /// the exponent of 1 (JAX's `uniform`), minus 1.
    #[doc(hidden)]
    fn unit(key: Key, i: u64) -> Self;
    #[doc(hidden)]
    fn affine(u: Self, lo: Self, hi: Self) -> Self;
    #[doc(hidden)]
    fn normal_from(u: Self) -> Self;
    /// `np.nextafter(-1, 0)`: `normal`'s lower bound for `u`.
    #[doc(hidden)]
    const BELOW_MINUS_ONE: Self;
    /// The smallest positive normal number (`finfo.tiny`).
    #[doc(hidden)]
    const TINY: Self;
    #[doc(hidden)]
    fn ln(self) -> Self;
    /// `erf(x / √2)` in this type.
    #[doc(hidden)]
    fn erf_over_sqrt2(self) -> Self;
    /// The neighbours toward +∞ and −∞ (`np.nextafter`).
    #[doc(hidden)]
    fn next_up(self) -> Self;
    #[doc(hidden)]
    fn next_down(self) -> Self;
}

impl RandomFloat for f32 {
    const ONE: f32 = 1.0;
    const BELOW_MINUS_ONE: f32 = -1.0 + f32::EPSILON / 2.0;
    fn unit(key: Key, i: u64) -> f32 {
        let (a, b) = words(key, i);
        f32::from_bits(((a ^ b) >> 9) | 1.0f32.to_bits()) - 1.0
    }
    fn affine(u: f32, lo: f32, hi: f32) -> f32 {
        lo.max(u.mul_add(hi - lo, lo))
    }
    fn normal_from(u: f32) -> f32 {
        std::f32::consts::SQRT_2 * erf_inv::erf_inv_f32(u)
    }
    const TINY: f32 = f32::MIN_POSITIVE;
    fn ln(self) -> f32 {
        f32::ln(self)
    }
    fn erf_over_sqrt2(self) -> f32 {
        // JAX divides in f32 first, then takes an f32 erf.
        erf(f64::from(self / std::f32::consts::SQRT_2)) as f32
    }
    fn next_up(self) -> f32 {
        f32::next_up(self)
    }
    fn next_down(self) -> f32 {
        f32::next_down(self)
    }
}

impl RandomFloat for f64 {
    const ONE: f64 = 1.0;
    const BELOW_MINUS_ONE: f64 = -1.0 + f64::EPSILON / 2.0;
    fn unit(key: Key, i: u64) -> f64 {
        let (a, b) = words(key, i);
        let bits = (u64::from(a) << 32) | u64::from(b);
        f64::from_bits((bits >> 12) | 1.0f64.to_bits()) - 1.0
    }
    fn affine(u: f64, lo: f64, hi: f64) -> f64 {
        lo.max(u.mul_add(hi - lo, lo))
    }
    fn normal_from(u: f64) -> f64 {
        std::f64::consts::SQRT_2 * erf_inv::erf_inv_f64(u)
    }
    const TINY: f64 = f64::MIN_POSITIVE;
    fn ln(self) -> f64 {
        f64::ln(self)
    }
    fn erf_over_sqrt2(self) -> f64 {
        erf(self / std::f64::consts::SQRT_2)
    }
    fn next_up(self) -> f64 {
        f64::next_up(self)
    }
    fn next_down(self) -> f64 {
        f64::next_down(self)
    }
}

/// Uniform samples in `[minval, maxval)` (JAX's `jax.random.uniform`).
pub fn uniform<T: RandomFloat>(key: Key, shape: &[usize], minval: T, maxval: T) -> ArrayD<T> {
    shaped(shape, |i| T::affine(T::unit(key, i), minval, maxval))
}

/// Standard normal samples (JAX's `jax.random.normal`): `√2 · erf⁻¹(u)` of
/// uniform `u` in (−1, 1).
pub fn normal<T: RandomFloat>(key: Key, shape: &[usize]) -> ArrayD<T> {
    let lo = T::BELOW_MINUS_ONE;
    shaped(shape, |i| {
        T::normal_from(T::affine(T::unit(key, i), lo, T::ONE))
    })
}

/// Standard normal samples truncated to `(lower, upper)` (JAX's
/// `jax.random.truncated_normal(key, lower, upper, shape)`): `√2 · erf⁻¹(u)`
/// of `u` uniform between `erf(lower/√2)` and `erf(upper/√2)`, clamped to
/// the open interval as JAX clamps it.
pub fn truncated_normal<T: RandomFloat>(
    key: Key,
    lower: T,
    upper: T,
    shape: &[usize],
) -> ArrayD<T> {
    let (a, b) = (lower.erf_over_sqrt2(), upper.erf_over_sqrt2());
    let (lo, hi) = (lower.next_up(), upper.next_down());
    shaped(shape, |i| {
        let z = T::normal_from(T::affine(T::unit(key, i), a, b));
        // `jnp.clip`: max with the lower bound, then min with the upper.
        let z = if z < lo { lo } else { z };
        if z > hi {
            hi
        } else {
            z
        }
    })
}

/// Standard Gumbel samples (JAX's `jax.random.gumbel(key, shape)`, its
/// default `mode="low"`): `−log(−log(u))` of `u` uniform in `[tiny, 1)`.
pub fn gumbel<T: RandomFloat>(key: Key, shape: &[usize]) -> ArrayD<T> {
    shaped(shape, |i| gumbel_at(key, i))
}

fn gumbel_at<T: RandomFloat>(key: Key, i: u64) -> T {
    let u = T::affine(T::unit(key, i), T::TINY, T::ONE);
    -(-u.ln()).ln()
}

/// Samples from the categorical distributions whose unnormalized log
/// probabilities lie along `axis` of `logits` (JAX's
/// `jax.random.categorical(key, logits, axis)`, with replacement): the
/// index of the largest `logits + gumbel` along the axis (the Gumbel-max
/// trick, with JAX's noise for the same key). The result has `logits`'s
/// shape without that axis; a negative `axis` counts from the end, as
/// JAX's. JAX's indices are `int32`; these are `usize`.
pub fn categorical<T, S, D>(key: Key, logits: &ArrayBase<S, D>, axis: isize) -> ArrayD<usize>
where
    T: RandomFloat,
    S: Data<Elem = T>,
    D: Dimension,
{
    let rank = logits.ndim() as isize;
    assert!(
        (-rank..rank).contains(&axis),
        "categorical: axis {axis} is out of range for logits of rank {rank}"
    );
    let axis = Axis(axis.rem_euclid(rank.max(1)) as usize);
    let noise = gumbel::<T>(key, logits.shape());
    let perturbed = ndarray::Zip::from(&noise)
        .and(&logits.view().into_dyn())
        .map_collect(|&g, &l| g + l);
    // `jnp.argmax`: the first largest, a NaN counting as the largest.
    perturbed.map_axis(axis, |lane| {
        let mut best = 0;
        for (k, &v) in lane.iter().enumerate() {
            let b = lane[best];
            if b.partial_cmp(&b).is_none() {
                break;
            }
            if v.partial_cmp(&v).is_none() || v > b {
                best = k;
            }
        }
        best
    })
}

/// `true` with probability `p` (JAX's `jax.random.bernoulli(key, p, shape)`
/// with `p` an `f32`): a uniform `f32` sample below `p`.
pub fn bernoulli(key: Key, p: f32, shape: &[usize]) -> ArrayD<bool> {
    shaped(shape, |i| f32::unit(key, i) < p)
}

/// A random permutation of `0..n` (JAX's `jax.random.permutation(key, n)`):
/// stable sorts by fresh random `u32` keys, as many rounds as JAX takes
/// (`⌈3 ln n / ln(2³² − 1)⌉`: one up to n = 1625).
pub fn permutation(key: Key, n: usize) -> Vec<usize> {
    let rounds = if n <= 1 {
        0
    } else {
        (3.0 * (n as f64).ln() / (u32::MAX as f64).ln()).ceil() as usize
    };
    let mut x: Vec<usize> = (0..n).collect();
    let mut key = key;
    for _ in 0..rounds {
        let [next, sub] = split2(key);
        key = next;
        let sort_keys = bits(sub, &[n]);
        let mut order: Vec<(u32, usize)> = sort_keys.iter().copied().zip(x).collect();
        order.sort_by_key(|(k, _)| *k);
        x = order.into_iter().map(|(_, v)| v).collect();
    }
    x
}

/// The threefry-2x32 block cipher with 20 rounds (Salmon et al., "Parallel
/// random numbers: as easy as 1, 2, 3", 2011), as JAX's `threefry2x32_p`.
pub fn threefry2x32(key: [u32; 2], count: [u32; 2]) -> (u32, u32) {
    const ROTATIONS: [[u32; 4]; 2] = [[13, 15, 26, 6], [17, 29, 16, 24]];
    let ks = [key[0], key[1], key[0] ^ key[1] ^ 0x1BD1_1BDA];
    let mut x = [count[0].wrapping_add(ks[0]), count[1].wrapping_add(ks[1])];
    for round in 0..5 {
        for r in ROTATIONS[round % 2] {
            x[0] = x[0].wrapping_add(x[1]);
            x[1] = x[1].rotate_left(r) ^ x[0];
        }
        x[0] = x[0].wrapping_add(ks[(round + 1) % 3]);
        x[1] = x[1]
            .wrapping_add(ks[(round + 2) % 3])
            .wrapping_add(round as u32 + 1);
    }
    (x[0], x[1])
}
