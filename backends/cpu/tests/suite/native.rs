//! Native kernels (Rust source compiled by rustc at every ISA level the host
//! runs) against the kernel interpreter.

use crate::accuracy::native;
use crate::common;

use common::{compare, random_inputs, tol, with_outputs};
use native::NativeModule;
use oxla_core::kernel::fusion::fuse;
use oxla_core::kernel::interp;
use oxla_core::{text, Buffer, Kernel};
use oxla_cpu::{host_supports, run_checked, IsaLevel};

fn kernels_of(src: &str) -> Vec<Kernel> {
    let f = text::parse(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    fuse(&f).expect("fuse").kernels
}

/// Every kernel of `src` at every level, for each size list of `cases`
/// (one value per size symbol, in each kernel's order), against the
/// interpreter.
fn check_src(src: &str, cases: &[Vec<i64>], lo: f64, hi: f64) {
    let kernels = kernels_of(src);
    for level in IsaLevel::ALL.into_iter().filter(|l| host_supports(*l)) {
        let m = NativeModule::compile(&kernels, level).unwrap_or_else(|e| panic!("{e}"));
        for sizes in cases {
            for (i, k) in kernels.iter().enumerate() {
                let f = m
                    .function_named(&k.name)
                    .unwrap_or_else(|| panic!("kernel {i} not native:\n{k}"));
                let sz = &sizes[..k.sizes.len()];
                let inputs = random_inputs(k, sz, 7, lo, hi);
                let mut want = with_outputs(k, sz, &inputs);
                interp::run(k, &mut want, sz).expect("interpreter");
                let mut got = with_outputs(k, sz, &inputs);
                run_checked(f, k, &mut got, sz).expect("run_checked");
                let t = tol(k.args.last().unwrap().dtype) * 4.0;
                if let Err(e) = compare(k, &got, &want, t) {
                    panic!("{level:?}: sizes {sz:?}: {e}\n{k}");
                }
            }
        }
    }
}

#[test]
fn fused_sums_match_the_interpreter() {
    for dtype in ["f32", "f64"] {
        let src = format!(
            "fn f(x %0: {dtype}[n], y %1: {dtype}[n]) {{
               %2: {dtype}[n] = tanh %0
               %3: {dtype}[n] = mul %1 %1
               %4: {dtype}[n] = neg %3
               %5: {dtype}[n] = exp %4
               %6: {dtype}[n] = mul %2 %5
               %7: {dtype}[] = reduce_sum[0] %6
               return %7
             }}"
        );
        let sizes: Vec<Vec<i64>> = [0, 1, 3, 17, 1000, 5000, 100_003]
            .iter()
            .map(|n| vec![*n])
            .collect();
        check_src(&src, &sizes, -3.0, 3.0);
    }
}

/// Each level is compiled for its own ISA, also when the target is the host
/// (as here): FMA at x86-64-v3 and up rounds `exp`'s polynomial steps once,
/// so some results differ in the last bit from the baseline build's.
#[test]
fn every_level_is_compiled_for_its_own_isa() {
    let kernels = kernels_of(
        "fn f(x %0: f32[n]) {
           %1: f32[n] = exp %0
           return %1
         }",
    );
    let run = |level: IsaLevel| {
        let m = NativeModule::compile(&kernels, level).unwrap_or_else(|e| panic!("{e}"));
        let f = m.function_named(&kernels[0].name).expect("native kernel");
        let n = 1 << 16;
        let x: Vec<f32> = (0..n)
            .map(|i| -80.0 + 160.0 * i as f32 / n as f32)
            .collect();
        let mut bufs = vec![Buffer::F32(x), Buffer::F32(vec![0.0; n])];
        run_checked(f, &kernels[0], &mut bufs, &[n as i64]).expect("run_checked");
        match bufs.pop() {
            Some(Buffer::F32(y)) => y,
            other => panic!("an f32 result, not {other:?}"),
        }
    };
    let base = run(IsaLevel::Baseline);
    for level in [IsaLevel::X86_64V3, IsaLevel::X86_64V4] {
        if cfg!(target_arch = "x86_64") && host_supports(level) {
            assert_ne!(
                run(level),
                base,
                "{level:?} computes as the baseline build does"
            );
        }
    }
}

/// Reductions of short elements (the register-lanes loop shape) of every
/// kind, at sizes around its group of `lanes` elements and its block of 64
/// groups, over one axis of a vector and rows, columns and all of a matrix.
#[test]
fn light_reductions_match_the_interpreter() {
    for dtype in ["f32", "f64"] {
        for (reduce, lo, hi) in [
            // Positive terms: the comparison is relative to the result.
            ("reduce_sum", 0.5, 1.5),
            ("reduce_max", -3.0, 3.0),
            ("reduce_min", -3.0, 3.0),
            ("reduce_prod", 0.97, 1.03),
        ] {
            let src = format!(
                "fn f(x %0: {dtype}[n], y %1: {dtype}[n], z %2: {dtype}[n]) {{
                   %3: {dtype}[n] = mul %0 %1
                   %4: {dtype}[n] = add %3 %2
                   %5: {dtype}[] = {reduce}[0] %4
                   return %5
                 }}"
            );
            let kernels = kernels_of(&src);
            for level in IsaLevel::ALL {
                let source = oxla_cpu::native::rust_source(&kernels, level);
                assert!(
                    source.contains("let mut r0_0"),
                    "not the register shape:\n{source}"
                );
            }
            let sizes: Vec<Vec<i64>> = [
                0, 1, 3, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1000, 1023, 1024, 1025, 4095, 4096,
                4097, 65_541,
            ]
            .iter()
            .map(|n| vec![*n])
            .collect();
            check_src(&src, &sizes, lo, hi);
            for (axes, shape) in [("1", "m"), ("0", "n"), ("0,1", "")] {
                let src = format!(
                    "fn f(x %0: {dtype}[m, n]) {{
                       %1: {dtype}[m, n] = mul %0 %0
                       %2: {dtype}[{shape}] = {reduce}[{axes}] %1
                       return %2
                     }}"
                );
                let symbols = kernels_of(&src)[0].sizes.clone();
                let sizes: Vec<Vec<i64>> = [
                    (1, 1),
                    (3, 65),
                    (65, 3),
                    (5, 1029),
                    (300, 7),
                    (0, 4),
                    (4, 0),
                ]
                .iter()
                .map(|(m, n)| {
                    let size = |s: &String| if s == "m" { *m } else { *n };
                    symbols.iter().map(size).collect()
                })
                .collect();
                check_src(&src, &sizes, lo.max(0.5), hi.min(1.02));
            }
        }
    }
}
