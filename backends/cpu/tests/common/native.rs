//! Native kernels in a test: the generated Rust source compiled by `rustc`
//! (the one on `PATH`, or `RUSTC`) into a shared library and loaded, so the
//! same code the build helper links runs against the interpreter here.

use oxla_core::{Kernel, KernelFn};
use oxla_cpu::native::compile;
use oxla_cpu::IsaLevel;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct NativeModule {
    lib: libloading::Library,
    suffix: &'static str,
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

impl NativeModule {
    /// Compile the kernels `supports` accepts at `level` (the host must run
    /// it). Unsupported kernels have no function.
    pub fn compile(kernels: &[Kernel], level: IsaLevel) -> Result<NativeModule, String> {
        // Integration tests have a target-dir scratch folder; the accuracy
        // example, which shares this file, uses the system's.
        let dir = option_env!("CARGO_TARGET_TMPDIR")
            .map_or_else(std::env::temp_dir, PathBuf::from)
            .join("oxla-native");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let id = format!(
            "k{}_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            level.suffix()
        );
        let src = dir.join(format!("{id}.rs"));
        let lib = dir.join(format!("lib{id}.so"));
        compile(kernels, level, "", "cdylib", &src, &lib)?;
        // SAFETY: the library is ours, just built from generated source with
        // no initialisers.
        let loaded = unsafe { libloading::Library::new(&lib) }.map_err(|e| e.to_string());
        // The loaded library stays mapped after its file is gone; hundreds
        // of these would otherwise fill the disk.
        let _ = std::fs::remove_file(&src);
        let _ = std::fs::remove_file(&lib);
        let lib = loaded?;
        Ok(NativeModule {
            lib,
            suffix: level.suffix(),
        })
    }

    /// The compiled function of the kernel named `name` (`Kernel::name`),
    /// if it was compiled (`supports` accepted it).
    pub fn function_named(&self, name: &str) -> Option<KernelFn> {
        let symbol = format!("{name}_{}", self.suffix);
        // SAFETY: the symbol was generated with the `KernelFn` signature;
        // the function pointer lives as long as `self.lib`, which the
        // caller keeps alive while calling it.
        unsafe { self.lib.get::<KernelFn>(symbol.as_bytes()).ok().map(|s| *s) }
    }
}
