//! The fused programs of every case of the core tests' catalog (its
//! function and its VJP) emitted for sm_80 and sm_90 and assembled by
//! `ptxas` as one module per architecture, every distinct kernel once.
//! Where `ptxas` is missing the emission still runs and the assembly
//! records a skip (see `ptxas_or_skip`).

#[path = "../../../core/tests/common/mod.rs"]
mod common;

use common::*;
use oxla_core::kernel::fusion::fuse;
use oxla_core::transforms::vjp;
use oxla_core::{Dim, Function, Kernel};
use oxla_ptx::ptxas::{assemble, ptxas_or_skip};
use oxla_ptx::{emit_kernel, emit_module, Arch};

/// The programs of a case: its function and its VJP. (Not the CPU test's
/// transposed-params forms: they change only the loads' strides, and the
/// assembly of every kernel is this suite's slowest step.)
fn functions(c: &Case) -> Vec<Function> {
    vec![c.f.clone(), vjp(&c.f)]
}

/// Every distinct kernel of the catalog's programs, with the name of a
/// function it came from.
fn catalog_kernels() -> Vec<(String, Kernel)> {
    let mut kernels: Vec<(String, Kernel)> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for c in catalog(&Dim::sym("n")) {
        for f in functions(&c) {
            let p = fuse(&f).unwrap_or_else(|e| panic!("fuse `{}`: {e}", f.name));
            for k in p.kernels {
                if seen.insert(k.name.clone()) {
                    kernels.push((f.name.clone(), k));
                }
            }
        }
    }
    assert!(kernels.len() > 100, "{}", kernels.len());
    kernels
}

/// Emit the catalog's kernels as one module for `arch` and assemble it.
fn check_arch(arch: Arch) {
    let kernels = catalog_kernels();
    let all: Vec<Kernel> = kernels.iter().map(|(_, k)| k.clone()).collect();
    let ptx = emit_module(&all, arch).unwrap_or_else(|e| panic!("{}: {e}", arch.name()));
    let Some(ptxas) = ptxas_or_skip() else { return };
    if let Err(e) = assemble(&ptxas, &ptx, arch, "catalog") {
        // Narrow the failure to the first kernel that does not assemble.
        for (f, k) in &kernels {
            let one = emit_kernel(k, arch).unwrap();
            assemble(&ptxas, &one, arch, &k.name)
                .unwrap_or_else(|e| panic!("a kernel of `{f}`: {e}"));
        }
        panic!("{e}");
    }
}

// One test per architecture, so the two assemblies run in parallel.
#[test]
fn catalog_programs_assemble_for_sm80() {
    check_arch(Arch::Sm80);
}

#[test]
fn catalog_programs_assemble_for_sm90() {
    check_arch(Arch::Sm90);
}
