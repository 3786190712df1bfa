fn main() {
    // Every file with oxla functions is listed: a function in a file left out
    // would run on the JIT (with a warning at its name).
    oxla_build::compile(&["src/main.rs", "examples/inspect.rs"]);
}
