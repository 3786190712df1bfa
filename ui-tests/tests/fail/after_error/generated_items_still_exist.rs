#![allow(dead_code)]
// After an error every item the expansion defines still exists, so the
// callers below report nothing more.
#[oxla::vmap(batched)]
#[oxla::jvp(tangent)]
fn f(x: &[f64], s: f64) -> Vec<f64> {
    x.cbrt() * s
}

fn main() {
    let x = [1.0, 2.0];
    let y: Vec<f64> = f(&x, 2.0);
    let mut out = [0.0; 2];
    f_into(&x, 2.0, &mut out);
    let (_y, _t): (Vec<f64>, Vec<f64>) = tangent(&x, 2.0, &x, 1.0);
    let _ = batched(oxla::ndarray::Array2::<f64>::zeros((2, 2)).view(), &[1.0, 2.0], oxla::ndarray::Array2::<f64>::zeros((2, 2)).view(), &[1.0, 1.0]);
    let _: &str = F_IR;
    let _: &str = TANGENT_IR;
    let _: &str = BATCHED_IR;
    drop(y);
}
