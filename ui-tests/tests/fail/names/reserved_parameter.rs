#![allow(dead_code, non_snake_case)]

#[oxla::jit]
fn f(__OXLA_COMPILED_F: &[f32]) -> Vec<f32> {
    __OXLA_COMPILED_F * 2.0
}

fn main() {}
