//! `#[jit]` on a function in `impl Trait for Type` (issue 20, item 10): the
//! expansion keeps the method alone — its siblings (`NAME_IR`, `name_into`)
//! are not members of the trait — and the method runs its compiled program.
//! Expected values are the same bodies in plain Rust.

use ndarray::{array, Array1, ArrayView1};
use oxla::jit;

trait Activation {
    fn apply(x: ArrayView1<f64>) -> Array1<f64>;
    fn at(x: f64) -> f64;
}

struct Softplus;

impl Activation for Softplus {
    #[jit]
    fn apply(x: ArrayView1<f64>) -> Array1<f64> {
        (1.0 + x.exp()).ln()
    }

    #[jit]
    fn at(x: f64) -> f64 {
        (1.0 + x.exp()).ln()
    }
}

/// Generic code calls the methods through the trait.
fn total<A: Activation>(x: ArrayView1<f64>) -> f64 {
    A::apply(x).sum() + A::at(x[0])
}

#[test]
fn jit_methods_of_a_trait_impl_compute_their_bodies() {
    let x: Array1<f64> = array![-2.0, 0.0, 0.5, 3.0];
    let want: Array1<f64> = x.mapv(|v| (1.0 + v.exp()).ln());
    let got = Softplus::apply(x.view());
    for (g, w) in got.iter().zip(want.iter()) {
        assert!((g - w).abs() <= 1e-15 * (1.0 + w.abs()), "{got} vs {want}");
    }
    let want_total = want.sum() + (1.0 + (-2.0f64).exp()).ln();
    assert!((total::<Softplus>(x.view()) - want_total).abs() < 1e-14);
}
