//! Accuracy of long reductions (blocked pairwise summation) and the NaN and
//! signed-zero semantics of max/min, on every ISA level this CPU runs.
//!
//! Expected values are exact integers, f64 (or compensated f64) sums of the
//! same inputs, or literal tables; never the code under test.
//!
//! Error bound used below. A block of the main loop is summed by `A`
//! accumulator lanes, each adding at most `chain` elements to zero; the lanes
//! are then combined pairwise (log2 A additions) and the tail accumulator is
//! added (1); the block totals go through a binary-counter cascade, in which
//! an element takes part in at most ceil(log2 L) + 1 further additions for L
//! blocks. (The row's last block also takes the one-vector loop, up to 3
//! more elements in the first accumulator, so the vector chain is 64 + 3.
//! Since the sub-blocks, a lane adds 4 vector iterations, then its
//! sub-block total joins a second set of lanes: a chain of 4 + 16 + 3, so
//! the bound below, worked out for 67, is conservative.)
//! With h the sum of those counts (plus 1 for a rounded product), the
//! classic bound for any summation tree of depth h gives
//! |computed − exact| ≤ γ_h Σ|x_i|, γ_h = h·u / (1 − h·u), u = 2^-24 (f32) or
//! 2^-53 (f64). For today's f32 layout (16 lanes of 64 elements per 1024
//! element block) and n = 10^7, h = 67 + 4 + 1 + 14 + 1 = 87 and the bound is
//! 5.2e-6 relative for positive inputs; the former 16-lane sequential sum had
//! h = n/16. Random tests also assert the probabilistic bound 6·√h·u
//! (see `bound`), 3.3e-6 here; measured errors are at most 9.8e-8 (an ulp
//! of the result: the final rounding to f32 and a little more), which
//! `f32_sum_of_10_pow_7_random_values_within_the_documented_1e_7` asserts.

use crate::common;
use common::*;
use oxla_core::kernel::fusion::fuse;
use oxla_core::kernel::{compensated_sum, interp};
use oxla_core::ops::elementwise::BinaryOp;
use oxla_core::{Buffer, DType, Dim, Function, Kernel, Shape, Type};
use oxla_cpu::{host_supports_v3, run_checked, IsaLevel, JitModule};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// `k` compiled for the host, for x86-64-v3 where it runs, and for baseline.
fn compiled(k: &Kernel) -> Vec<(&'static str, JitModule)> {
    let one = std::slice::from_ref(k);
    let mut out = vec![("host", JitModule::compile(one).expect("host"))];
    if host_supports_v3() {
        let v3 = JitModule::compile_at(one, IsaLevel::X86_64V3).expect("v3");
        out.push(("x86-64-v3", v3));
    }
    let base = JitModule::compile_at(one, IsaLevel::Baseline).expect("baseline");
    out.push(("baseline", base));
    out
}

/// Run `k` on `inputs` with every compiled variant; the output buffers of
/// each run, by ISA name, every element checked written (outputs are
/// pre-filled with the harness's sentinel).
fn run_all(k: &Kernel, inputs: &[Buffer], sizes: &[i64]) -> Vec<(&'static str, Vec<Buffer>)> {
    compiled(k)
        .into_iter()
        .map(|(isa, jit)| {
            let mut bufs = with_outputs(k, sizes, inputs);
            run_checked(jit.function(0), k, &mut bufs, sizes).expect("run");
            let outs = bufs.split_off(inputs.len());
            for (o, b) in outs.iter().enumerate() {
                if let Some(j) = unwritten(b) {
                    panic!(
                        "{isa}: {} sizes {sizes:?}: output {o}[{j}] unwritten",
                        k.name
                    );
                }
            }
            (isa, outs)
        })
        .collect()
}

/// γ_h bound (relative to Σ|x|) for a tree of depth `h` in unit roundoff `u`.
fn gamma(h: f64, u: f64) -> f64 {
    h * u / (1.0 - h * u)
}

/// The smaller of γ_h and the probabilistic bound λ·√h·u with λ = 6 (Higham
/// and Mary, 2019: holds with probability ≥ 1 − 2h·exp(−λ²/2) ≈ 1 − 3e-8·h
/// when rounding errors are independent and mean zero, as for these random
/// inputs). The worst-case γ_h alone is loose enough that the former
/// 16-lane sequential sum met it on the vector path (4.97e-6 against 5.19e-6).
fn bound(h: f64, u: f64) -> f64 {
    gamma(h, u).min(6.0 * h.sqrt() * u)
}

/// Depth bound of a blocked reduction of `n` elements: `chain` additions per
/// accumulator lane, `lanes` accumulator lanes combined pairwise, one tail
/// accumulator, and the cascade over the blocks of `block` elements.
fn depth(n: usize, chain: usize, lanes: usize, block: usize) -> f64 {
    let blocks = n.div_ceil(block).max(1);
    (chain + lanes.ilog2() as usize + 1 + blocks.next_power_of_two().ilog2() as usize + 1) as f64
}

const U32: f64 = 1.0 / (1u64 << 24) as f64;
const U64: f64 = 1.0 / (1u64 << 53) as f64;

/// `sum_j x[j * s]` over `n`, `s` a size symbol (so the innermost stride is
/// not known to be 1 and the loop is scalar), or with stride `1` (vector).
fn sum_kernel(ty: DType, stride: Option<u64>) -> Kernel {
    let mut kb = KernelBuilder::new(
        &format!("sum_{ty}_{stride:?}"),
        &["n", "s"],
        vec![sym("n")],
        1,
    );
    let x = kb.arg(ty, false);
    let out = kb.arg(ty, true);
    let st = stride.map_or_else(|| sym("s"), c);
    let v = kb.load(x, vec![st]);
    kb.store(out, v);
    kb.build()
}

#[test]
fn f32_sum_of_2_pow_25_ones_is_exact_vector_and_scalar() {
    let n = 1usize << 25;
    let ones = Buffer::F32(vec![1.0; n]);
    for stride in [Some(1), None] {
        let k = sum_kernel(DType::F32, stride);
        for (isa, out) in run_all(&k, std::slice::from_ref(&ones), &[n as i64, 1]) {
            assert_eq!(out[0].get(0), n as f64, "{isa}, stride {stride:?}");
        }
    }
}

/// 2^29 ones read through a broadcast (innermost stride 0: vector path) or
/// a symbolic stride bound to 0 (scalar path), so no 2 GiB input is needed:
/// the accumulators see exactly what a sum over 2^29 ones gives them.
#[test]
fn f32_sum_of_2_pow_29_broadcast_ones_is_exact() {
    let n = 1usize << 29;
    let one = Buffer::F32(vec![1.0]);
    for (stride, s) in [(Some(0), 0), (None, 0)] {
        let k = sum_kernel(DType::F32, stride);
        for (isa, out) in run_all(&k, std::slice::from_ref(&one), &[n as i64, s]) {
            assert_eq!(out[0].get(0), n as f64, "{isa}, stride {stride:?}");
        }
    }
}

/// Row sums (2-d domain, inner axis reduced) of broadcast rows: row i sums
/// 2^29 copies of i + 1, exact in f32 for i + 1 in 1..=3.
#[test]
fn f32_row_sums_of_2_pow_29_are_exact() {
    let n = 1i64 << 29;
    let mut kb = KernelBuilder::new("rowsum_bcast", &["m", "n"], vec![sym("m"), sym("n")], 1);
    let x = kb.arg(DType::F32, false);
    let out = kb.arg(DType::F32, true);
    let v = kb.load(x, vec![c(1), zero()]);
    kb.store(out, v);
    let k = kb.build();
    let rows = Buffer::F32(vec![1.0, 2.0, 3.0]);
    for (isa, out) in run_all(&k, std::slice::from_ref(&rows), &[3, n]) {
        for i in 0..3 {
            assert_eq!(out[0].get(i), (i as f64 + 1.0) * n as f64, "{isa}, row {i}");
        }
    }
}

/// Two reduced axes with short rows (8 elements): rows are grouped into
/// blocks, and 2^27 ones still sum exactly (the former shared accumulators
/// stopped at 2^24 per lane).
#[test]
fn f32_sum_over_two_axes_of_short_rows_is_exact() {
    let (m, n) = (1i64 << 24, 8i64);
    let mut kb = KernelBuilder::new("sum2_short", &["m", "n"], vec![sym("m"), sym("n")], 2);
    let x = kb.arg(DType::F32, false);
    let out = kb.arg(DType::F32, true);
    let v = kb.load(x, vec![zero(), c(1)]);
    kb.store(out, v);
    let k = kb.build();
    let row = Buffer::F32(vec![1.0; n as usize]);
    for (isa, out) in run_all(&k, std::slice::from_ref(&row), &[m, n]) {
        assert_eq!(out[0].get(0), (m * n) as f64, "{isa}");
    }
}

fn uniform_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen_range(0.0f32..1.0)).collect()
}

/// Relative error of f32 sums of 10^7 uniform [0, 1) values against the f64
/// sum of the same values (itself within ~n·2^-53 ≈ 1e-9, negligible), below
/// γ_h of the blocked layout: vector (16 lanes × 64 per block) and scalar
/// (one accumulator × 256 per block) paths.
#[test]
fn f32_sum_of_10_pow_7_random_values_within_log_bound() {
    let n = 10_000_000usize;
    let xs = uniform_f32(n, 7);
    let exact: f64 = xs.iter().map(|&x| x as f64).sum();
    let input = Buffer::F32(xs);
    for (stride, chain, lanes, block) in [(Some(1), 67, 16, 1024), (None, 256, 1, 256)] {
        let bound = bound(depth(n, chain, lanes, block), U32);
        assert!(bound < 2e-5, "a bound that can fail: {bound}");
        sum_within(DType::F32, stride, &input, exact, bound);
    }
}

/// README "Numerics": "10⁷ random f32 values come within 10⁻⁷ (an ulp of
/// the result) of the sum computed in f64", at that bound, on the vector
/// and the scalar loop and every ISA (the γ_h bound above is the guarantee
/// for any input; this is the documented measurement). Seeds 7 to 39 were
/// measured once: 9.81e-8 at most (seed 37), 8.98e-8 (17),
/// 7.03e-8 (20), 6.97e-8 (7, the figure the README gave before), the rest
/// below; the test runs those four and seed 8. The f64 sum of the same
/// values is within n·2⁻⁵³ ≈ 1e-9 relative of the exact one.
#[test]
fn f32_sum_of_10_pow_7_random_values_within_the_documented_1e_7() {
    let n = 10_000_000usize;
    let mut worst = 0f64;
    for seed in [7, 8, 17, 20, 37] {
        let xs = uniform_f32(n, seed);
        let exact: f64 = xs.iter().map(|&x| x as f64).sum();
        let input = Buffer::F32(xs);
        for stride in [Some(1), None] {
            let k = sum_kernel(DType::F32, stride);
            for (isa, out) in run_all(&k, std::slice::from_ref(&input), &[n as i64, 1]) {
                let err = (out[0].get(0) - exact).abs() / exact;
                eprintln!("seed {seed}, {isa}, stride {stride:?}: relative error {err:.3e}");
                worst = worst.max(err);
                assert!(
                    err <= 1e-7,
                    "seed {seed}, {isa}, stride {stride:?}: relative error {err:.3e} > 1e-7"
                );
            }
        }
    }
    eprintln!("worst relative error {worst:.3e}");
}

/// f64 sums of 2^22 uniform [0, 1) values against a compensated sum, below
/// γ_h of the blocked f64 layout (f64x2 × 4 accumulators: 8 lanes × 64).
#[test]
fn f64_sum_of_random_values_within_log_bound() {
    let n = 1usize << 22;
    let mut rng = StdRng::seed_from_u64(64);
    let xs: Vec<f64> = (0..n).map(|_| rng.gen_range(0.0..1.0)).collect();
    let exact = compensated_sum(xs.iter().copied());
    let input = Buffer::F64(xs);
    for (stride, chain, lanes, block) in [(Some(1), 67, 8, 512), (None, 256, 1, 256)] {
        let bound = bound(depth(n, chain, lanes, block), U64) + 4.0 * U64;
        sum_within(DType::F64, stride, &input, exact, bound);
    }
}

/// The whole-array sum of `input` (vector loop for `stride` 1, scalar loop
/// for `None`), on every ISA, within relative `bound` of `exact`.
fn sum_within(ty: DType, stride: Option<u64>, input: &Buffer, exact: f64, bound: f64) {
    let n = input.len() as i64;
    let k = sum_kernel(ty, stride);
    for (isa, out) in run_all(&k, std::slice::from_ref(input), &[n, 1]) {
        let err = (out[0].get(0) - exact).abs() / exact;
        eprintln!("{isa}, stride {stride:?}: relative error {err:.2e}, bound {bound:.2e}");
        assert!(
            err <= bound,
            "{isa}, stride {stride:?}: relative error {err:.2e} > {bound:.2e}"
        );
    }
}

/// Row sums of a [4, 2^21] f32 matrix of uniform values, each row against
/// its f64 sum, and the same for the scalar loop (columns of the transpose).
#[test]
fn f32_row_sums_of_random_values_within_log_bound() {
    let (m, n) = (4usize, 1usize << 21);
    let xs = uniform_f32(m * n, 21);
    let exact: Vec<f64> = xs
        .chunks(n)
        .map(|r| r.iter().map(|&x| x as f64).sum())
        .collect();
    let input = Buffer::F32(xs);
    // Vector: x[i, j] at i * n + j. Scalar: the same element addressed with
    // a symbolic innermost stride `s` = 1.
    for (inner, chain, lanes, block) in [(c(1), 67, 16, 1024), (sym("s"), 256, 1, 256)] {
        let mut kb = KernelBuilder::new("rowsum", &["m", "n", "s"], vec![sym("m"), sym("n")], 1);
        let x = kb.arg(DType::F32, false);
        let out = kb.arg(DType::F32, true);
        let v = kb.load(x, vec![sym("n"), inner.clone()]);
        kb.store(out, v);
        let k = kb.build();
        let bound = bound(depth(n, chain, lanes, block), U32);
        for (isa, out) in run_all(&k, std::slice::from_ref(&input), &[m as i64, n as i64, 1]) {
            for (i, want) in exact.iter().enumerate() {
                let err = (out[0].get(i) - want).abs() / want;
                eprintln!("{isa}, {inner:?}, row {i}: relative error {err:.2e}, bound {bound:.2e}");
                assert!(
                    err <= bound,
                    "{isa}, {inner:?}, row {i}: {err:.2e} > {bound:.2e}"
                );
            }
        }
    }
}

/// `dot(x, y)` as fusion builds it, f32 over 2^22 uniform values: within
/// γ_{h+1} (one more rounding for each product) of the f64 dot product
/// (f32 products are exact in f64).
#[test]
fn f32_dot_within_log_bound() {
    let mut f = Function::new("dot");
    let ty = Type::new(DType::F32, Shape::vector(Dim::sym("n")));
    let x = f.add_param("x", ty.clone());
    let y = f.add_param("y", ty);
    let d = f.dot(x, y);
    f.outs.push(d);
    let program = fuse(&f).expect("fuse");
    assert_eq!(program.kernels.len(), 1);
    let k = &program.kernels[0];
    assert_eq!(k.reduce_dims, 1);
    let n = 1usize << 22;
    let (xs, ys) = (uniform_f32(n, 1), uniform_f32(n, 2));
    let exact: f64 = xs.iter().zip(&ys).map(|(&a, &b)| a as f64 * b as f64).sum();
    let inputs = [Buffer::F32(xs), Buffer::F32(ys)];
    let bound = bound(depth(n, 67, 16, 1024) + 1.0, U32);
    for (isa, out) in run_all(k, &inputs, &[n as i64]) {
        let err = (out[0].get(0) - exact).abs() / exact;
        eprintln!("dot {isa}: relative error {err:.2e}, bound {bound:.2e}");
        assert!(
            err <= bound,
            "{isa}: relative error {err:.2e} > {bound:.2e}"
        );
    }
}

/// (a, b, max(a, b), min(a, b)): NaN from either side; otherwise
/// `a > b ? a : b` and `a < b ? a : b`, so ±0 ties give `b`.
fn min_max_table() -> Vec<(f64, f64, f64, f64)> {
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    vec![
        (nan, 1.0, nan, nan),
        (1.0, nan, nan, nan),
        (nan, nan, nan, nan),
        (-inf, nan, nan, nan),
        (nan, inf, nan, nan),
        // JAX (IEEE maximum/minimum): max of ±0 is +0, min is -0, either order.
        (0.0, -0.0, 0.0, -0.0),
        (-0.0, 0.0, 0.0, -0.0),
        (-0.0, -0.0, -0.0, -0.0),
        (0.0, 0.0, 0.0, 0.0),
        (1.0, 2.0, 2.0, 1.0),
        (2.0, 1.0, 2.0, 1.0),
        (-inf, inf, inf, -inf),
        (3.5, 3.5, 3.5, 3.5),
    ]
}

/// Same value, with NaN equal to NaN and +0 distinct from -0.
fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a == b && a.is_sign_negative() == b.is_sign_negative())
}

/// out1 = max(x, y), out2 = min(x, y) over every table case at every
/// position of the vector body and of the scalar tail (vector path), and
/// through the scalar loop (symbolic stride); f32 and f64; every ISA; against
/// the table and against the kernel interpreter.
#[test]
fn max_min_nan_and_signed_zero() {
    let table = min_max_table();
    for ty in [DType::F32, DType::F64] {
        for inner in [c(1), sym("s")] {
            let mut kb = KernelBuilder::new("minmax", &["n", "s"], vec![sym("n")], 0);
            let (x, y) = (kb.arg(ty, false), kb.arg(ty, false));
            let (o1, o2) = (kb.arg(ty, true), kb.arg(ty, true));
            let (a, b) = (
                kb.load(x, vec![inner.clone()]),
                kb.load(y, vec![inner.clone()]),
            );
            let mx = kb.binary(BinaryOp::Max, a, b);
            let mn = kb.binary(BinaryOp::Min, a, b);
            kb.store(o1, mx);
            kb.store(o2, mn);
            let k = kb.build();
            // 13 cases × 9 shifts: each case meets every lane of a 4-lane
            // vector and the tail (n = 117 = 29 vectors + 1).
            let cases: Vec<_> = (0..9).flat_map(|_| table.iter().copied()).collect();
            let n = cases.len();
            let xs: Vec<f64> = cases.iter().map(|c| c.0).collect();
            let ys: Vec<f64> = cases.iter().map(|c| c.1).collect();
            let inputs = [Buffer::from_f64(ty, &xs), Buffer::from_f64(ty, &ys)];
            let sizes = [n as i64, 1];
            let mut want = with_outputs(&k, &sizes, &inputs);
            interp::run(&k, &mut want, &sizes).expect("interpreter");
            for (isa, out) in run_all(&k, &inputs, &sizes) {
                for (j, case) in cases.iter().enumerate() {
                    for (o, expect) in [(0, case.2), (1, case.3)] {
                        let got = out[o].get(j);
                        let what = if o == 0 { "max" } else { "min" };
                        let msg = format!(
                            "{isa} {ty} {inner:?}: {what}({}, {}) at {j}",
                            case.0, case.1
                        );
                        assert!(same(got, expect), "{msg} = {got}, expected {expect}");
                        let interp = want[2 + o].get(j);
                        assert!(same(got, interp), "{msg} = {got}, interpreter {interp}");
                    }
                }
            }
        }
    }
}

/// A reduction of max(x, y): a NaN in either operand, in the vector body or
/// in the tail, makes the sum NaN.
#[test]
fn max_nan_propagates_through_a_reduction() {
    for ty in [DType::F32, DType::F64] {
        let mut kb = KernelBuilder::new("summax", &["n"], vec![sym("n")], 1);
        let (x, y) = (kb.arg(ty, false), kb.arg(ty, false));
        let out = kb.arg(ty, true);
        let (a, b) = (kb.load(x, vec![c(1)]), kb.load(y, vec![c(1)]));
        let mx = kb.binary(BinaryOp::Max, a, b);
        kb.store(out, mx);
        let k = kb.build();
        let n = 1003usize;
        for (nan_in_x, at) in [(true, 5), (false, 5), (true, 1001), (false, 1002)] {
            let mut xs = vec![1.0; n];
            let mut ys = vec![0.5; n];
            if nan_in_x {
                xs[at] = f64::NAN;
            } else {
                ys[at] = f64::NAN;
            }
            let inputs = [Buffer::from_f64(ty, &xs), Buffer::from_f64(ty, &ys)];
            for (isa, out) in run_all(&k, &inputs, &[n as i64]) {
                assert!(
                    out[0].get(0).is_nan(),
                    "{isa} {ty}: NaN at {at} (x: {nan_in_x})"
                );
            }
        }
    }
}

/// Issue 20, item 13: large values first, then many small ones, in f32.
/// The accumulator lanes used to add 64 elements in a row inside a block,
/// so each 2^24 swallowed the ones its lane added after it: 16 × 2^24 then
/// 2^22 ones summed to 272628736 (32 ulp below 272629760; JAX gives
/// 272629696, numpy 272629632). Each case: (input, exact sum as an
/// integer), the sum by every CPU executor at every ISA level this host
/// runs (the JIT's and the native kernels') within 4 ulp of the exact one.
fn big_then_small_cases_f32() -> Vec<(Vec<f32>, i64)> {
    let big = (1i64 << 24) as f32;
    let mut cases = Vec::new();
    // The input.
    let mut x = vec![big; 16];
    x.extend(std::iter::repeat_n(1.0f32, 1 << 22));
    cases.push((x, 16 * (1i64 << 24) + (1 << 22)));
    // 32 large values (every lane of a v3 block), then 2^21 ones.
    let mut x = vec![big; 32];
    x.extend(std::iter::repeat_n(1.0f32, 1 << 21));
    cases.push((x, 32 * (1i64 << 24) + (1 << 21)));
    // Negative large values first: the ones are lost the same way.
    let mut x = vec![-big; 16];
    x.extend(std::iter::repeat_n(1.0f32, 1 << 22));
    cases.push((x, -16 * (1i64 << 24) + (1 << 22)));
    // The large values at the start of a later block (not the first of the
    // row), then ones; an odd length so the row ends in a partial block.
    let mut x = vec![1.0f32; 3 * 4096];
    x.extend(std::iter::repeat_n(big, 16));
    x.extend(std::iter::repeat_n(1.0f32, (1 << 22) + 77));
    let ones = (x.len() - 16) as i64;
    cases.push((x, 16 * (1i64 << 24) + ones));
    // Below the threading threshold: 16 large values then 2^16 threes.
    let mut x = vec![big; 16];
    x.extend(std::iter::repeat_n(3.0f32, 1 << 16));
    cases.push((x, 16 * (1i64 << 24) + 3 * (1 << 16)));
    cases
}

/// The f32 ulp at `v` (the spacing of f32 values around |v|).
fn ulp_f32(v: f64) -> f64 {
    let f = v.abs() as f32;
    (f32::from_bits(f.to_bits() + 1) - f) as f64
}

#[test]
fn f32_sum_of_large_values_then_ones_is_within_4_ulp_on_every_executor() {
    let mut k = sum_kernel(DType::F32, Some(1));
    k.name = "sum_f32_contiguous".into();
    let natives: Vec<(IsaLevel, crate::accuracy::native::NativeModule)> = IsaLevel::ALL
        .into_iter()
        .filter(|l| oxla_cpu::host_supports(*l))
        .map(|l| {
            (
                l,
                crate::accuracy::native::NativeModule::compile(std::slice::from_ref(&k), l)
                    .unwrap(),
            )
        })
        .collect();
    for (case, (x, exact)) in big_then_small_cases_f32().into_iter().enumerate() {
        let n = x.len();
        let exact = exact as f64;
        let tol = 4.0 * ulp_f32(exact);
        let input = Buffer::F32(x);
        let mut got: Vec<(String, f64)> = run_all(&k, std::slice::from_ref(&input), &[n as i64, 1])
            .into_iter()
            .map(|(isa, out)| (format!("JIT {isa}"), out[0].get(0)))
            .collect();
        for (level, m) in &natives {
            let f = m.function_named(&k.name).expect("a native kernel");
            let mut bufs = with_outputs(&k, &[n as i64, 1], std::slice::from_ref(&input));
            run_checked(f, &k, &mut bufs, &[n as i64, 1]).expect("run");
            got.push((format!("native {level:?}"), bufs[1].get(0)));
        }
        let mut bufs = with_outputs(&k, &[n as i64, 1], std::slice::from_ref(&input));
        interp::run(&k, &mut bufs, &[n as i64, 1]).expect("interpreter");
        got.push(("kernel interpreter".into(), bufs[1].get(0)));
        for (who, v) in got {
            assert!(
                (v - exact).abs() <= tol,
                "case {case}, {who}: {v} vs exact {exact} ({} ulp)",
                (v - exact) / ulp_f32(exact)
            );
        }
    }
}

/// The same in f64: 16 × 2^53 then 2^20 ones (exact 2^57 + 2^20).
#[test]
fn f64_sum_of_large_values_then_ones_is_within_4_ulp_on_every_executor() {
    let mut k = sum_kernel(DType::F64, Some(1));
    k.name = "sum_f64_contiguous".into();
    let big = (1u64 << 53) as f64;
    let mut x = vec![big; 16];
    x.extend(std::iter::repeat_n(1.0f64, 1 << 20));
    let n = x.len();
    // Exact: 2^57 + 2^20; the f64 ulp there is 2^5.
    let exact = (1u64 << 57) as f64 + (1u64 << 20) as f64;
    let tol = 4.0 * 32.0;
    let input = Buffer::F64(x);
    let mut got: Vec<(String, f64)> = run_all(&k, std::slice::from_ref(&input), &[n as i64, 1])
        .into_iter()
        .map(|(isa, out)| (format!("JIT {isa}"), out[0].get(0)))
        .collect();
    for level in IsaLevel::ALL
        .into_iter()
        .filter(|l| oxla_cpu::host_supports(*l))
    {
        let m = crate::accuracy::native::NativeModule::compile(std::slice::from_ref(&k), level)
            .unwrap();
        let f = m.function_named(&k.name).expect("a native kernel");
        let mut bufs = with_outputs(&k, &[n as i64, 1], std::slice::from_ref(&input));
        run_checked(f, &k, &mut bufs, &[n as i64, 1]).expect("run");
        got.push((format!("native {level:?}"), bufs[1].get(0)));
    }
    for (who, v) in got {
        assert!((v - exact).abs() <= tol, "{who}: {v} vs exact {exact}");
    }
}
