// An error in a generic function's body is reported once (not once per
// float type), and the functions it would define still exist, generic.
#[oxla::grad(f_grad)]
fn f<T: oxla::Float>(x: T) -> T {
    x.frobnicate()
}

fn main() {
    let _: f32 = f_grad(1.0f32);
    let _: f64 = f(1.0f64);
}
