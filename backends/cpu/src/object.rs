//! Object files for the build helper (cranelift-object) and CLIF text dumps.

use crate::isa::{host_isa, level_isa, IsaLevel};
use crate::translate::{Target, Translator};
use cranelift_module::{default_libcall_names, Linkage};
use cranelift_object::{ObjectBuilder, ObjectModule};
use oxla_core::Kernel;

/// An object file exporting every kernel as `{name}_{level suffix}`
/// (position-independent, no unwind tables), for the host's triple.
pub fn emit_object(kernels: &[Kernel], isa: IsaLevel) -> Result<Vec<u8>, String> {
    let builder = ObjectBuilder::new(
        level_isa(isa, true)?,
        "oxla_kernels",
        default_libcall_names(),
    )
    .map_err(|e| format!("object builder: {e}"))?;
    let mut module = ObjectModule::new(builder);
    Translator::new().define_all(
        &mut module,
        kernels,
        |k| format!("{}_{}", k.name, isa.suffix()),
        Linkage::Export,
    )?;
    module
        .finish()
        .emit()
        .map_err(|e| format!("object emit: {e}"))
}

/// The Cranelift IR of `kernel` for the host ISA, before optimisation.
pub fn clif_text(kernel: &Kernel) -> Result<String, String> {
    let isa = host_isa(true)?;
    let mut translator = Translator::new();
    let func = translator.translate(kernel, &Target::of(&*isa))?;
    Ok(func.display().to_string())
}
