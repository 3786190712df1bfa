// Two helpers calling each other: neither can be inlined into the other.
#[oxla::func]
fn even(x: f64) -> f64 {
    odd(x - 1.0)
}

#[oxla::func]
fn odd(x: f64) -> f64 {
    even(x - 1.0)
}

fn main() {
    let _ = (even(1.0), odd(1.0));
}
