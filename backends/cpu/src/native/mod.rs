//! Native kernels: kernel IR written as Rust source, for the build helper to
//! compile with the `rustc` cargo hands build scripts, optimized, once per
//! ISA level (AVX-512, AVX2 + FMA, SSE2), into object files the user's crate
//! links. Cranelift's x86-64 backend has 128-bit vectors only; LLVM uses the
//! full width, and the kernels are optimized even in the user's debug builds.
//! Cranelift stays the JIT, and compiles the build-time kernels this emitter
//! does not cover (see `supports`).
//!
//! A kernel becomes one `extern "C"` function with the calling convention of
//! every CPU kernel (`KernelFn`). The loop nest follows the domain; each
//! element evaluates the instructions as scalar Rust (the math of
//! `prelude.rs`, branch-free), which LLVM's vectorizers widen. Reductions
//! run `LANES` independent accumulators over the innermost axis, in blocks
//! of `LANES · CHAIN` elements whose totals (tree-combined lanes) go to a
//! pairwise `Cascade`, so the error grows like `CHAIN + log n` ulps, the
//! kernel IR's contract; the rest of a row is one more leaf.

mod emit;
pub mod prelude;

pub use emit::{compile, rust_source, supports, NativeLevel};

#[cfg(test)]
mod tests {
    use super::prelude as p;
    use oxla_core::ops::erf as c;

    /// The prelude's copies of the erf coefficients are `oxla-core`'s, bit
    /// for bit (the prelude is compiled without `oxla-core`).
    #[test]
    fn erf_coefficients_are_oxla_cores() {
        let bits = |c: &[f64]| c.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(p::ERF_ERX.to_bits(), c::ERX.to_bits());
        assert_eq!(p::ERF_NEAR_FAR, c::NEAR_FAR);
        for (copy, core) in [
            (&p::ERF_PP[..], &c::PP[..]),
            (&p::ERF_QQ, &c::QQ),
            (&p::ERF_PA, &c::PA),
            (&p::ERF_QA, &c::QA),
            (&p::ERF_RA, &c::RA),
            (&p::ERF_SA, &c::SA),
            (&p::ERF_RB, &c::RB),
            (&p::ERF_SB, &c::SB),
        ] {
            assert_eq!(bits(copy), bits(core));
        }
    }
}
