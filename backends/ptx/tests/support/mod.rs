//! What the program-assembly tests share: the distinct kernels of a set of
//! functions, and their assembly as one module per architecture.
#![allow(dead_code)]

use oxla_core::exec::Program;
use oxla_core::kernel::fusion::fuse;
use oxla_core::{Function, Kernel};
use oxla_ptx::ptxas::{assemble, ptxas_or_skip};
use oxla_ptx::{emit_kernel, emit_module, Arch};

/// Every distinct kernel of the fused `functions`, with the name of the
/// function it came from; `check` sees each fused program first.
pub fn distinct_kernels(
    functions: impl IntoIterator<Item = Function>,
    check: impl Fn(&Function, &Program),
) -> Vec<(String, Kernel)> {
    let mut kernels: Vec<(String, Kernel)> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for f in functions {
        let p = fuse(&f).unwrap_or_else(|e| panic!("fuse `{}`: {e}", f.name));
        check(&f, &p);
        for k in p.kernels {
            if seen.insert(k.name.clone()) {
                kernels.push((f.name.clone(), k));
            }
        }
    }
    kernels
}

/// Every nested program's kernels (a loop body's, a cond branch's) are in
/// the program's one list.
pub fn nested_kernels_are_listed(p: &Program) {
    for s in &p.host_steps {
        for n in s.programs() {
            for (k, i) in n.program.kernels.iter().zip(&n.kernels) {
                assert_eq!(&p.kernels[*i], k);
            }
        }
    }
}

/// Emit `kernels` as one module for `arch` and assemble it (`module` names
/// it); on failure, narrow it to the first kernel that does not assemble.
/// Where `ptxas` is missing the emission still runs and a skip is recorded.
pub fn assemble_as_one_module(kernels: &[(String, Kernel)], arch: Arch, module: &str) {
    let all: Vec<Kernel> = kernels.iter().map(|(_, k)| k.clone()).collect();
    let ptx = emit_module(&all, arch).unwrap_or_else(|e| panic!("{}: {e}", arch.name()));
    let Some(ptxas) = ptxas_or_skip() else { return };
    if let Err(e) = assemble(&ptxas, &ptx, arch, module) {
        for (f, k) in kernels {
            let one = emit_kernel(k, arch).unwrap();
            assemble(&ptxas, &one, arch, &k.name)
                .unwrap_or_else(|e| panic!("a kernel of `{f}`: {e}"));
        }
        panic!("{e}");
    }
}
