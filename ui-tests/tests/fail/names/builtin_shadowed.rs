// A bare call of a built-in name means, in Rust, the function of that name
// in scope: oxla refuses to silently lower it as its own built-in.
use oxla::grad;

mod other {
    pub fn relu(x: f64) -> f64 {
        x
    }
    pub fn sigmoid(x: f64) -> f64 {
        x
    }
}
use other::relu; // imported by name
use other::*; // glob-imported: `sigmoid`

// Defined in the same module.
fn softplus(z: f64) -> f64 {
    2.0 * (1.0 + (z / 2.0).exp()).ln()
}

#[grad(df)]
fn f(x: f64) -> f64 {
    softplus(x) + relu(x) + sigmoid(x)
}

// Built-ins with no function of their name in scope are the built-ins.
#[grad(dg)]
fn g(x: f64) -> f64 {
    oxla::softplus(x) + log1p(x)
}

fn main() {
    let _ = (df(1.0), dg(1.0));
}
