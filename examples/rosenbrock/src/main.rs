//! The Hessian of the Rosenbrock function, written as in JAX:
//!
//! ```python
//! def rosenbrock(x):
//!     return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
//! hess = jax.hessian(rosenbrock)
//! ```
//!
//! Printed beside the closed form and beside central differences of the
//! gradient. Run with `cargo run --release -p rosenbrock`.

use oxla::{grad, hessian};

#[hessian(rosenbrock_hessian)]
fn rosenbrock(x: [f64; 2]) -> f64 {
    (1.0 - x[0]).powi(2) + 100.0 * (x[1] - x[0] * x[0]).powi(2)
}

#[grad(rosenbrock_grad)]
fn rosenbrock_again(x: [f64; 2]) -> f64 {
    (1.0 - x[0]).powi(2) + 100.0 * (x[1] - x[0] * x[0]).powi(2)
}

/// ∂²f/∂xᵢ∂xⱼ by hand.
fn closed_form(x: [f64; 2]) -> [[f64; 2]; 2] {
    let (a, b) = (x[0], x[1]);
    [
        [2.0 - 400.0 * (b - a * a) + 800.0 * a * a, -400.0 * a],
        [-400.0 * a, 200.0],
    ]
}

fn main() {
    for x in [[1.0, 1.0], [-1.2, 1.0], [0.5, -0.3]] {
        let h = rosenbrock_hessian(&x);
        let want = closed_form(x);
        println!("x = {x:?}: f = {:.6}", rosenbrock(x));
        let step = 1e-5;
        for i in 0..2 {
            // Row i of the Hessian by central differences of the gradient.
            let fd: Vec<f64> = (0..2)
                .map(|j| {
                    let (mut p, mut m) = (x, x);
                    p[j] += step;
                    m[j] -= step;
                    (rosenbrock_grad(&p)[i] - rosenbrock_grad(&m)[i]) / (2.0 * step)
                })
                .collect();
            println!(
                "  H[{i}] = [{:+.6}, {:+.6}]   closed form [{:+.6}, {:+.6}]   differences of the gradient [{:+.6}, {:+.6}]",
                h[[i, 0]], h[[i, 1]], want[i][0], want[i][1], fd[0], fd[1]
            );
        }
        assert_eq!(h[[0, 1]], h[[1, 0]], "symmetric");
    }
}
