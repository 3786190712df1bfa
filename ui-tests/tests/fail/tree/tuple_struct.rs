// A parameter struct has named fields.
#[derive(oxla::Tree, Clone)]
struct Params(f32, f32);

fn main() {}
