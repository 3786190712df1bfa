fn main() {
    oxla_build::compile(&[
        "src/lib.rs",
        "src/models.rs",
        "src/linalg.rs",
        "src/conv_layer.rs",
    ]);
}
