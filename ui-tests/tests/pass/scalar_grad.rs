// Scalar functions: straight-line Rust, derivatives of any order by stacking.
use oxla::grad;

#[grad(df)]
fn f(x: f64, y: f64, z: f64) -> f64 {
    x + 2.0 * y + z * z
}

#[grad(d2_sin)]
#[grad(d_sin)]
fn sine(x: f64) -> f64 {
    x.sin()
}

#[oxla::grad(bill_grad, wrt = (price, qty))]
fn bill(price: f32, qty: f32, tax: f32) -> f32 {
    let net = price * qty;
    return net * (1 + tax);
}

fn main() {
    assert_eq!(f(1.0, 2.0, 3.0), 14.0);
    assert_eq!(df(1.0, 2.0, 3.0), (1.0, 2.0, 6.0));
    assert!((d_sin(0.5) - 0.5f64.cos()).abs() < 1e-12);
    assert!((d2_sin(0.5) + 0.5f64.sin()).abs() < 1e-12);
    let (dp, dq) = bill_grad(10.0, 3.0, 0.5);
    assert_eq!((dp, dq), (4.5, 15.0));
    assert!(F_IR.starts_with("fn f("));
    assert!(DF_IR.starts_with("fn df("));
}
