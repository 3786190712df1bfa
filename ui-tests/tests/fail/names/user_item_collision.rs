// A user item with the name of a generated one (`g` from `#[grad(g)]`, the
// IR constant `F_IR`) is rustc's "defined multiple times", once per name,
// pointing at both definitions.
use oxla::grad;

#[grad(g)]
fn f(x: f64) -> f64 {
    x * x
}

fn g() {}
const F_IR: u8 = 0;

fn main() {}
