//! The Lotka–Volterra predator–prey equations integrated by classical
//! Runge–Kutta (RK4) over 100 000 steps in a `for` loop, and the final
//! populations differentiated in reverse mode with respect to the four
//! rates, with and without checkpointing. The step is an `#[oxla::func]`
//! helper called from the loop.
//!
//! Plain reverse mode keeps every step's state on its tape; with
//! `oxla::checkpoint(0..n)` it keeps every ⌈√n⌉-th state and recomputes the
//! steps between on the way back: the same gradient, bit for bit, from a
//! tape ~150× smaller. Each derivative is printed beside central
//! differences. Run with `cargo run --release -p ode_rk4`.

use oxla::grad;

/// One classical Runge–Kutta step of `u' = αu − βuv`, `v' = δuv − γv`: a
/// helper, inlined into each function that calls it (and differentiated
/// through).
#[oxla::func]
fn rk4_step(u: f64, v: f64, alpha: f64, beta: f64, delta: f64, gamma: f64, dt: f64) -> (f64, f64) {
    let k1u = alpha * u - beta * u * v;
    let k1v = delta * u * v - gamma * v;
    let (u2, v2) = (u + 0.5 * dt * k1u, v + 0.5 * dt * k1v);
    let k2u = alpha * u2 - beta * u2 * v2;
    let k2v = delta * u2 * v2 - gamma * v2;
    let (u3, v3) = (u + 0.5 * dt * k2u, v + 0.5 * dt * k2v);
    let k3u = alpha * u3 - beta * u3 * v3;
    let k3v = delta * u3 * v3 - gamma * v3;
    let (u4, v4) = (u + dt * k3u, v + dt * k3v);
    let k4u = alpha * u4 - beta * u4 * v4;
    let k4v = delta * u4 * v4 - gamma * v4;
    (
        u + dt / 6.0 * (k1u + 2.0 * k2u + 2.0 * k3u + k4u),
        v + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v),
    )
}

/// From `(u, v) = (1, 0.5)` to `t = n·dt`; the loss is `u(t) + 2 v(t)`.
#[grad(populations_grad, wrt = (alpha, beta, delta, gamma))]
fn populations(alpha: f64, beta: f64, delta: f64, gamma: f64, n: usize) -> f64 {
    let mut u = 1.0;
    let mut v = 0.5;
    for _ in 0..n {
        let (u_next, v_next) = rk4_step(u, v, alpha, beta, delta, gamma, 1e-4);
        u = u_next;
        v = v_next;
    }
    u + 2.0 * v
}

/// The same integration, checkpointed.
#[grad(populations_ckpt_grad, wrt = (alpha, beta, delta, gamma))]
fn populations_ckpt(alpha: f64, beta: f64, delta: f64, gamma: f64, n: usize) -> f64 {
    let mut u = 1.0;
    let mut v = 0.5;
    for _ in oxla::checkpoint(0..n) {
        let (u_next, v_next) = rk4_step(u, v, alpha, beta, delta, gamma, 1e-4);
        u = u_next;
        v = v_next;
    }
    u + 2.0 * v
}

fn main() {
    let n = 100_000;
    let p = [1.1, 0.4, 0.1, 0.4];
    let loss = populations(p[0], p[1], p[2], p[3], n);
    println!("Lotka–Volterra, RK4, {n} steps of 1e-4: u + 2v = {loss:.12}");

    oxla::reset_loop_tape_peak();
    let t = std::time::Instant::now();
    let g = populations_grad(p[0], p[1], p[2], p[3], n);
    let plain_time = t.elapsed();
    let plain_tape = oxla::loop_tape_peak_bytes();

    oxla::reset_loop_tape_peak();
    let t = std::time::Instant::now();
    let gc = populations_ckpt_grad(p[0], p[1], p[2], p[3], n);
    let ckpt_time = t.elapsed();
    let ckpt_tape = oxla::loop_tape_peak_bytes();

    let names = ["alpha", "beta", "delta", "gamma"];
    let grads = [g.0, g.1, g.2, g.3];
    let ckpt = [gc.0, gc.1, gc.2, gc.3];
    let h = 1e-6;
    for k in 0..4 {
        let (mut plus, mut minus) = (p, p);
        plus[k] += h;
        minus[k] -= h;
        let fd = (populations(plus[0], plus[1], plus[2], plus[3], n)
            - populations(minus[0], minus[1], minus[2], minus[3], n))
            / (2.0 * h);
        println!(
            "  d/d{:<5} = {:+.10}   checkpointed {:+.10}   central differences {fd:+.10}",
            names[k], grads[k], ckpt[k]
        );
        assert_eq!(grads[k], ckpt[k], "checkpointing changes nothing");
        assert!((grads[k] - fd).abs() < 1e-6 * (1.0 + fd.abs()));
    }
    println!(
        "tape: {:.1} KiB without checkpointing ({plain_time:.1?}), {:.1} KiB with oxla::checkpoint ({ckpt_time:.1?}): {:.0}× smaller",
        plain_tape as f64 / 1024.0,
        ckpt_tape as f64 / 1024.0,
        plain_tape as f64 / ckpt_tape as f64
    );
}
