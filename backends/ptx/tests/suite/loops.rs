//! The kernels of loop programs — the loop tests' functions, their
//! gradients, Hessians and batched forms, in f64 and f32 — which are the
//! top-level program's one list (the bodies' kernels with the rest),
//! emitted for sm_80 and sm_90 and assembled by `ptxas` as one module per
//! architecture. Where `ptxas` is missing the emission still runs and the
//! assembly records a skip (see `ptxas_or_skip`).

use crate::common;
use crate::support;

use common::loops::*;
use oxla_core::ops::control::Checkpoint;
use oxla_core::transforms::{grad, hessian, vmap};
use oxla_core::{text, Function, Kernel};
use oxla_ptx::Arch;
use support::{assemble_as_one_module, distinct_kernels, nested_kernels_are_listed};

fn functions() -> Vec<Function> {
    let mut out = Vec::new();
    for f in [
        horner(Checkpoint::Every(2)),
        newton(Checkpoint::All),
        coupled(Checkpoint::Sqrt),
    ] {
        out.push(grad(&f, &[0, 1]).unwrap());
        out.push(hessian(&f, 0).unwrap());
        out.push(f);
    }
    let h = horner(Checkpoint::All);
    let axes = [Some(0), None, None, Some(0), Some(0)];
    out.push(vmap(&grad(&h, &[0, 1]).unwrap(), &axes).unwrap());
    let f32: Vec<Function> = out
        .iter()
        .map(|f| text::parse(&text::print(f).replace("f64", "f32")).unwrap())
        .collect();
    out.extend(f32);
    out
}

/// Every distinct kernel of the loop programs, with the function's name.
fn loop_kernels() -> Vec<(String, Kernel)> {
    let kernels = distinct_kernels(functions(), |f, p| {
        assert!(!p.host_steps.is_empty(), "`{}` has no loop step", f.name);
        nested_kernels_are_listed(p);
    });
    assert!(kernels.len() > 20, "{}", kernels.len());
    kernels
}

fn check_arch(arch: Arch) {
    assemble_as_one_module(&loop_kernels(), arch, "loops");
}

#[test]
fn loop_programs_assemble_for_sm80() {
    check_arch(Arch::Sm80);
}

#[test]
fn loop_programs_assemble_for_sm90() {
    check_arch(Arch::Sm90);
}
