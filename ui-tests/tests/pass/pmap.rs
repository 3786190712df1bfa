//! `#[pmap]` and a named `#[vmap]` expand to functions that type-check:
//! the pmap'd one takes its mapped argument with the device axis added.
use oxla::ndarray::{Array1, Array2, Array3, ArrayView1, ArrayView2};
use oxla_macros::pmap;

#[pmap(normalized, axis_name = i)]
fn f(x: ArrayView1<f64>) -> Array1<f64> {
    let s = psum(&x, i);
    &x / &s + axis_index(i) as f64
}

#[oxla::vmap(shares, axis_name = j)]
fn share(x: f64) -> f64 {
    x / psum(x, j)
}

#[oxla::transforms(pmap(gathered, axis_name = "i", in_axes = 0, out_axes = 0))]
fn g(x: ArrayView1<f64>) -> Array2<f64> {
    all_gather(&x, i)
}

fn main() {
    let _: fn(ArrayView2<f64>) -> Array2<f64> = |x| normalized(x);
    let _: fn(ArrayView2<f64>) -> Array3<f64> = |x| gathered(x);
    let _ = shares;
    let _ = F_IR;
}
