#![allow(dead_code)]

#[oxla::jit]
fn f(x: f32, k: i32, flag: bool) -> f32 {
    let a = x as u8;
    let b = x as f64;
    let c = flag as f32;
    let d = k as i64;
    x
}

fn main() {}
