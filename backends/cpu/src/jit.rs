//! In-process compilation with cranelift-jit.

use crate::isa::{host_isa, level_isa, IsaLevel};
use crate::translate::Translator;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage};
use oxla_core::{Kernel, KernelFn};

/// Machine code for a list of kernels, callable while this value lives.
pub struct JitModule {
    /// Owns the executable memory; `None` only during drop.
    module: Option<JITModule>,
    functions: Vec<KernelFn>,
}

// SAFETY: after `compile` returns, the `JITModule` is never touched again
// except to free its memory in `drop` (which has `&mut self`), so its
// non-thread-safe parts (a `RefCell` symbol cache, raw pointers) are never
// accessed concurrently. What `&self` hands out are plain function pointers
// into finalized, read-only executable memory, which any thread may call.
unsafe impl Send for JitModule {}
// SAFETY: as above: `&self` only reads `functions`.
unsafe impl Sync for JitModule {}

impl JitModule {
    /// Compile `kernels` for the host CPU, with every feature it has.
    pub fn compile(kernels: &[Kernel]) -> Result<JitModule, String> {
        Self::compile_with(kernels, host_isa(false)?)
    }

    /// Compile `kernels` at a fixed ISA level (the code the object files hold),
    /// to run here; the host must support `level`.
    pub fn compile_at(kernels: &[Kernel], level: IsaLevel) -> Result<JitModule, String> {
        if !crate::isa::host_supports(level) {
            return Err(format!("this CPU cannot run {level:?} code"));
        }
        Self::compile_with(kernels, level_isa(level, false)?)
    }

    fn compile_with(kernels: &[Kernel], isa: OwnedTargetIsa) -> Result<JitModule, String> {
        let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
        // The slow-path helpers kernels import (see `math::sin_cos`).
        for (name, address) in crate::math::helper_symbols() {
            builder.symbol(name, address);
        }
        let mut module = JITModule::new(builder);
        let ids = Translator::new().define_all(
            &mut module,
            kernels,
            |k| k.name.clone(),
            Linkage::Local,
        )?;
        module
            .finalize_definitions()
            .map_err(|e| format!("JIT finalize: {e}"))?;
        let functions = ids
            .into_iter()
            .map(|id| {
                let code = module.get_finalized_function(id);
                // SAFETY: `code` is the entry of a finalized function whose
                // signature `Translator` built as the kernel calling convention
                // (two pointer arguments, no result, the platform C ABI).
                unsafe { std::mem::transmute::<*const u8, KernelFn>(code) }
            })
            .collect();
        Ok(JitModule {
            module: Some(module),
            functions,
        })
    }

    /// The compiled `kernels[i]`. The pointer is valid while `self` lives;
    /// call it through `run_checked`.
    pub fn function(&self, i: usize) -> KernelFn {
        self.functions[i]
    }

    pub fn len(&self) -> usize {
        self.functions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.functions.is_empty()
    }
}

impl Drop for JitModule {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: the functions are only reachable through `self`, which
            // is being dropped, so none runs now; pointers a caller copied out
            // are documented to be valid only while `self` lives.
            unsafe { module.free_memory() };
        }
    }
}
