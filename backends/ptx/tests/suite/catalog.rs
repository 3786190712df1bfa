//! The fused programs of every case of the core tests' catalog (its
//! function and its VJP) emitted for sm_80 and sm_90 and assembled by
//! `ptxas` as one module per architecture, every distinct kernel once.
//! Where `ptxas` is missing the emission still runs and the assembly
//! records a skip (see `ptxas_or_skip`).

use crate::common;
use crate::support;

use common::*;
use oxla_core::transforms::vjp;
use oxla_core::{Dim, Function, Kernel};
use oxla_ptx::Arch;
use support::{assemble_as_one_module, distinct_kernels};

/// The programs of a case: its function and its VJP. (Not the CPU test's
/// transposed-params forms: they change only the loads' strides, and the
/// assembly of every kernel is this suite's slowest step.)
fn functions(c: &Case) -> Vec<Function> {
    vec![c.f.clone(), vjp(&c.f)]
}

/// Every distinct kernel of the catalog's programs, with the name of a
/// function it came from.
fn catalog_kernels() -> Vec<(String, Kernel)> {
    let functions = catalog(&Dim::sym("n"))
        .iter()
        .flat_map(functions)
        .collect::<Vec<_>>();
    let kernels = distinct_kernels(functions, |_, _| {});
    assert!(kernels.len() > 100, "{}", kernels.len());
    kernels
}

/// Emit the catalog's kernels as one module for `arch` and assemble it.
fn check_arch(arch: Arch) {
    assemble_as_one_module(&catalog_kernels(), arch, "catalog");
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
