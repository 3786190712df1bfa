// Forward mode through a helper with a custom_vjp rule: JAX raises, oxla
// refuses at the attribute asking for it.
#[oxla::func]
#[oxla::custom_vjp(fwd = clip_fwd, bwd = clip_bwd)]
fn clipped(x: f64) -> f64 {
    x
}

#[oxla::func]
fn clip_fwd(x: f64) -> (f64, f64) {
    (x, x)
}

#[oxla::func]
fn clip_bwd(r: f64, g: f64) -> f64 {
    g.clamp(-1.0, 1.0) + 0.0 * r
}

#[oxla::jvp(f_jvp)]
fn f(x: f64) -> f64 {
    clipped(x) * x
}

fn main() {
    let _ = f_jvp(1.0, 1.0);
}
