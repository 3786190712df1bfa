// A struct without `#[derive(oxla::Tree)]` as a parameter: rustc finds no
// macro of its name (the derive's macro is how oxla learns its fields).
struct Plain {
    w: f32,
}

#[oxla::jit]
fn f(p: &Plain) -> f32 {
    p.w * 2.0
}

fn main() {}
