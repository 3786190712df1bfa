#![allow(dead_code)]

// A helper of another module reading a constant: inlined into `f`, `K`
// would be read where `f` is, so it is an error saying so. (A helper in its
// caller's module reads it.)
mod physics {
    pub const K: f64 = 2.0;

    #[oxla::func]
    pub fn scaled(x: f64) -> f64 {
        x * K
    }
}

#[oxla::grad(df)]
fn f(x: f64) -> f64 {
    physics::scaled(x) + 1.0
}

fn main() {}
