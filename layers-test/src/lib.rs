//! Helpers for the oxla crate's tests of `#[oxla::func]` across crates: a
//! helper in a module, a helper calling a helper of another module, and a
//! dense layer on ndarray views.

pub mod act {
    /// `ln(1 + e^x)`.
    #[oxla::func]
    pub fn smooth_relu(x: f32) -> f32 {
        (x.exp() + 1.0).ln()
    }

    /// `tanh`, through `logistic` of the `smooth` module (a helper calling a helper).
    #[oxla::func]
    pub fn soft_tanh(x: f32) -> f32 {
        2.0 * crate::smooth::logistic(2.0 * x) - 1.0
    }
}

pub mod smooth {
    #[oxla::func]
    pub fn logistic(x: f32) -> f32 {
        1.0 / (1.0 + (-x).exp())
    }
}

pub mod nn {
    use oxla::ndarray::{Array1, ArrayView1, ArrayView2};

    /// `smooth_relu(w · x + b)`, elementwise.
    #[oxla::func]
    pub fn layer(w: ArrayView2<f32>, b: ArrayView1<f32>, x: ArrayView1<f32>) -> Array1<f32> {
        let z = w.dot(&x) + b;
        (z.exp() + 1.0).ln()
    }
}

/// A parameter struct (`#[derive(oxla::Tree)]`) and a helper taking it.
pub mod params {
    use oxla::ndarray::{Array1, Array2, ArrayView2};

    /// One dense layer.
    #[derive(oxla::Tree, Clone, Debug, PartialEq)]
    pub struct Dense {
        pub w: Array2<f32>,
        pub b: Array1<f32>,
    }

    /// Two layers: a struct of structs.
    #[derive(oxla::Tree, Clone, Debug, PartialEq)]
    pub struct TwoLayers {
        pub hidden: Dense,
        pub out: Dense,
    }

    /// `smooth_relu(x · w + b)`, rows of `x` as examples.
    #[oxla::func]
    pub fn dense(l: &Dense, x: ArrayView2<f32>) -> Array2<f32> {
        let z = x.dot(&l.w) + &l.b;
        (z.exp() + 1.0).ln()
    }
}

/// A helper generic over its float type: each caller inlines it at its own.
pub mod generic {
    #[oxla::func]
    pub fn log_cosh<T: oxla::Float>(x: T) -> T {
        (x.exp() + (-x).exp()).ln() - T::from(std::f64::consts::LN_2)
    }
}

/// Transformed functions (not helpers) that annotated functions of other
/// crates call: the generated gradient and a vmap.
pub mod transformed {
    use oxla::ndarray::{Array1, ArrayView1};

    /// A smooth energy, with its gradient `energy_grad`.
    #[oxla::grad(energy_grad)]
    pub fn energy(x: ArrayView1<f32>) -> f32 {
        let s = (&x * &x).sum();
        (1.0 + s).ln() + x.sin().sum()
    }

    /// `scale · x` for each row of a batch (`rows_scaled`).
    #[oxla::vmap(rows_scaled, in_axes = (0, None))]
    pub fn scaled(x: ArrayView1<f32>, k: f32) -> Array1<f32> {
        x * k
    }
}
