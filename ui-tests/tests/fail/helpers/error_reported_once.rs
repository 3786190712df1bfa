// An error in a helper's body is reported once, by the helper's own
// expansion, not again for its copy inlined into each caller.
#[oxla::func]
fn h(x: f64) -> f64 {
    x.frobnicate()
}

#[oxla::grad(df)]
fn f(x: f64) -> f64 {
    h(x) * 2.0
}

fn main() {
    let _ = df(1.0);
}
