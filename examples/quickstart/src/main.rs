//! oxla quickstart: derivatives, batching and fused kernels, compiled ahead of
//! time by `build.rs`. Run with `cargo run --release -p quickstart`.

use oxla::{grad, jit, jvp, vjp, vmap};
use std::time::Instant;

// Partial derivatives of f(x, y, z) = x + 2y + z².
#[grad(df)]
fn f(x: f64, y: f64, z: f64) -> f64 {
    x + 2.0 * y + z * z
}

// Derivatives of any order by composition: the third derivative of sin.
#[grad(d3_sin)]
#[grad(d2_sin)]
#[grad(d_sin)]
fn sine(x: f64) -> f64 {
    x.sin()
}

// A gradient with respect to some arguments only.
#[grad(bill_grad, wrt = (price, qty))]
fn total_bill_amt(price: f64, qty: f64, tax_rate: f64) -> f64 {
    price * qty * (1.0 + tax_rate)
}

// One fused kernel: no temporaries, one pass over memory.
#[jit]
fn fused_sum(x: &[f32], y: &[f32], z: &[f32]) -> f32 {
    sum(x * 2.0 * y + z)
}

// Batching a scalar function over a slice.
#[vmap(square_all)]
fn square(x: f32) -> f32 {
    x * x
}

// Per-example gradients: vmap of grad of a logistic loss.
#[vmap(per_example_grads, in_axes = (None, 0, 0))]
#[grad(loss_grad, wrt = w)]
fn logistic_loss(w: &[f64], x: &[f64], y: f64) -> f64 {
    (1.0 + (-y * dot(w, x)).exp()).ln()
}

// Forward and reverse mode of one function, g(x, y) = sin(x)·y + tanh(xy).
// (Stacked attributes compose, so each mode gets its own copy.)
#[jvp(g_jvp)]
fn g(x: f64, y: f64) -> f64 {
    x.sin() * y + (x * y).tanh()
}

#[vjp(g_vjp)]
fn g_reverse(x: f64, y: f64) -> f64 {
    x.sin() * y + (x * y).tanh()
}

fn main() {
    let (dx, dy, dz) = df(1.0, 2.0, 3.0);
    println!(
        "f(x, y, z) = x + 2y + z^2 at (1, 2, 3): value {:.6}",
        f(1.0, 2.0, 3.0)
    );
    println!("  partial derivatives (df/dx, df/dy, df/dz) = ({dx:.6}, {dy:.6}, {dz:.6})");

    println!(
        "third derivative of sin at 1.0 = {:.6}  (-cos(1) = {:.6})",
        d3_sin(1.0),
        -(1.0f64).cos()
    );

    let (d_price, d_qty) = bill_grad(10.0, 3.0, 0.08);
    println!(
        "total_bill_amt(10, 3, 0.08) = {:.6}",
        total_bill_amt(10.0, 3.0, 0.08)
    );
    println!("  d/dprice = {d_price:.6}, d/dqty = {d_qty:.6}");

    let n = 10_000_000;
    let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32 * 0.25).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 5) as f32 * 0.5).collect();
    let z: Vec<f32> = (0..n).map(|i| (i % 3) as f32 - 1.0).collect();
    let _ = fused_sum(&x, &y, &z); // first call binds the kernels
    let t = Instant::now();
    let fused = fused_sum(&x, &y, &z);
    let t_fused = t.elapsed();
    let t = Instant::now();
    let mut plain = 0.0f32;
    for i in 0..n {
        plain += x[i] * 2.0 * y[i] + z[i];
    }
    let t_plain = t.elapsed();
    let exact: f64 = (0..n)
        .map(|i| x[i] as f64 * 2.0 * y[i] as f64 + z[i] as f64)
        .sum();
    let how = match oxla::compile_log()
        .iter()
        .find(|r| r.function == "fused_sum")
        .map(|r| r.how)
    {
        Some(oxla::CompiledBy::BuildScript) => "compiled by build.rs",
        Some(oxla::CompiledBy::Jit) => "compiled by the JIT on first call",
        _ => "no kernel",
    };
    println!("sum(x * 2 * y + z) over {n} f32, one fused kernel ({how}):");
    println!("  oxla {fused:.7e} in {t_fused:?}; plain Rust loop {plain:.7e} in {t_plain:?}");
    println!("  (the sum in f64: {exact:.7e}; oxla's several accumulators also round less)");

    let xs: Vec<f32> = (1..=10).map(|i| i as f32).collect();
    println!("vmap(square) over 1..=10 = {:?}", square_all(&xs));

    let w = [0.5, -0.25, 1.0];
    // A batched slice parameter becomes a matrix: one row per example.
    let batch_x = oxla::ndarray::array![[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]];
    let batch_y = [1.0, -1.0];
    let grads = per_example_grads(&w, &batch_x, &batch_y);
    println!("per-example gradients of the logistic loss (2 examples, 3 features):");
    for (i, row) in grads.rows().into_iter().enumerate() {
        println!(
            "  example {i}: [{:.6}, {:.6}, {:.6}]",
            row[0], row[1], row[2]
        );
        let x_i = batch_x.row(i).to_vec();
        let single = loss_grad(&w, &x_i, batch_y[i]);
        assert_eq!(single, row.to_vec(), "vmap of grad equals grad per example");
    }

    let (x0, y0) = (0.7, -1.3);
    let (u, v) = (0.3, 0.9); // a tangent (u, v) and a cotangent w
    let wct = 1.7;
    let (value, tangent) = g_jvp(x0, y0, u, v);
    let (value2, ct_x, ct_y) = g_vjp(x0, y0, wct);
    println!("g(0.7, -1.3) = {value:.6} (jvp) = {value2:.6} (vjp)");
    println!(
        "  <w, J (u, v)> = {:.9}  and  <J^T w, (u, v)> = {:.9}",
        wct * tangent,
        ct_x * u + ct_y * v
    );
}
