// A plain Rust function is not an oxla helper: it must be marked.
fn square(x: f64) -> f64 {
    x * x
}

#[oxla::grad(df)]
fn f(x: f64) -> f64 {
    square(x) + 1.0
}

fn main() {
    let _ = (df(1.0), square(2.0));
}
