//! The kernels of cond programs — the cond tests' functions, their
//! gradients, Hessians and batched forms, in f64 and f32 — which are the
//! top-level program's one list (both branches' kernels with the rest),
//! emitted for sm_80 and sm_90 and assembled by `ptxas` as one module per
//! architecture. Where `ptxas` is missing the emission still runs and the
//! assembly records a skip (see `ptxas_or_skip`). The CUDA runner refuses
//! a program with a cond step, as it does loop steps.

use crate::common;
use crate::support;

use common::cond::*;
use oxla_core::transforms::{grad, hessian, vmap};
use oxla_core::{text, Function, Kernel};
use oxla_ptx::Arch;
use support::{assemble_as_one_module, distinct_kernels, nested_kernels_are_listed};

fn functions() -> Vec<Function> {
    let mut out = Vec::new();
    for f in [branchy(), log_or_zero(false)] {
        let n = f.params.len();
        let wrt: Vec<usize> = (0..n).collect();
        out.push(grad(&f, &wrt).unwrap());
        out.push(hessian(&f, 0).unwrap());
        let mut axes = vec![None; n];
        axes[n - 1] = Some(0);
        if n > 1 {
            out.push(vmap(&grad(&f, &wrt).unwrap(), &axes).unwrap());
        }
        out.push(f);
    }
    let f32: Vec<Function> = out
        .iter()
        .map(|f| text::parse(&text::print(f).replace("f64", "f32")).unwrap())
        .collect();
    out.extend(f32);
    out
}

/// Every distinct kernel of the cond programs, with the function's name.
fn cond_kernels() -> Vec<(String, Kernel)> {
    let kernels = distinct_kernels(functions(), |f, p| {
        assert!(
            p.host_steps.iter().any(|s| s.as_cond().is_some()),
            "`{}` has no cond step",
            f.name
        );
        nested_kernels_are_listed(p);
    });
    assert!(kernels.len() > 20, "{}", kernels.len());
    kernels
}

fn check_arch(arch: Arch) {
    assemble_as_one_module(&cond_kernels(), arch, "conds");
}

#[test]
fn cond_programs_assemble_for_sm80() {
    check_arch(Arch::Sm80);
}

#[test]
fn cond_programs_assemble_for_sm90() {
    check_arch(Arch::Sm90);
}
