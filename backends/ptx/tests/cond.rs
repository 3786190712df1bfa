//! The kernels of cond programs — the cond tests' functions, their
//! gradients, Hessians and batched forms, in f64 and f32 — which are the
//! top-level program's one list (both branches' kernels with the rest),
//! emitted for sm_80 and sm_90 and assembled by `ptxas` as one module per
//! architecture. Where `ptxas` is missing the emission still runs and the
//! assembly records a skip (see `ptxas_or_skip`). The CUDA runner refuses
//! a program with a cond step, as it does loop steps.

#[path = "../../../core/tests/common/mod.rs"]
mod common;

use common::cond::*;
use oxla_core::kernel::fusion::fuse;
use oxla_core::transforms::{grad, hessian, vmap};
use oxla_core::{text, Function, Kernel};
use oxla_ptx::ptxas::{assemble, ptxas_or_skip};
use oxla_ptx::{emit_kernel, emit_module, Arch};

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
    let mut kernels: Vec<(String, Kernel)> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for f in functions() {
        let p = fuse(&f).unwrap_or_else(|e| panic!("fuse `{}`: {e}", f.name));
        assert!(
            p.loops.iter().any(|s| s.otherwise.is_some()),
            "`{}` has no cond step",
            f.name
        );
        for s in &p.loops {
            for n in s.programs() {
                for (k, i) in n.program.kernels.iter().zip(&n.kernels) {
                    assert_eq!(&p.kernels[*i], k);
                }
            }
        }
        for k in p.kernels {
            if seen.insert(k.name.clone()) {
                kernels.push((f.name.clone(), k));
            }
        }
    }
    assert!(kernels.len() > 20, "{}", kernels.len());
    kernels
}

fn check_arch(arch: Arch) {
    let kernels = cond_kernels();
    let all: Vec<Kernel> = kernels.iter().map(|(_, k)| k.clone()).collect();
    let ptx = emit_module(&all, arch).unwrap_or_else(|e| panic!("{}: {e}", arch.name()));
    let Some(ptxas) = ptxas_or_skip() else { return };
    if let Err(e) = assemble(&ptxas, &ptx, arch, "conds") {
        for (f, k) in &kernels {
            let one = emit_kernel(k, arch).unwrap();
            assemble(&ptxas, &one, arch, &k.name)
                .unwrap_or_else(|e| panic!("a kernel of `{f}`: {e}"));
        }
        panic!("{e}");
    }
}

#[test]
fn cond_programs_assemble_for_sm80() {
    check_arch(Arch::Sm80);
}

#[test]
fn cond_programs_assemble_for_sm90() {
    check_arch(Arch::Sm90);
}
