//! Assembling PTX with `ptxas`, to validate generated kernels without a GPU.
//! `ptxas` ships in the PyPI wheel `nvidia-cuda-nvcc-cu12`.

use crate::Arch;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `ptxas` from env `OXLA_PTXAS`, else `PATH`, else the PyPI package
/// `nvidia-cuda-nvcc-cu12` (asked of `python3`). An `OXLA_PTXAS` that names
/// no file is `None`, with no fallback: a wrong explicit choice must not be
/// replaced silently by another `ptxas`.
pub fn find_ptxas() -> Option<PathBuf> {
    locate().ok()
}

/// Where `ptxas` is, or why it was not found.
fn locate() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("OXLA_PTXAS") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "ptxas not found (OXLA_PTXAS={} is not a file)",
                p.display()
            ))
        };
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join("ptxas");
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    let missing =
        || "ptxas not found (OXLA_PTXAS, PATH, python3 package nvidia.cuda_nvcc)".to_string();
    let out = Command::new("python3")
        .args(["-c", "import nvidia.cuda_nvcc as m; print(m.__path__[0])"])
        .output()
        .map_err(|_| missing())?;
    let dir = String::from_utf8(out.stdout).map_err(|_| missing())?;
    let p = Path::new(dir.trim()).join("bin").join("ptxas");
    if out.status.success() && p.is_file() {
        Ok(p)
    } else {
        Err(missing())
    }
}

/// Whether env `var` is set to something other than empty or `0`.
pub fn env_flag(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| !v.is_empty() && v != "0")
}

/// `ptxas` for a test: where it is missing, `None` after [`record_skip`],
/// except with env `OXLA_REQUIRE_PTXAS` set (see [`env_flag`]), where the
/// test fails.
pub fn ptxas_or_skip() -> Option<PathBuf> {
    match locate() {
        Ok(p) => Some(p),
        Err(why) => {
            assert!(
                !env_flag("OXLA_REQUIRE_PTXAS"),
                "{why}, and OXLA_REQUIRE_PTXAS is set (install nvidia-cuda-nvcc-cu12 or set OXLA_PTXAS)"
            );
            record_skip(&why);
            None
        }
    }
}

/// Record that the running test skipped its work (or part of it) for
/// `reason`: print `skipped: <reason>` and append the line
/// `<test binary> <test name>: <reason>` to the file named by env
/// `OXLA_SKIP_LOG`, if set, so a CI run can count and list its skips (a
/// skipped test still shows as passed in libtest's own output).
pub fn record_skip(reason: &str) {
    println!("skipped: {reason}");
    let Some(log) = std::env::var_os("OXLA_SKIP_LOG") else {
        return;
    };
    // libtest runs each test on a thread named after it.
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("<unnamed test>");
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|s| match s.rsplit_once('-') {
            // Cargo names test binaries `<name>-<16 hex digits>`.
            Some((name, hash)) if hash.len() == 16 => name.to_string(),
            _ => s,
        })
        .unwrap_or_default();
    let line = format!("{binary} {test}: {reason}\n");
    // One `write` of one short line to a file opened for appending: lines
    // from concurrent tests do not interleave.
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
    if let Err(e) = written {
        panic!("OXLA_SKIP_LOG={}: {e}", Path::new(&log).display());
    }
}

/// Assemble `ptx` for `arch`; the error holds ptxas's messages and the text.
pub fn assemble(ptxas: &Path, ptx: &str, arch: Arch, tag: &str) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("oxla-ptx-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let src = dir.join(format!("{tag}_{}.ptx", arch.name()));
    let obj = dir.join(format!("{tag}_{}.cubin", arch.name()));
    std::fs::write(&src, ptx).map_err(|e| e.to_string())?;
    let out = Command::new(ptxas)
        .arg(format!("-arch={}", arch.name()))
        .arg("-o")
        .arg(&obj)
        .arg(&src)
        .output()
        .map_err(|e| format!("running ptxas: {e}"))?;
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&obj);
    if out.status.success() {
        Ok(())
    } else {
        let numbered: Vec<String> = ptx
            .lines()
            .enumerate()
            .map(|(i, l)| format!("{:5} {l}", i + 1))
            .collect();
        Err(format!(
            "ptxas failed for {tag} ({}):\n{}\n{}",
            arch.name(),
            String::from_utf8_lossy(&out.stderr),
            numbered.join("\n")
        ))
    }
}
