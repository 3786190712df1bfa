//! oxla-build: compile oxla functions ahead of time from a build script.
//!
//! ```no_run
//! // build.rs
//! fn main() {
//!     oxla_build::compile(&["src/main.rs"]);
//! }
//! ```
//!
//! For every function annotated with an oxla attribute in the named files,
//! this runs the same lowering and transforms as the macros (`oxla-lower`),
//! fuses each array function into kernels, and emits
//! - CPU object code for three x86-64 levels (v4: AVX-512; v3: AVX2 + FMA;
//!   baseline SSE2), archived as a static library that cargo links. Kernels
//!   that `oxla_cpu::native` covers are written as Rust source and compiled
//!   by the `rustc` cargo runs this build script with (`RUSTC`), optimized,
//!   once per level, so they use the full vector width and are fast in the
//!   user's debug builds too; the others are compiled by Cranelift
//!   (`cranelift-object`);
//! - PTX modules for `sm_80` and `sm_90`;
//! - a manifest of kernel symbols, whose path reaches the macros through
//!   `cargo:rustc-env=OXLA_AOT_MANIFEST`. A macro binds a function to the
//!   compiled kernels only when every one of its kernels is listed there, so
//!   the two sides agree by construction: both name a kernel by the hash of
//!   its canonical text (`Kernel::symbol`). An array function whose kernels
//!   are not listed (its file was not named here, or the build is stale)
//!   compiles with a warning naming it and runs on the JIT; with
//!   `Options::require_aot` (see `compile_with`) that is a compile error.

// The crate example is a whole `build.rs`, `main` included.
#![allow(clippy::needless_doctest_main)]

use oxla_core::kernel::fusion::fuse;
use oxla_core::Kernel;
use oxla_cpu::IsaLevel;
use std::path::{Path, PathBuf};

/// What one `compile` call produced.
#[derive(Debug)]
pub struct Summary {
    /// Generated functions lowered from the sources.
    pub functions: Vec<String>,
    /// Distinct kernels compiled.
    pub kernels: Vec<Kernel>,
    /// Object files: per ISA level, the native kernels' and Cranelift's
    /// (none for a non-x86-64 target).
    pub objects: Vec<PathBuf>,
    /// How many of `kernels` are native (compiled by rustc).
    pub native: usize,
    /// PTX modules for sm_80 and sm_90.
    pub ptx: Vec<PathBuf>,
    pub manifest: PathBuf,
}

/// Choices for `compile_with`.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Make it a compile error for an annotated array function of this crate
    /// to fall back to the JIT because its kernels are not in the manifest
    /// (its file is not listed in `sources`, or the build is stale). Without
    /// it, such a function compiles with a warning naming it.
    pub require_aot: bool,
}

/// Compile the oxla functions found in `sources` (paths relative to the
/// package root) and tell cargo to link them. Panics with a readable message
/// on failure, as build scripts do.
pub fn compile(sources: &[&str]) -> Summary {
    compile_with(sources, &Options::default())
}

/// `compile`, with `options`.
pub fn compile_with(sources: &[&str], options: &Options) -> Summary {
    let out_dir =
        PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo for build scripts"));
    let target = std::env::var("TARGET").unwrap_or_default();
    let summary = match compile_into(sources, &out_dir, target.starts_with("x86_64")) {
        Ok(s) => s,
        Err(e) => panic!("oxla-build: {e}"),
    };
    if !summary.objects.is_empty() {
        let mut archive = cc::Build::new();
        for o in &summary.objects {
            archive.object(o);
        }
        archive.cargo_warnings(false).compile("oxla_kernels");
    }
    println!(
        "cargo:rustc-env={}={}",
        oxla_lower::AOT_MANIFEST_ENV,
        summary.manifest.display()
    );
    if options.require_aot {
        println!("cargo:rustc-env={}=1", oxla_lower::AOT_REQUIRED_ENV);
    }
    summary
}

/// The work of `compile` short of linking: write object files (only when
/// `native_objects`, i.e. for an x86-64 target), PTX and the manifest into
/// `out_dir`. The manifest lists the kernels only when objects were written.
pub fn compile_into(
    sources: &[&str],
    out_dir: &Path,
    native_objects: bool,
) -> Result<Summary, String> {
    let mut functions = Vec::new();
    let mut kernels: Vec<Kernel> = Vec::new();
    // All files first: a function may call a helper of another file.
    let mut files = Vec::new();
    for src in sources {
        println!("cargo:rerun-if-changed={src}");
        let text = std::fs::read_to_string(src).map_err(|e| format!("reading {src}: {e}"))?;
        files.push(syn::parse_file(&text).map_err(|e| format!("parsing {src}: {e}"))?);
    }
    {
        for g in oxla_lower::collect_from_files(&files) {
            functions.push(g.function.name.clone());
            // The macro emits these as straight-line Rust: no kernels.
            if oxla_lower::is_straight_line(&g.function) {
                continue;
            }
            let program =
                fuse(&g.function).map_err(|e| format!("fusing `{}`: {e}", g.function.name))?;
            for k in program.kernels {
                if !kernels.iter().any(|x| x.name == k.name) {
                    kernels.push(k);
                }
            }
        }
    }
    let manifest = out_dir.join("oxla_kernels.manifest");
    let write = |path: &Path, bytes: &[u8]| {
        std::fs::write(path, bytes).map_err(|e| format!("writing {}: {e}", path.display()))
    };
    let mut listed = String::new();
    let mut objects = Vec::new();
    if !native_objects {
        listed.push_str(oxla_lower::MANIFEST_NO_OBJECTS);
        listed.push('\n');
    }
    let (native, cranelift): (Vec<Kernel>, Vec<Kernel>) = kernels
        .iter()
        .cloned()
        .partition(|k| oxla_cpu::native::supports(k).is_ok());
    if native_objects && !kernels.is_empty() {
        let target = std::env::var("TARGET").unwrap_or_default();
        for isa in IsaLevel::ALL {
            if !cranelift.is_empty() {
                let path = out_dir.join(format!("oxla_kernels_{}.o", isa.suffix()));
                write(&path, &oxla_cpu::emit_object(&cranelift, isa)?)?;
                objects.push(path);
            }
            if !native.is_empty() {
                objects.push(compile_native(&native, isa, &target, out_dir)?);
            }
        }
        for k in &kernels {
            listed.push_str(&k.name);
            listed.push('\n');
        }
    }
    let mut ptx = Vec::new();
    for arch in [oxla_ptx::Arch::Sm80, oxla_ptx::Arch::Sm90] {
        let path = out_dir.join(format!("oxla_kernels_{}.ptx", arch.name()));
        write(&path, oxla_ptx::emit_module(&kernels, arch)?.as_bytes())?;
        ptx.push(path);
    }
    write(&manifest, listed.as_bytes())?;
    Ok(Summary {
        functions,
        native: native.len(),
        kernels,
        objects,
        ptx,
        manifest,
    })
}

/// Write the native kernels' Rust source for `level` and compile it into an
/// object file with `RUSTC` (cargo's compiler; `rustc` outside a build
/// script) for `target` (empty: the host).
fn compile_native(
    kernels: &[Kernel],
    level: IsaLevel,
    target: &str,
    out_dir: &Path,
) -> Result<PathBuf, String> {
    let crate_name = format!("oxla_native_{}", level.suffix());
    let src = out_dir.join(format!("{crate_name}.rs"));
    let obj = out_dir.join(format!("{crate_name}.o"));
    oxla_cpu::native::compile(kernels, level, target, "lib", &src, &obj)?;
    Ok(obj)
}
