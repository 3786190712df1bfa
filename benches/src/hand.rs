//! The best hand-written Rust we know for the two fused-sum workloads,
//! compiled for the running CPU: explicit independent accumulators (lanes)
//! that LLVM keeps in vector registers, a fast polynomial `exp` and a
//! rational `tanh` in f32 (a few ulp, the accuracy hand-written kernels
//! usually settle for), and `#[target_feature]` multiversioning (AVX-512, AVX2 + FMA,
//! baseline) chosen at run time. One thread.

/// `sum(x * 2 * y + z)` at the CPU's best width.
pub fn fused_sum(x: &[f32], y: &[f32], z: &[f32]) -> f32 {
    let n = x.len().min(y.len()).min(z.len());
    let (x, y, z) = (&x[..n], &y[..n], &z[..n]);
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F.
            return unsafe { fused_sum_avx512(x, y, z) };
        }
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has AVX2 and FMA.
            return unsafe { fused_sum_avx2(x, y, z) };
        }
    }
    fused_sum_lanes::<16>(x, y, z)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn fused_sum_avx512(x: &[f32], y: &[f32], z: &[f32]) -> f32 {
    fused_sum_lanes::<32>(x, y, z)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fused_sum_avx2(x: &[f32], y: &[f32], z: &[f32]) -> f32 {
    fused_sum_lanes::<16>(x, y, z)
}

/// `L` accumulators (two vector registers: enough to hide the add latency
/// behind the loads, and a short tail), then 8 for the rest, then scalar.
#[inline(always)]
pub(crate) fn fused_sum_lanes<const L: usize>(x: &[f32], y: &[f32], z: &[f32]) -> f32 {
    let mut acc = [0.0f32; L];
    let chunks = x
        .chunks_exact(L)
        .zip(y.chunks_exact(L))
        .zip(z.chunks_exact(L));
    for ((x, y), z) in chunks {
        for k in 0..L {
            acc[k] += x[k] * 2.0 * y[k] + z[k];
        }
    }
    let done = x.len() - x.len() % L;
    let (x, y, z) = (&x[done..], &y[done..], &z[done..]);
    let mut rest = [0.0f32; 8];
    let chunks = x
        .chunks_exact(8)
        .zip(y.chunks_exact(8))
        .zip(z.chunks_exact(8));
    for ((x, y), z) in chunks {
        for k in 0..8 {
            rest[k] += x[k] * 2.0 * y[k] + z[k];
        }
    }
    let mut total: f32 = acc.iter().sum::<f32>() + rest.iter().sum::<f32>();
    for i in x.len() - x.len() % 8..x.len() {
        total += x[i] * 2.0 * y[i] + z[i];
    }
    total
}

/// `sum(tanh(x) * exp(-y*y))` at the CPU's best width.
pub fn tanh_exp_sum(x: &[f32], y: &[f32]) -> f32 {
    let n = x.len().min(y.len());
    let (x, y) = (&x[..n], &y[..n]);
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F.
            return unsafe { tanh_exp_avx512(x, y) };
        }
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has AVX2 and FMA.
            return unsafe { tanh_exp_avx2(x, y) };
        }
    }
    tanh_exp_lanes::<16>(x, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn tanh_exp_avx512(x: &[f32], y: &[f32]) -> f32 {
    tanh_exp_lanes::<32>(x, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn tanh_exp_avx2(x: &[f32], y: &[f32]) -> f32 {
    tanh_exp_lanes::<16>(x, y)
}

#[inline(always)]
fn tanh_exp_lanes<const L: usize>(x: &[f32], y: &[f32]) -> f32 {
    let mut acc = [0.0f32; L];
    for (x, y) in x.chunks_exact(L).zip(y.chunks_exact(L)) {
        for k in 0..L {
            acc[k] += fast_tanh(x[k]) * fast_exp(-(y[k] * y[k]));
        }
    }
    let tail = x.len() - x.len() % L;
    let mut total: f32 = acc.iter().sum();
    for i in tail..x.len() {
        total += fast_tanh(x[i]) * fast_exp(-(y[i] * y[i]));
    }
    total
}

/// e^x: x = k·ln2 + r, a degree-5 polynomial, 2^k through the exponent bits
/// (inputs clamped to [-87, 88]; about 2 ulp).
#[inline(always)]
pub fn fast_exp(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0; // 1.5·2^23: adding it rounds to an integer
                                     // Not `clamp`: NaN goes to -87 here, as the kernel's range reduction.
    #[allow(clippy::manual_clamp)]
    let x = x.max(-87.0).min(88.0);
    let t = x * std::f32::consts::LOG2_E + MAGIC;
    let k = t - MAGIC;
    let r = (x - k * 0.693_359_4) - k * -2.121_944_4e-4;
    let p = 1.0 / 120.0;
    let p = p * r + 1.0 / 24.0;
    let p = p * r + 1.0 / 6.0;
    let p = p * r + 0.5;
    let p = p * r + 1.0;
    let p = p * r + 1.0;
    // The low bits of `t` hold k + 2^22 (as 1.5·2^23 + k): shift them into
    // the exponent field.
    let scale = f32::from_bits((t.to_bits().wrapping_add(127u32.wrapping_sub(0x40_0000))) << 23);
    p * scale
}

/// tanh x as a rational function x·P(x²)/Q(x²), P and Q of degree 4,
/// fitted here to tanh on [0, 9] (relative error 2·10⁻⁸ in exact
/// arithmetic, 7 ulp evaluated in f32), |x| clamped at 9: the fast form
/// hand-written kernels use (no exp, one division).
// The fitted coefficients keep the digits the fit printed.
#[allow(clippy::excessive_precision)]
#[inline(always)]
pub fn fast_tanh(x: f32) -> f32 {
    let x = x.clamp(-9.0, 9.0);
    let t = x * x;
    let p = 1.335_173_9e-8_f32;
    let p = p * t + 2.060_707_2e-5;
    let p = p * t + 3.495_470_7e-3;
    let p = p * t + 0.133_809_29;
    let p = p * t + 0.999_999_98;
    let q = 7.775_390_1e-7_f32;
    let q = q * t + 3.285_439_4e-4;
    let q = q * t + 2.587_654_1e-2;
    let q = q * t + 0.467_142_44;
    let q = q * t + 1.0;
    x * p / q
}

/// `sum(gelu(x))` as a Rust user writes it: `libm`'s `erff` (std has no
/// erf) per element, a scalar call, into eight independent f32 accumulators.
pub fn gelu_sum(x: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let chunks = x.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += gelu(v);
        }
    }
    let tail: f32 = rest.iter().map(|&v| gelu(v)).sum();
    acc.iter().sum::<f32>() + tail
}

fn gelu(v: f32) -> f32 {
    v * (libm::erff(v * std::f32::consts::FRAC_1_SQRT_2) + 1.0) * 0.5
}
