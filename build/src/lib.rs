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
    // The first function (in the sources' order) that has each kernel.
    let mut owner = std::collections::HashMap::new();
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
                    owner.insert(k.name.clone(), g.function.name.clone());
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
        }
        objects.extend(compile_native_objects(&native, &owner, &target, out_dir)?);
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

/// The most buckets the native kernels are cut into (see `compile_native_objects`).
const MAX_BUCKETS: usize = 4;
/// Kernels per bucket before another bucket is opened.
const KERNELS_PER_BUCKET: usize = 8;
/// The prefix of the native objects' (and their sources') file names.
const NATIVE_PREFIX: &str = "oxla_native_";

/// The native kernels compiled into object files at every ISA level, with
/// `RUSTC` (cargo's compiler; `rustc` outside a build script) for `target`
/// (empty: the host).
///
/// A rebuild after an edit recompiles only what changed: the kernels are
/// cut into buckets by a hash of the name of the function they come from
/// (`owner`: the first to have the kernel), so that an edit of one function
/// changes one bucket (up to `MAX_BUCKETS`, one per `KERNELS_PER_BUCKET`
/// kernels), and each bucket's object is named by
/// a hash of its Rust source, the compiler's flags and the compiler's
/// version. An object already in `out_dir` under its name is reused; the
/// others are compiled, side by side on the machine's cores, each written
/// under a temporary name and renamed when complete (a build stopped midway
/// leaves no object under a valid name). Objects (and sources) no longer
/// named are removed.
fn compile_native_objects(
    native: &[Kernel],
    owner: &std::collections::HashMap<String, String>,
    target: &str,
    out_dir: &Path,
) -> Result<Vec<PathBuf>, String> {
    if native.is_empty() {
        return Ok(Vec::new());
    }
    let n_buckets = native
        .len()
        .div_ceil(KERNELS_PER_BUCKET)
        .clamp(1, MAX_BUCKETS);
    let mut buckets: Vec<Vec<Kernel>> = vec![Vec::new(); n_buckets];
    for k in native {
        let function = owner.get(&k.name).unwrap_or(&k.name);
        buckets[(fnv1a(function.as_bytes()) % n_buckets as u64) as usize].push(k.clone());
    }
    for b in &mut buckets {
        b.sort_by(|x, y| x.name.cmp(&y.name));
    }
    let compiler = compiler_version();
    let mut objects = Vec::new();
    let mut jobs = Vec::new();
    for level in IsaLevel::ALL {
        let flags = oxla_cpu::native::NativeLevel::rustc_flags(level, target).join(" ");
        for bucket in buckets.iter().filter(|b| !b.is_empty()) {
            let source = oxla_cpu::native::rust_source(bucket, level);
            let key = fnv1a(format!("{source}\n{flags}\n{target}\n{compiler}").as_bytes());
            let name = format!("{NATIVE_PREFIX}{}_{key:016x}", level.suffix());
            let obj = out_dir.join(format!("{name}.o"));
            if !obj.exists() {
                jobs.push((bucket, level, name));
            }
            objects.push(obj);
        }
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let errors: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.min(jobs.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut errors = Vec::new();
                    loop {
                        let j = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((bucket, level, name)) = jobs.get(j) else {
                            return errors;
                        };
                        if let Err(e) = compile_native(bucket, *level, target, out_dir, name) {
                            errors.push(e);
                        }
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| {
                w.join()
                    .unwrap_or_else(|_| vec!["a compile thread panicked".into()])
            })
            .collect()
    });
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    remove_stale(out_dir, &objects);
    Ok(objects)
}

/// Compile one bucket at `level` into `out_dir/name.o`, through a temporary
/// file renamed when complete.
fn compile_native(
    kernels: &[Kernel],
    level: IsaLevel,
    target: &str,
    out_dir: &Path,
    name: &str,
) -> Result<(), String> {
    let src = out_dir.join(format!("{name}.rs"));
    let partial = out_dir.join(format!("{name}.o.partial"));
    let obj = out_dir.join(format!("{name}.o"));
    oxla_cpu::native::compile(kernels, level, target, "lib", &src, &partial)?;
    std::fs::rename(&partial, &obj)
        .map_err(|e| format!("renaming {} to {}: {e}", partial.display(), obj.display()))
}

/// Remove the native objects and sources in `out_dir` that `keep` does not
/// name (left by earlier builds).
fn remove_stale(out_dir: &Path, keep: &[PathBuf]) {
    let Ok(entries) = std::fs::read_dir(out_dir) else {
        return;
    };
    let kept: std::collections::HashSet<_> = keep
        .iter()
        .filter_map(|o| o.file_stem().map(|s| s.to_os_string()))
        .collect();
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        let stem = name.split('.').next().unwrap_or_default();
        if name.starts_with(NATIVE_PREFIX) && !kept.contains(std::ffi::OsStr::new(stem)) {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The compiler's `-vV` (its version, commit and host), part of every
/// object's key; empty if it cannot be run (the compile then fails anyway).
fn compiler_version() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    std::process::Command::new(&rustc)
        .arg("-vV")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// FNV-1a, 64 bits: a hash that is the same on every machine and version.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}
