// A bwd rule must give one cotangent per float parameter.
#[oxla::func]
#[oxla::custom_vjp(fwd = mul_fwd, bwd = mul_bwd)]
fn mul(x: f64, y: f64) -> f64 {
    x * y
}

#[oxla::func]
fn mul_fwd(x: f64, y: f64) -> (f64, f64) {
    (x * y, x)
}

#[oxla::func]
fn mul_bwd(r: f64, g: f64) -> f64 {
    g * r
}

fn main() {
    let _ = mul(1.0, 2.0);
}
