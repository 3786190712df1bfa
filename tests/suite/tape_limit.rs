//! Issue 20, item 11: reverse mode through a `while` loop that never ends
//! used to grow the loop's tape until the allocator aborted the process
//! (SIGABRT at 2.1 GB). The tape now has a limit (a quarter of the
//! physical memory by default; `OXLA_TAPE_LIMIT_BYTES`,
//! `oxla::set_tape_limit`, or per thread
//! `with_tape_limit`), and passing it is an error naming the function and
//! the loop that suggests `oxla::checkpoint`. The limit here is set on this
//! thread only, so the other tests of the binary keep the default.

use oxla::grad;
use oxla::{tape_limit, with_tape_limit};

/// `t` only grows, so the loop never ends; each step keeps the 1000 f64
/// of `y` (8000 bytes), which the backward body reads (`min` compares it);
/// `t`, which it does not read, is not kept. (A loop whose backward body
/// reads no carry keeps no steps, and spins under `grad` as it does
/// forward.)
#[grad(runaway_grad, wrt = x)]
fn runaway(x: &[f64]) -> f64 {
    let mut y = x * 1.0;
    let mut t = 1.0;
    while t > 0.0 {
        y = (y + 1.0).min(1e300);
        t = t + 1.0;
    }
    sum(y)
}

/// The same loop, ending after `n` steps: under the limit it runs.
#[grad(bounded_grad, wrt = x)]
fn bounded(x: &[f64], n: f64) -> f64 {
    let mut y = x * 1.0;
    let mut t = 0.0;
    while t < n {
        y = (y * 1.5 + 1.0).min(1e300);
        t = t + 1.0;
    }
    sum(y)
}

fn message(e: Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn a_while_loop_that_never_ends_fails_under_grad_at_the_tape_limit() {
    let x = vec![0.25; 1000];
    let limit = 4 << 20;
    let t = std::time::Instant::now();
    let err = with_tape_limit(limit, || {
        std::panic::catch_unwind(|| runaway_grad(&x)).expect_err("the tape limit stops the sweep")
    });
    let msg = message(err);
    assert!(msg.contains("runaway"), "names the function: {msg}");
    assert!(msg.contains("`while` loop"), "names the loop: {msg}");
    assert!(
        msg.contains("oxla::checkpoint"),
        "suggests checkpointing: {msg}"
    );
    assert!(msg.contains(&limit.to_string()), "states the limit: {msg}");
    // 4 MiB of 8000-byte steps: the error comes after 525 steps, not 2 GB.
    let steps = limit / 8000 + 1;
    assert!(msg.contains(&format!("after {steps} steps")), "{msg}");
    assert!(t.elapsed().as_secs() < 60, "took {:?}", t.elapsed());
}

#[test]
fn a_loop_that_ends_under_the_limit_still_differentiates() {
    let x = vec![0.25; 1000];
    // 20 steps of 8000 bytes, under a 1 MiB limit: d/dx_i = 1.5^20.
    let g = with_tape_limit(1 << 20, || bounded_grad(&x, 20.0));
    let want = 1.5f64.powi(20);
    assert!(
        g.iter().all(|v| (v - want).abs() <= 1e-12 * want),
        "{:?}",
        &g[..3]
    );
    // 200 steps (1.6 MB) pass a 1 MiB limit: an error, not a crash.
    let err = with_tape_limit(1 << 20, || {
        std::panic::catch_unwind(|| bounded_grad(&x, 200.0)).expect_err("over the limit")
    });
    assert!(message(err).contains("bounded"));
    // The default: positive, and at most the machine's memory.
    assert!(tape_limit() > 0);
}

/// A scalar function: its loop is generated as plain Rust (not kernels),
/// and its reverse sweep's tape has the same limit.
#[grad(scalar_runaway_grad)]
fn scalar_runaway(x: f64) -> f64 {
    let mut y = x;
    let mut t = 1.0;
    while t > 0.0 {
        y = y * 1.0 + 1.0;
        t = t + 1.0;
    }
    y
}

#[test]
fn a_scalar_while_loop_that_never_ends_fails_under_grad_at_the_tape_limit() {
    let limit = 1 << 20;
    let err = with_tape_limit(limit, || {
        std::panic::catch_unwind(|| scalar_runaway_grad(0.5))
            .expect_err("the tape limit stops the sweep")
    });
    let msg = message(err);
    assert!(msg.contains("`while` loop"), "names the loop: {msg}");
    assert!(
        msg.contains("oxla::checkpoint"),
        "suggests checkpointing: {msg}"
    );
    assert!(msg.contains(&limit.to_string()), "states the limit: {msg}");
}
