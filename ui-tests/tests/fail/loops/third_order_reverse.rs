// A third derivative through a loop by reverse mode alone: one error that
// names forward mode (`jacfwd` of the second derivative works).
#[oxla::grad(d3)]
#[oxla::grad(d2)]
#[oxla::grad(d1)]
fn f(x: f64, n: usize) -> f64 {
    let mut y = x;
    for _ in 0..n {
        y = (y * x).sin();
    }
    y
}

fn main() {
    let _ = d3(1.0, 3);
}
