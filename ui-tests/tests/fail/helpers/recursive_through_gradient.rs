// A helper calling the gradient of the function that calls it: a cycle
// through a generated function, reported once.
#[oxla::grad(df)]
fn f(x: f64) -> f64 {
    g(x) * x
}

#[oxla::func]
fn g(x: f64) -> f64 {
    df(x).sin()
}

fn main() {
    let _ = (df(1.0), g(2.0));
}
