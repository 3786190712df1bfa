fn main() {
    // Every array function in this crate must run on the build script's
    // kernels: a missing one is a compile error, not a silent JIT fallback.
    oxla_build::compile_with(&["src/lib.rs"], &oxla_build::Options { require_aot: true });
}
