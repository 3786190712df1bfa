//! Every sample kernel, emitted for sm_80 and sm_90, must assemble with
//! `ptxas`. Where `ptxas` is missing the test records a skip and passes,
//! except with env `OXLA_REQUIRE_PTXAS=1` (set by `.ci/run`), where it fails.

use oxla_ptx::ptxas::{assemble, ptxas_or_skip};
use oxla_ptx::{emit_kernel, emit_module, samples, Arch};

#[test]
fn all_samples_assemble_as_one_module_for_sm80_and_sm90() {
    let Some(ptxas) = ptxas_or_skip() else { return };
    let kernels = samples::all();
    for arch in [Arch::Sm80, Arch::Sm90] {
        let ptx = emit_module(&kernels, arch).unwrap();
        if let Err(e) = assemble(&ptxas, &ptx, arch, "all") {
            // Narrow the failure to the first kernel that does not assemble.
            for k in &kernels {
                let one = emit_kernel(k, arch).unwrap();
                assemble(&ptxas, &one, arch, &k.name).unwrap();
            }
            panic!("{e}");
        }
    }
}
