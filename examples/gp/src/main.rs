//! Gaussian-process regression: the negative log marginal likelihood of
//! noisy observations under a squared-exponential kernel, through a
//! Cholesky factor, with its gradient and Hessian with respect to the
//! kernel's log-hyperparameters, as in JAX:
//!
//! ```python
//! def nll(theta, x, y):
//!     ell, sf, sn = jnp.exp(theta)
//!     k = sf**2 * jnp.exp(-(x[:, None] - x[None, :])**2 / (2 * ell**2)) + sn**2 * jnp.eye(len(x))
//!     l = jnp.linalg.cholesky(k)
//!     alpha = jax.scipy.linalg.cho_solve((l, True), y)
//!     return 0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diag(l))) + 0.5 * len(x) * jnp.log(2 * jnp.pi)
//! ```
//!
//! A few damped Newton steps on the hyperparameters follow, each printed
//! beside a central-difference check of the gradient and Hessian.
//! Run with `cargo run --release -p gp`.

use oxla::ndarray::{Array1, Array2, ArrayView1, Axis};
use oxla::transforms;

#[transforms(grad(nll_grad, wrt = theta), hessian(nll_hessian, wrt = theta))]
fn nll(theta: [f64; 3], x: ArrayView1<f64>, y: ArrayView1<f64>) -> f64 {
    let ell = theta[0].exp();
    let signal = theta[1].exp();
    let noise = theta[2].exp();
    let diff = x.insert_axis(Axis(1)) - x.insert_axis(Axis(0));
    let k = signal * signal * (-(diff.clone() * diff) / (2.0 * ell * ell)).exp()
        + noise * noise * eye(x.len());
    let l = cholesky(k);
    let alpha = cho_solve(l, y);
    let n = x.len() as f64;
    0.5 * (y * alpha).sum() + l.diag().ln().sum() + 0.5 * n * (2.0 * std::f64::consts::PI).ln()
}

/// Observations of `sin(3x)` with a deterministic wobble for noise.
fn data(n: usize) -> (Array1<f64>, Array1<f64>) {
    let x = Array1::from_shape_fn(n, |i| -1.0 + 2.0 * i as f64 / (n - 1) as f64);
    let y = x.mapv(|v| (3.0 * v).sin() + 0.05 * (17.0 * v).cos());
    (x, y)
}

fn main() {
    let (x, y) = data(24);
    let mut theta = [(0.5f64).ln(), 0.0, (0.3f64).ln()];
    let h = 1e-5;
    for step in 0..6 {
        let value = nll(theta, x.view(), y.view());
        let g = nll_grad(&theta, x.view(), y.view());
        let hess: Array2<f64> = nll_hessian(&theta, x.view(), y.view());
        // Central differences of the value (gradient) and of the gradient
        // (Hessian), one hyperparameter at a time.
        let mut worst_g: f64 = 0.0;
        let mut worst_h: f64 = 0.0;
        for i in 0..3 {
            let (mut p, mut m) = (theta, theta);
            p[i] += h;
            m[i] -= h;
            let fd = (nll(p, x.view(), y.view()) - nll(m, x.view(), y.view())) / (2.0 * h);
            worst_g = worst_g.max((fd - g[i]).abs());
            let gp = nll_grad(&p, x.view(), y.view());
            let gm = nll_grad(&m, x.view(), y.view());
            for j in 0..3 {
                let fd = (gp[j] - gm[j]) / (2.0 * h);
                worst_h = worst_h.max((fd - hess[[j, i]]).abs());
            }
        }
        println!(
            "step {step}: theta = [{:.5}, {:.5}, {:.5}]  nll = {value:.8}  |grad| = {:.2e}",
            theta[0],
            theta[1],
            theta[2],
            g.iter().map(|v| v * v).sum::<f64>().sqrt()
        );
        println!(
            "  finite differences: gradient off by {worst_g:.1e}, Hessian off by {worst_h:.1e}"
        );
        assert!(value.is_finite() && worst_g < 1e-6 && worst_h < 1e-4);
        // A Newton step where the Hessian is positive definite along it,
        // else a gradient step, at most one unit long, halved until the
        // likelihood improves.
        let g = Array1::from_iter(g.iter().copied());
        let d = solve3(&hess, &g);
        let mut dir = if g.dot(&d) > 0.0 { d } else { g.clone() };
        let len = dir.dot(&dir).sqrt();
        if len > 1.0 {
            dir /= len;
        }
        for _ in 0..30 {
            let trial = [theta[0] - dir[0], theta[1] - dir[1], theta[2] - dir[2]];
            let v = nll(trial, x.view(), y.view());
            if v.is_finite() && v < value {
                theta = trial;
                break;
            }
            dir /= 2.0;
        }
    }
}

/// `h⁻¹ g` for a 3×3 `h`, by Cramer's rule (plain Rust beside the example).
fn solve3(h: &Array2<f64>, g: &Array1<f64>) -> Array1<f64> {
    let det = |m: &Array2<f64>| {
        m[[0, 0]] * (m[[1, 1]] * m[[2, 2]] - m[[1, 2]] * m[[2, 1]])
            - m[[0, 1]] * (m[[1, 0]] * m[[2, 2]] - m[[1, 2]] * m[[2, 0]])
            + m[[0, 2]] * (m[[1, 0]] * m[[2, 1]] - m[[1, 1]] * m[[2, 0]])
    };
    let d = det(h);
    Array1::from_shape_fn(3, |k| {
        let mut m = h.clone();
        m.column_mut(k).assign(g);
        det(&m) / d
    })
}
