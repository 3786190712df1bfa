//! What code generation needs to know beyond the IR: the build script's
//! manifest of ahead-of-time kernels, and the environment variables by which
//! the build helper and the macro agree on it.

use proc_macro2::Span;
use std::collections::BTreeSet;

/// The environment variable naming the manifest of AOT-compiled kernels.
pub const AOT_MANIFEST_ENV: &str = "OXLA_AOT_MANIFEST";

/// The environment variable that, set to `1` (by
/// `oxla_build::Options::require_aot`), makes an array function whose kernels
/// the build script did not compile a compile error instead of a warning.
pub const AOT_REQUIRED_ENV: &str = "OXLA_AOT_REQUIRED";

/// The manifest line by which the build helper says it wrote no object code
/// (a target it does not compile for): every function then uses the JIT, as
/// intended, and nothing is reported.
pub const MANIFEST_NO_OBJECTS: &str = "# no object code for this target";

/// What code generation needs to know beyond the IR.
#[derive(Clone, Debug, Default)]
pub struct CodegenOptions {
    /// Kernel symbols the build script compiled (the lines of the manifest),
    /// or `None` without a build script (or one that compiled no object code
    /// for this target): then kernels are JIT-compiled.
    pub aot_manifest: Option<BTreeSet<String>>,
    /// With a manifest, a function whose kernels are missing from it is an
    /// error (else a warning): the crate's build script asked for this.
    pub aot_required: bool,
    /// Whether the expansion also defines, for each function it generates,
    /// the macro through which other annotated functions call it (see
    /// `helpers`). Off for a helper's own function (its `#[oxla::func]`
    /// macro is that already).
    pub export_callables: bool,
    /// Where a span is in its source file (`None` in the result: not
    /// known). The proc-macro crate reads the file; from it come where a
    /// function is written (see `site`: whether and how its callable macro
    /// is defined, never in an `impl` or `trait` block) and what a call of
    /// an unknown name means (see `source_calls`). Without it a function is
    /// taken to be at module level.
    pub source: Option<fn(Span) -> Option<crate::resolve::site::SourceAt>>,
}

impl CodegenOptions {
    /// The block around the function whose name is at `span`: module level
    /// without a source hook, `None` when the hook cannot say.
    pub(crate) fn enclosing(&self, span: Span) -> Option<crate::resolve::site::Enclosing> {
        match self.source {
            None => Some(crate::resolve::site::Enclosing::Module),
            Some(source) => {
                let at = source(span)?;
                crate::resolve::site::enclosing_at(&at.text, at.line, at.column, &at.snippet)
            }
        }
    }

    /// Read the manifest named by `OXLA_AOT_MANIFEST`, if it is set and
    /// readable, and `OXLA_AOT_REQUIRED`.
    pub fn from_env() -> CodegenOptions {
        let aot_manifest = std::env::var_os(AOT_MANIFEST_ENV)
            .and_then(|p| std::fs::read_to_string(p).ok())
            .filter(|text| !text.lines().any(|l| l.trim() == MANIFEST_NO_OBJECTS))
            .map(|text| {
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(str::to_string)
                    .collect()
            });
        let aot_required = std::env::var(AOT_REQUIRED_ENV).is_ok_and(|v| v.trim() == "1");
        CodegenOptions {
            aot_manifest,
            aot_required,
            export_callables: true,
            source: None,
        }
    }
}
