//! Every case of the core tests' catalog — its function, its VJP, the
//! function with its rank-2+ params transposed (read through permuted
//! strides), and the function batched along last axes — fused, compiled
//! for the host ISA and for baseline SSE2, and run by the executor (also
//! with matrix products on `gemm`) against the reference interpreter on the
//! unfused function, in f64 and in f32, at sizes around the vector widths
//! of each (0, 1, 3, 4, 5, 15, 16, 17, 1025 and 0, 1, 7, 8, 9, 31, 32, 33,
//! 1025). Every kernel's outputs are pre-filled with a sentinel NaN before
//! it runs, so an element a kernel leaves unwritten is an error even where
//! the reference is NaN.

use crate::common as kernels;
use crate::ir_common as common;

use common::*;
use oxla_core::exec::{FnLauncher, Launcher, Program};
use oxla_core::kernel::fusion::fuse;
use oxla_core::transforms::{vjp, vmap_axes};
use oxla_core::{Buffer, Function, Kernel, Tensor};

/// Around the f64 vector widths (2 and 4 lanes, loops unrolled by 4) and
/// the f64 reduction block (512); 1025 only where it stays cheap.
const SIZES: [usize; 9] = [0, 1, 3, 4, 5, 15, 16, 17, 1025];

/// The same around the f32 vector widths (4 and 8 lanes, unrolled by 4)
/// and the f32 reduction block (1024).
const SIZES_F32: [usize; 9] = [0, 1, 7, 8, 9, 31, 32, 33, 1025];

/// Most elements of an argument or result at one binding.
const MAX_ELEMENTS: usize = 4_000;

/// The backends compute exp/log/sin/cos/tanh within 4 ulp (ARCHITECTURE.md,
/// "Math accuracy") and sum in another order than the reference:
/// blocked pairwise sums within (log₂k + 2)·eps·Σ|x| ≈ 14·1.1e-16·(4000·10)
/// ≈ 6e-11 for the ≤ 4000 terms of magnitude ≲ 10 here; gemm's blocked
/// sums within k·eps·Σ|a·b| ≈ 1025·1.1e-16·(1025·4) ≈ 5e-10 for the longest
/// contraction it runs (the VJP of a product, over n = 1025). Relative to
/// max(1, |want|), in the worst case of full cancellation: 1e-9.
const RTOL: f64 = 1e-9;

/// In f32 the reference rounds every value to f32 as the backends do, so
/// elementwise results differ by the math functions' ≲ 1.2 ulp, a few ulp
/// after a chain (~1e-6); sums differ by their order, typically
/// eps·√k·|x| ≲ 1e-5 for the longest sums here (every case passes at
/// 1e-5; 1e-4 leaves room for other seeds). A wrong element, stride or
/// loop tail is an O(1) error.
const RTOL_F32: f64 = 1e-4;

/// Runs `inner` after filling each output of the kernel with the sentinel.
struct Prefilled<'a> {
    kernels: &'a [Kernel],
    inner: &'a dyn Launcher,
}

impl Launcher for Prefilled<'_> {
    unsafe fn launch(&self, kernel: usize, args: &[*mut u8], sizes: &[i64]) {
        let k = &self.kernels[kernel];
        // A region kernel writes one part of a buffer another kernel has
        // (partly) written already: a pad's zeros, a concatenation's other
        // operands. The sentinel goes in before the first writer only.
        if k.stores.iter().any(|s| s.region.is_some()) {
            return unsafe { self.inner.launch(kernel, args, sizes) };
        }
        let len = k.output_len(sizes);
        for (a, ptr) in k.args.iter().zip(args) {
            if !a.output {
                continue;
            }
            let pattern = kernels::bits(&kernels::sentinel(a.dtype, 1), 0);
            // SAFETY: the executor passes output buffers of `len` elements.
            unsafe {
                match a.dtype.size_bytes() {
                    8 => std::slice::from_raw_parts_mut(*ptr as *mut u64, len).fill(pattern),
                    4 => std::slice::from_raw_parts_mut(*ptr as *mut u32, len).fill(pattern as u32),
                    2 => std::slice::from_raw_parts_mut(*ptr as *mut u16, len).fill(pattern as u16),
                    _ => std::slice::from_raw_parts_mut(*ptr, len).fill(pattern as u8),
                }
            }
        }
        unsafe { self.inner.launch(kernel, args, sizes) }
    }
}

/// `f` against the reference at every size of `sizes` for the symbols of
/// the case (all equal), a batch symbol that `vmap` added at `BATCH`
/// (bindings over `MAX_ELEMENTS` skipped), in every launcher, within
/// `rtol`.
fn check_program(
    c: &Case,
    f: &Function,
    ranges: &[(f64, f64)],
    seed: u64,
    sizes: &[usize],
    rtol: f64,
) -> usize {
    let sep = &c.sep;
    let case_syms = c.f.symbols();
    let p = fuse(f).unwrap_or_else(|e| panic!("fuse `{}`: {e}", f.name));
    let jit = kernels::Compiled::new(&p.kernels);
    let gemm = jit.with_gemm();
    let launchers: [(&str, &dyn Launcher); 3] = [
        ("JIT host", &FnLauncher(&jit.host)),
        ("JIT baseline", &FnLauncher(&jit.base)),
        ("JIT host, products on gemm", &gemm),
    ];
    let sizes: &[usize] = if f.symbols().is_empty() { &[1] } else { sizes };
    let mut runs = 0;
    for &size in sizes {
        // A size some slice of the case does not fit is left out (the
        // core fusion tests check that such a call is refused).
        let Ok(mut env) = try_env_all(f, size) else {
            continue;
        };
        for (s, v) in env.iter_mut() {
            if !case_syms.contains(s) {
                *v = BATCH;
            }
        }
        let too_big = f
            .params
            .iter()
            .chain(&f.outs)
            .any(|v| concrete(f.shape(*v), &env).iter().product::<usize>() > MAX_ELEMENTS);
        if too_big {
            continue;
        }
        let mut rng = rng(seed * 1009 + size as u64);
        let mut args = random_args_for(f, ranges, sep, &mut rng, &env);
        for a in &mut args {
            // Values of the parameter's type, for the reference too.
            a.data.iter_mut().for_each(|v| *v = a.dtype.round(*v));
        }
        let want = eval(f, &args);
        for (name, inner) in launchers {
            let launcher = Prefilled {
                kernels: &p.kernels,
                inner,
            };
            let got = kernels::run_program(&p, &launcher, &args);
            let ctx = format!("{name}: `{}` at {env:?}", f.name);
            compare(&ctx, &p, &got, &want, rtol);
            runs += 1;
        }
    }
    runs
}

fn compare(ctx: &str, p: &Program, got: &[Buffer], want: &[Tensor], rtol: f64) {
    assert_eq!(got.len(), want.len(), "{ctx}: outputs");
    for (o, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.len(), w.numel(), "{ctx}: output {o} length");
        if let Some(j) = kernels::unwritten(g) {
            panic!("{ctx}: output {o}[{j}] left unwritten\n{}", p.text());
        }
        let got: Vec<f64> = (0..g.len()).map(|j| g.get(j)).collect();
        assert_close(&format!("{ctx}: output {o}"), &got, &w.data, rtol);
    }
}

/// The batch size of the vmapped programs.
const BATCH: usize = 3;

/// The programs of a case: its function, its VJP, the function with
/// transposed params, and the function batched along the last axis of
/// every param and result (the program transposes the batch axis to the
/// front and back: strided loads and stores); each with the ranges of its
/// params.
fn programs(c: &Case) -> Vec<(Function, Vec<(f64, f64)>)> {
    let mut out = vec![(c.f.clone(), c.ranges.clone())];
    let mut vjp_ranges = c.ranges.clone();
    vjp_ranges.extend(vec![(-1.0, 1.0); c.f.outs.len()]);
    out.push((vjp(&c.f), vjp_ranges));
    if let Some(t) = with_transposed_params(&c.f) {
        out.push((t, c.ranges.clone()));
    }
    let last = |vs: &[oxla_core::Var]| -> Vec<Option<usize>> {
        vs.iter().map(|v| Some(c.f.shape(*v).rank())).collect()
    };
    let batched = vmap_axes(&c.f, &last(&c.f.params), &last(&c.f.outs))
        .unwrap_or_else(|e| panic!("vmap_axes `{}`: {e}", c.name));
    out.push((batched, c.ranges.clone()));
    out
}

/// `f` with every f64 value in f32: its text form with the type renamed.
fn in_f32(f: &Function) -> Function {
    let text = oxla_core::text::print(f);
    assert!(!text.contains("f32"), "{text}");
    let g = oxla_core::text::parse(&text.replace("f64", "f32"))
        .unwrap_or_else(|e| panic!("`{}` in f32: {e}", f.name));
    oxla_core::verify::verify(&g).unwrap();
    g
}

fn check_family(family: &str) {
    let cases: Vec<Case> = catalog(&oxla_core::Dim::sym("n"))
        .into_iter()
        .filter(|c| c.family == family)
        .collect();
    assert!(!cases.is_empty());
    let mut runs = 0;
    for (i, c) in cases.iter().enumerate() {
        for (j, (f, ranges)) in programs(c).iter().enumerate() {
            let seed = (10 * i + j) as u64;
            runs += check_program(c, f, ranges, seed, &SIZES, RTOL);
            let f32 = in_f32(f);
            runs += check_program(c, &f32, ranges, seed, &SIZES_F32, RTOL_F32);
        }
    }
    assert!(runs > 0);
}

// One test per op family of the catalog.
common::family_tests!(check_family);
