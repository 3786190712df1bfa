//! Helpers (`#[oxla::func]`) called from annotated functions in the same
//! crate: in the same module and in another one, differentiated through.

mod common_fd {
    /// Central finite difference of `f` at `x`.
    pub fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
        let h = 1e-6;
        (f(x + h) - f(x - h)) / (2.0 * h)
    }
}

#[oxla::func]
fn smooth_relu(x: f64) -> f64 {
    (x.exp() + 1.0).ln()
}

mod act {
    #[oxla::func]
    pub fn swish(x: f64) -> f64 {
        x * logistic(x)
    }

    #[oxla::func]
    pub fn logistic(x: f64) -> f64 {
        1.0 / (1.0 + (-x).exp())
    }
}

#[oxla::grad(df)]
fn f(x: f64, y: f64) -> f64 {
    smooth_relu(x * y) + act::swish(x) * y
}

#[test]
fn grad_through_helpers_matches_central_differences() {
    for &(x, y) in &[(0.3, -1.2), (-2.0, 0.7), (1.5, 2.5)] {
        let (dx, dy) = df(x, y);
        let fx = common_fd::central(|x| f(x, y), x);
        let fy = common_fd::central(|y| f(x, y), y);
        assert!((dx - fx).abs() < 1e-6, "{dx} vs {fx}");
        assert!((dy - fy).abs() < 1e-6, "{dy} vs {fy}");
    }
}
