//! The build helper on a source file: every array function's kernels are
//! compiled for both ISA levels and listed in the manifest under the names
//! the macro will look for, and every PTX module assembles with `ptxas`.

use oxla_ptx::ptxas::{assemble, ptxas_or_skip};
use oxla_ptx::Arch;

const SOURCE: &str = r#"
#[oxla::jit]
pub fn fused_sum(x: &[f32], y: &[f32], z: &[f32]) -> f32 {
    sum(x * 2.0 * y + z)
}

#[oxla::vmap(per_example, in_axes = (None, 0, 0))]
#[oxla::grad(loss_grad, wrt = w)]
fn loss(w: &[f64], x: &[f64], y: f64) -> f64 {
    (1.0 + (-y * dot(w, x)).exp()).ln()
}

#[oxla::grad(df)]
fn scalar(x: f64, y: f64) -> f64 {
    x.sin() * y
}

mod inner {
    #[oxla::vmap(squares)]
    fn square(x: f32) -> f32 {
        x * x
    }
}
"#;

#[test]
fn kernels_objects_manifest_and_ptx() {
    let dir = std::env::temp_dir().join(format!("oxla-build-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("lib.rs");
    std::fs::write(&src, SOURCE).unwrap();
    let summary =
        oxla_build::compile_into(&[src.to_str().unwrap()], &dir, cfg!(target_arch = "x86_64"))
            .unwrap();

    for name in [
        "fused_sum",
        "loss",
        "loss_grad",
        "per_example",
        "scalar",
        "df",
        "square",
        "squares",
    ] {
        assert!(
            summary.functions.iter().any(|f| f == name),
            "{name} not found in {:?}",
            summary.functions
        );
    }
    // What the macro will ask for, computed the macro's way.
    let file = syn::parse_file(SOURCE).unwrap();
    let wanted: Vec<String> = oxla_lower::collect_from_file(&file)
        .iter()
        .flat_map(|g| oxla_lower::aot_symbols(&g.function))
        .collect();
    assert!(!wanted.is_empty());
    let manifest = std::fs::read_to_string(&summary.manifest).unwrap();
    if cfg!(target_arch = "x86_64") {
        // Per level, a native object and (for the kernels native code does
        // not cover) a Cranelift one.
        assert!(summary.native > 0);
        assert!(!summary.objects.is_empty());
        for s in &wanted {
            assert!(
                manifest.lines().any(|l| l == s),
                "{s} missing from the manifest"
            );
        }
        let objects: Vec<Vec<u8>> = summary
            .objects
            .iter()
            .map(|o| std::fs::read(o).unwrap())
            .collect();
        for suffix in ["v4", "v3", "base"] {
            for s in &wanted {
                let sym = format!("{s}_{suffix}");
                assert!(
                    objects
                        .iter()
                        .filter(|b| b.windows(sym.len()).any(|w| w == sym.as_bytes()))
                        .count()
                        == 1,
                    "{sym} is not defined by exactly one object"
                );
            }
        }
    }
    // Scalar functions are straight-line Rust and need no kernel.
    assert_eq!(
        summary.kernels.len(),
        wanted
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    );

    let Some(ptxas) = ptxas_or_skip() else { return };
    for (path, arch) in summary.ptx.iter().zip([Arch::Sm80, Arch::Sm90]) {
        let ptx = std::fs::read_to_string(path).unwrap();
        for k in &summary.kernels {
            assert!(
                ptx.contains(&format!(".entry {}", k.name)),
                "{} missing from {}",
                k.name,
                path.display()
            );
        }
        assemble(&ptxas, &ptx, arch, "oxla_build_test").unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Modification times of the native objects in `dir`, by file name.
fn native_objects(
    dir: &std::path::Path,
) -> std::collections::BTreeMap<String, std::time::SystemTime> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("oxla_native_") && n.ends_with(".o")
        })
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().modified().unwrap(),
            )
        })
        .collect()
}

/// A rebuild reuses every native object whose kernels did not change; an
/// edit of one function recompiles its bucket only, and the objects it
/// replaced are removed.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_rebuild_compiles_only_the_changed_functions_kernels() {
    // Enough functions for several buckets.
    let mut source = String::new();
    for i in 0..24 {
        source.push_str(&format!(
            "#[oxla::jit]\npub fn f{i}(x: &[f32], y: &[f32]) -> f32 {{\n    sum(x * {i}.5 + y * y)\n}}\n"
        ));
    }
    let dir = std::env::temp_dir().join(format!("oxla-build-cache-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("lib.rs");
    let build = |text: &str| {
        std::fs::write(&src, text).unwrap();
        oxla_build::compile_into(&[src.to_str().unwrap()], &dir, true).unwrap()
    };
    let first = build(&source);
    let before = native_objects(&dir);
    assert_eq!(before.len(), first.objects.len(), "{before:?}");
    assert!(
        before.len() >= 6,
        "several buckets at each level: {before:?}"
    );

    // Unchanged: nothing is compiled again.
    build(&source);
    assert_eq!(native_objects(&dir), before);

    // One function edited: one bucket per level is new, the rest kept.
    let after_edit = build(&source.replace("sum(x * 7.5 + y * y)", "sum(x * 7.25 + y * y)"));
    let after = native_objects(&dir);
    assert_eq!(
        after.len(),
        after_edit.objects.len(),
        "stale objects removed"
    );
    let kept = after
        .iter()
        .filter(|(n, t)| before.get(*n) == Some(*t))
        .count();
    assert_eq!(
        after.len() - kept,
        3,
        "one bucket at each of the 3 levels: {after:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
