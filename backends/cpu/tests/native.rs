//! Native kernels (Rust source compiled by rustc at every ISA level the host
//! runs) against the kernel interpreter.

mod common;
#[path = "common/native.rs"]
mod native;

use common::{compare, random_inputs, tol, with_outputs};
use native::NativeModule;
use oxla_core::kernel::fusion::fuse;
use oxla_core::kernel::interp;
use oxla_core::{text, Kernel};
use oxla_cpu::{host_supports, run_checked, IsaLevel};

fn kernels_of(src: &str) -> Vec<Kernel> {
    let f = text::parse(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    fuse(&f).expect("fuse").kernels
}

/// Every kernel of `src` at every level, sizes from `sizes` (one value per
/// size symbol, in each kernel's order), against the interpreter.
fn check_src(src: &str, sizes: &[i64], lo: f64, hi: f64) {
    let kernels = kernels_of(src);
    for level in IsaLevel::ALL.into_iter().filter(|l| host_supports(*l)) {
        let m = NativeModule::compile(&kernels, level).unwrap_or_else(|e| panic!("{e}"));
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
        for n in [0, 1, 3, 17, 1000, 5000, 100_003] {
            check_src(&src, &[n], -3.0, 3.0);
        }
    }
}
