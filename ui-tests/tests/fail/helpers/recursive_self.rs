#[oxla::func]
fn fact(x: f64) -> f64 {
    x * fact(x - 1.0)
}

fn main() {
    let _ = fact(1.0);
}
