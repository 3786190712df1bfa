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
