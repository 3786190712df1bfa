// A trait impl holds only the trait's items: `#[jit]` compiles the method
// there, but a gradient `dcost` cannot be added to it.
trait Cost {
    fn cost(x: f64) -> f64;
}

struct Quadratic;

impl Cost for Quadratic {
    #[oxla::grad(dcost)]
    fn cost(x: f64) -> f64 {
        x * x
    }
}

fn main() {
    let _ = Quadratic::cost(1.0);
}
