#[oxla::func]
fn scale(x: f64, k: f64) -> f64 {
    x * k
}

#[oxla::grad(df)]
fn f(x: f64) -> f64 {
    scale(x) + 1.0
}

fn main() {
    let _ = df(1.0);
}
