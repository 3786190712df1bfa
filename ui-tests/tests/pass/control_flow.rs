// `if`/`else` (both branches evaluated, then selected), max/min, powi, and
// forward/reverse mode of one function.
use oxla::{jvp, value_and_grad, vjp};

#[value_and_grad(h_vg)]
fn h(x: f64, y: f64) -> f64 {
    let a = if x > y { x.powi(3) } else { -y };
    a.max(-1.0).min(100) + (x * y).tanh()
}

#[jvp(h_jvp)]
fn h_forward(x: f64, y: f64) -> f64 {
    let a = if x > y { x.powi(3) } else { -y };
    a.max(-1.0).min(100) + (x * y).tanh()
}

#[vjp(h_vjp)]
fn h_reverse(x: f64, y: f64) -> f64 {
    let a = if x > y { x.powi(3) } else { -y };
    a.max(-1.0).min(100) + (x * y).tanh()
}

fn main() {
    let (x, y) = (1.5, 0.5);
    let v = h(x, y);
    assert!((v - (3.375 + 0.75f64.tanh())).abs() < 1e-12);
    let (v1, t) = h_jvp(x, y, 1.0, 0.0);
    let (v2, cx, cy) = h_vjp(x, y, 1.0);
    let (v3, gx, gy) = h_vg(x, y);
    assert_eq!((v1, v2, v3), (v, v, v));
    let sech2 = 1.0 - 0.75f64.tanh().powi(2);
    assert!((t - (3.0 * x * x + y * sech2)).abs() < 1e-12);
    assert!((cx - t).abs() < 1e-12 && (gx - t).abs() < 1e-12);
    assert!((cy - x * sech2).abs() < 1e-12 && (gy - cy).abs() < 1e-12);
    // The other branch.
    assert!((h(-3.0, 2.0) - (-1.0 + (-6.0f64).tanh())).abs() < 1e-12);
}
