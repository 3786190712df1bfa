#![allow(dead_code)]

// Every problem is reported at once, and the stacked attribute's errors too.
#[oxla::vmap(batched, in_axes = (0, -2))]
#[oxla::grad(df, wrt = q)]
fn f(x: f32, y: f32) -> f32 {
    let a = x.cbrt();
    println!("{a}");
    a * y
}

fn main() {}
