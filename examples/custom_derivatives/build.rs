fn main() {
    oxla_build::compile(&["src/main.rs"]);
}
