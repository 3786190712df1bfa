//! Kepler's equation `E − e·sin E = M` solved by Newton's method in a
//! `while` loop, and differentiated in reverse mode with respect to the
//! mean anomaly `M` and the eccentricity `e`, through the loop (the forward
//! sweep records its trip count; JAX's `while_loop` has no reverse mode).
//!
//! Printed beside the implicit-function theorem's closed form
//! (`∂E/∂M = 1/(1 − e·cos E)`, `∂E/∂e = sin E/(1 − e·cos E)`) and central
//! differences. Run with `cargo run --release -p newton`.

use oxla::transforms;

#[transforms(value_and_grad(kepler_vg, wrt = (m, e)))]
fn kepler(m: f64, e: f64) -> f64 {
    let mut ecc_anomaly = m;
    let mut step = 1.0;
    while step * step > 1e-28 {
        let f = ecc_anomaly - e * ecc_anomaly.sin() - m;
        let df = 1.0 - e * ecc_anomaly.cos();
        step = f / df;
        ecc_anomaly -= step;
    }
    ecc_anomaly
}

fn main() {
    let h = 1e-6;
    for (m, e) in [(0.5, 0.1), (1.0, 0.6), (2.5, 0.9)] {
        let (big_e, d_m, d_e) = kepler_vg(m, e);
        let residual = big_e - e * big_e.sin() - m;
        let denom = 1.0 - e * big_e.cos();
        let fd_m = (kepler(m + h, e) - kepler(m - h, e)) / (2.0 * h);
        let fd_e = (kepler(m, e + h) - kepler(m, e - h)) / (2.0 * h);
        println!("M = {m}, e = {e}: E = {big_e:.15} (residual {residual:.1e})");
        println!(
            "  dE/dM = {d_m:.12}   closed form {:.12}   central differences {fd_m:.12}",
            1.0 / denom
        );
        println!(
            "  dE/de = {d_e:.12}   closed form {:.12}   central differences {fd_e:.12}",
            big_e.sin() / denom
        );
        assert!((d_m - 1.0 / denom).abs() < 1e-9 && (d_m - fd_m).abs() < 1e-6);
        assert!((d_e - big_e.sin() / denom).abs() < 1e-9 && (d_e - fd_e).abs() < 1e-6);
    }
}
