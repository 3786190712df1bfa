//! Kernels under benchmark, each beside hand-written Rust baselines.
//! The oxla versions are compiled ahead of time by `build.rs`.

pub mod conv_layer;
pub mod hand;
pub mod linalg;
pub mod models;

/// `sum(x * 2 * y + z)`: one fused oxla kernel.
#[oxla::jit]
pub fn fused_sum(x: &[f32], y: &[f32], z: &[f32]) -> f32 {
    sum(x * 2.0 * y + z)
}

/// `sum(tanh(x) * exp(-y*y))`: one fused oxla kernel, math-heavy.
#[oxla::jit]
pub fn tanh_exp_sum(x: &[f32], y: &[f32]) -> f32 {
    sum(x.tanh() * (-(y * y)).exp())
}

/// `sum(gelu(x))` with the exact GELU, `x·(1 + erf(x/√2))/2` (JAX's
/// `gelu(approximate=False)`): one fused oxla kernel, erf-bound.
#[oxla::jit]
pub fn gelu_sum(x: &[f32]) -> f32 {
    sum(x * (erf(x * std::f32::consts::FRAC_1_SQRT_2) + 1.0) * 0.5)
}

/// The idiomatic iterator baseline.
pub fn fused_sum_iter(x: &[f32], y: &[f32], z: &[f32]) -> f32 {
    x.iter()
        .zip(y)
        .zip(z)
        .map(|((x, y), z)| x * 2.0 * y + z)
        .sum()
}

/// A hand-unrolled baseline: eight independent accumulators over exact
/// chunks (no bounds checks), which lets rustc vectorize the loop (the strict
/// f32 order of the iterator forbids it), built for the baseline ISA.
pub fn fused_sum_unrolled(x: &[f32], y: &[f32], z: &[f32]) -> f32 {
    let n = x.len().min(y.len()).min(z.len());
    hand::fused_sum_lanes::<8>(&x[..n], &y[..n], &z[..n])
}
