// `let mut`, compound assignment, an `if` that assigns, an early `return`,
// a `match` on an integer and a crate constant, under `#[grad]`.
use oxla::grad;

const DAMPING: f64 = 0.5;

#[grad(f_grad, wrt = x)]
fn f(x: f64, k: i64) -> f64 {
    let mut y = x * x;
    if x < 0.0 {
        return -y;
    }
    y += DAMPING * x;
    match k {
        0 => y,
        1..=3 => y * 2.0,
        _ => y - 1.0,
    }
}

fn main() {
    assert_eq!(f(-2.0, 0), -4.0);
    assert_eq!(f(2.0, 2), 2.0 * (4.0 + 1.0));
    assert_eq!(f_grad(2.0, 7), 4.0 + 0.5);
    assert_eq!(f_grad(-2.0, 7), 4.0);
}
