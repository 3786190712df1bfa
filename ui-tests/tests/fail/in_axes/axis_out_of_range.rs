#![allow(dead_code)]

#[oxla::vmap(batched, in_axes = (1, None))]
fn f(x: f32, y: f32) -> f32 {
    x * y
}

fn main() {}
