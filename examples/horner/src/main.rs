//! Horner's rule in a `for` loop, and its second derivative.
//!
//! `taylor_exp(x, n)` evaluates the degree-`n` Taylor polynomial of `eˣ`,
//! `1 + x(1 + x/2(1 + x/3(…)))`, innermost factor first. Its second
//! derivative is the degree-`n−2` polynomial, which is printed beside it,
//! beside `eˣ` and beside central differences of the first derivative.
//! Run with `cargo run --release -p horner`.

use oxla::transforms;

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
