//! Horner's rule in a `for` loop, and its second derivative.
//!
//! `horner(x, c)` evaluates a polynomial from a slice of coefficients
//! (highest first); its second derivative in `x` (`hessian`: forward over
//! reverse mode, through the loop) is printed beside the derivative
//! polynomial and beside central differences of the first derivative.
//!
//! `taylor_exp(x, n)` evaluates the degree-`n` Taylor polynomial of `eˣ`,
//! `1 + x(1 + x/2(1 + x/3(…)))`, innermost factor first. Its second
//! derivative is the degree-`n−2` polynomial, which is printed beside it,
//! beside `eˣ` and beside central differences of the first derivative.
//! Run with `cargo run --release -p horner`.

use oxla::transforms;

#[transforms(grad(horner_dx, wrt = x), hessian(horner_dxx, wrt = x))]
fn horner(x: f64, c: &[f64]) -> f64 {
    let mut acc = 0.0;
    for i in 0..c.len() {
        acc = acc * x + c[i];
    }
    acc
}

/// p''(x) from the coefficients: Σ k(k−1)·a_k·x^(k−2).
fn second_derivative(x: f64, c: &[f64]) -> f64 {
    let n = c.len();
    (2..n)
        .map(|k| (k * (k - 1)) as f64 * c[n - 1 - k] * x.powi(k as i32 - 2))
        .sum()
}

#[transforms(grad(taylor_exp_grad, wrt = x), hessian(taylor_exp_second, wrt = x))]
fn taylor_exp(x: f64, n: usize) -> f64 {
    let mut acc = 1.0;
    for j in 0..n {
        // k = n, n − 1, …, 1.
        let k = n as f64 - j as f64;
        acc = 1.0 + acc * x / k;
    }
    acc
}

/// The same polynomial, summed term by term.
fn taylor_terms(x: f64, n: usize) -> f64 {
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..=n {
        term *= x / k as f64;
        sum += term;
    }
    sum
}

fn main() {
    let h = 1e-5;
    // 3x⁵ − 2x⁴ + 0.5x³ + x² − 4x + 1.
    let c = [3.0, -2.0, 0.5, 1.0, -4.0, 1.0];
    for x in [-1.0, 0.3, 1.7] {
        let d2 = horner_dxx(x, &c);
        let fd = (horner_dx(x + h, &c) - horner_dx(x - h, &c)) / (2.0 * h);
        let want = second_derivative(x, &c);
        println!(
            "p(x) = 3x^5 - 2x^4 + 0.5x^3 + x^2 - 4x + 1 at x = {x}: p = {:.12}, p'' = {d2:.12}   from the coefficients {want:.12}   differences of p' {fd:.12}",
            horner(x, &c)
        );
        assert!((d2 - want).abs() < 1e-12 * (1.0 + want.abs()));
        assert!((d2 - fd).abs() < 1e-6 * (1.0 + fd.abs()));
    }
    for (x, n) in [(0.5, 8), (-1.5, 12), (2.0, 20)] {
        let p = taylor_exp(x, n);
        let d2 = taylor_exp_second(x, n);
        let fd = (taylor_exp_grad(x + h, n) - taylor_exp_grad(x - h, n)) / (2.0 * h);
        let want = taylor_terms(x, n - 2);
        println!(
            "x = {x}, degree {n}: p(x) = {p:.12} (terms summed: {:.12}, e^x = {:.12})",
            taylor_terms(x, n),
            x.exp()
        );
        println!(
            "  p''(x) = {d2:.12}   degree-{} polynomial {want:.12}   differences of p' {fd:.12}",
            n - 2
        );
        assert!((d2 - want).abs() < 1e-12 * (1.0 + want.abs()));
        assert!((d2 - fd).abs() < 1e-6 * (1.0 + fd.abs()));
    }
}
