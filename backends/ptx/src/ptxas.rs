//! Assembling PTX with `ptxas`, to validate generated kernels without a GPU.
//! `ptxas` ships in the PyPI wheel `nvidia-cuda-nvcc-cu12`.

use crate::Arch;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `ptxas` from env `OXLA_PTXAS`, else `PATH`, else the PyPI package
/// `nvidia-cuda-nvcc-cu12` (asked of `python3`).
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("OXLA_PTXAS") {
        return Some(PathBuf::from(p));
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join("ptxas");
            if p.is_file() {
                return Some(p);
            }
        }
    }
    let out = Command::new("python3")
        .args(["-c", "import nvidia.cuda_nvcc as m; print(m.__path__[0])"])
        .output()
        .ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    let p = Path::new(dir.trim()).join("bin").join("ptxas");
    p.is_file().then_some(p)
}

/// `ptxas` for a test: `None` (after saying "skipped") where it is missing,
/// except under CI (env `CI` set), where a missing `ptxas` fails the test.
pub fn ptxas_or_skip() -> Option<PathBuf> {
    let p = find_ptxas();
    if p.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "ptxas not found under CI (set OXLA_PTXAS or install nvidia-cuda-nvcc-cu12)"
        );
        println!("skipped: ptxas not found");
    }
    p
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
