fn main() {
    oxla_build::compile(&["src/lib.rs", "src/models.rs", "src/conv_layer.rs"]);
}
