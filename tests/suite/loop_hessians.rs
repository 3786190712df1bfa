//! Second derivatives through loops by reverse over reverse (`grad` of
//! `grad`, `jacrev` of `grad`, `grad` of a function calling a gradient: a
//! Hessian-vector product), each against forward over reverse
//! (`hessian`), central differences of the gradient, and JAX's
//! `grad(grad(..))` over `lax.fori_loop` (`tests/reference/loop_hessians_jax.py`):
//! `for` loops with several carries, an RK4 integrator (also checkpointed),
//! a `while` loop with a fixed bound, a `while` loop whose trip count
//! depends on the data (which JAX cannot reverse), and a power iteration
//! over arrays.

use oxla::ndarray::{array, Array1, ArrayView1, ArrayView2};
use oxla::{grad, transforms};

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs()))
}

fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-5;
    (f(x + h) - f(x - h)) / (2.0 * h)
}

/// The values JAX gives for `name` (`tests/reference/loop_hessians_jax.txt`).
fn jax(name: &str) -> Vec<f64> {
    let text = include_str!("../reference/loop_hessians_jax.txt");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
        .unwrap_or_else(|| panic!("no reference `{name}`"));
    line.split(' ')
        .map(|v| v.parse().expect("a number"))
        .collect()
}

// ---- a for loop with two carries ------------------------------------------------

#[transforms(
    grad(spiral_d1),
    grad(spiral_d2, of = spiral_d1),
    hessian(spiral_h, wrt = x),
    jacfwd(spiral_d3, of = spiral_d2)
)]
fn spiral(x: f64, n: usize) -> f64 {
    let mut u = x;
    let mut v = 1.0;
    for i in 0..n {
        let t = i as f64 * 0.1;
        let un = u - 0.3 * (u * v).sin() + t * x;
        v = v + 0.2 * un.tanh() * x;
        u = un;
    }
    u * v
}

#[test]
fn grad_of_grad_through_a_for_loop_with_two_carries() {
    for n in [0usize, 1, 5] {
        for x in [-0.7, 0.4, 1.1] {
            let d2 = spiral_d2(x, n);
            let want = jax(&format!("spiral n={n} x={x}"))[0];
            assert!(close(d2, want, 1e-13), "n {n} x {x}: {d2} vs JAX {want}");
            let h = spiral_h(x, n);
            assert!(close(d2, h, 1e-13), "n {n} x {x}: {d2} vs hessian {h}");
            let fd = central(|x| spiral_d1(x, n), x);
            assert!(close(d2, fd, 1e-7), "n {n} x {x}: {d2} vs differences {fd}");
            // A third derivative: forward over reverse over reverse (reverse
            // mode alone is refused, `ui-tests`' `loops/third_order_reverse`).
            let d3 = spiral_d3(x, n);
            let fd3 = central(|x| spiral_d2(x, n), x);
            assert!(
                close(d3, fd3, 1e-6),
                "n {n} x {x}: {d3} vs differences {fd3}"
            );
        }
    }
}

// ---- an RK4 integrator, plain and checkpointed ---------------------------------

#[transforms(grad(rk4_dk, wrt = k), grad(rk4_d2, of = rk4_dk))]
fn rk4(k: f64, u0: f64, n: usize) -> f64 {
    let dt = 0.05;
    let mut u = u0;
    for _ in 0..n {
        let k1 = -k * u + 0.5 * u.sin();
        let u2 = u + 0.5 * dt * k1;
        let k2 = -k * u2 + 0.5 * u2.sin();
        let u3 = u + 0.5 * dt * k2;
        let k3 = -k * u3 + 0.5 * u3.sin();
        let u4 = u + dt * k3;
        let k4 = -k * u4 + 0.5 * u4.sin();
        u = u + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
    }
    u * u
}

#[transforms(grad(rk4_sqrt_dk, wrt = k), grad(rk4_sqrt_d2, of = rk4_sqrt_dk))]
fn rk4_sqrt(k: f64, u0: f64, n: usize) -> f64 {
    let dt = 0.05;
    let mut u = u0;
    for _ in oxla::checkpoint(0..n) {
        let k1 = -k * u + 0.5 * u.sin();
        let u2 = u + 0.5 * dt * k1;
        let k2 = -k * u2 + 0.5 * u2.sin();
        let u3 = u + 0.5 * dt * k2;
        let k3 = -k * u3 + 0.5 * u3.sin();
        let u4 = u + dt * k3;
        let k4 = -k * u4 + 0.5 * u4.sin();
        u = u + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
    }
    u * u
}

#[transforms(grad(rk4_every_dk, wrt = k), grad(rk4_every_d2, of = rk4_every_dk))]
fn rk4_every(k: f64, u0: f64, n: usize) -> f64 {
    let dt = 0.05;
    let mut u = u0;
    for _ in oxla::checkpoint_every(3, 0..n) {
        let k1 = -k * u + 0.5 * u.sin();
        let u2 = u + 0.5 * dt * k1;
        let k2 = -k * u2 + 0.5 * u2.sin();
        let u3 = u + 0.5 * dt * k2;
        let k3 = -k * u3 + 0.5 * u3.sin();
        let u4 = u + dt * k3;
        let k4 = -k * u4 + 0.5 * u4.sin();
        u = u + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
    }
    u * u
}

/// `rk4`, run by Rust.
fn rk4_ref(k: f64, u0: f64, n: usize) -> f64 {
    let dt = 0.05;
    let rate = |u: f64| -k * u + 0.5 * u.sin();
    let mut u = u0;
    for _ in 0..n {
        let k1 = rate(u);
        let k2 = rate(u + 0.5 * dt * k1);
        let k3 = rate(u + 0.5 * dt * k2);
        let k4 = rate(u + dt * k3);
        u += dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
    }
    u * u
}

#[test]
fn grad_of_grad_through_an_rk4_integrator_plain_and_checkpointed() {
    let n = 20;
    for (k, u0) in [(0.7, 1.2), (1.5, -0.4)] {
        assert!(close(rk4(k, u0, n), rk4_ref(k, u0, n), 1e-15));
        let (dkk, dku) = rk4_d2(k, u0, n);
        let want = jax(&format!("rk4 k={k} u0={u0}"));
        assert!(close(dkk, want[0], 1e-13), "{dkk} vs JAX {}", want[0]);
        assert!(close(dku, want[1], 1e-13), "{dku} vs JAX {}", want[1]);
        let fk = central(|k| rk4_dk(k, u0, n), k);
        let fu = central(|u0| rk4_dk(k, u0, n), u0);
        assert!(close(dkk, fk, 1e-7), "{dkk} vs differences {fk}");
        assert!(close(dku, fu, 1e-7), "{dku} vs differences {fu}");
        // Checkpointing changes what the tapes keep, not a step's arithmetic.
        assert_eq!(rk4_sqrt_d2(k, u0, n), (dkk, dku));
        assert_eq!(rk4_every_d2(k, u0, n), (dkk, dku));
    }
}

// ---- a while loop with a fixed bound --------------------------------------------

#[transforms(grad(decay_d1), grad(decay_d2, of = decay_d1), hessian(decay_h, wrt = x))]
fn decay(x: f64, n: usize) -> f64 {
    let mut y = x;
    let mut i = 0.0;
    while i < n as f64 {
        y = y - 0.1 * y.sin() * x;
        i += 1.0;
    }
    y * y
}

#[test]
fn grad_of_grad_through_a_while_loop_with_a_fixed_bound() {
    for n in [0usize, 3, 8] {
        for x in [0.5, 1.3] {
            let d2 = decay_d2(x, n);
            let want = jax(&format!("decay n={n} x={x}"))[0];
            assert!(close(d2, want, 1e-13), "n {n} x {x}: {d2} vs JAX {want}");
            assert!(close(d2, decay_h(x, n), 1e-13), "vs hessian");
            let fd = central(|x| decay_d1(x, n), x);
            assert!(close(d2, fd, 1e-7), "n {n} x {x}: {d2} vs differences {fd}");
        }
    }
}

// ---- a while loop whose trip count depends on the data --------------------------

/// Newton's method for `√a` from `a`, until the residual is tiny: JAX
/// refuses reverse mode through such a `while_loop`; oxla's forward sweep
/// records the trip count.
#[transforms(grad(newton_d1), grad(newton_d2, of = newton_d1))]
fn newton(a: f64) -> f64 {
    let mut y = a;
    while (y * y - a).abs() > 1e-15 * a {
        y = 0.5 * (y + a / y);
    }
    y
}

#[test]
fn grad_of_grad_through_a_data_dependent_while_loop() {
    for a in [0.5f64, 2.0, 9.0] {
        // d²√a/da² = −a^(−3/2)/4: the iterates' second derivatives converge
        // with them.
        let want = -0.25 * a.powf(-1.5);
        let d2 = newton_d2(a);
        assert!(close(d2, want, 1e-9), "a {a}: {d2} vs {want}");
        let fd = central(newton_d1, a);
        assert!(close(d2, fd, 1e-6), "a {a}: {d2} vs differences {fd}");
    }
}

// ---- a power iteration over arrays: Hessian-vector products, full Hessians ------

#[transforms(
    grad(rayleigh_grad, wrt = x),
    hessian(rayleigh_hessian, wrt = x),
    jacrev(rayleigh_rr, wrt = x, of = rayleigh_grad)
)]
fn rayleigh(x: ArrayView1<f64>, m: ArrayView2<f64>, n: usize) -> f64 {
    let mut v = x.to_owned();
    for _ in 0..n {
        let y = m.dot(&v);
        v = &y / y.dot(&y).sqrt();
    }
    v.dot(&m.dot(&v))
}

/// `⟨u, ∇f(x)⟩`, whose gradient is the Hessian-vector product `H·u`.
#[grad(rayleigh_hvp, wrt = x)]
fn rayleigh_along(x: ArrayView1<f64>, m: ArrayView2<f64>, n: usize, u: ArrayView1<f64>) -> f64 {
    (&u * &rayleigh_grad(x, m, n)).sum()
}

#[test]
fn hessian_vector_products_and_full_hessians_of_a_power_iteration() {
    let x = array![0.3, -1.0, 0.8];
    let m = array![[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, 0.5]];
    let u = array![1.0, 0.5, -2.0];
    for n in [0usize, 1, 4] {
        let hvp: Array1<f64> = rayleigh_hvp(x.view(), m.view(), n, u.view());
        let rr = rayleigh_rr(x.view(), m.view(), n);
        let fr = rayleigh_hessian(x.view(), m.view(), n);
        let want_hvp = jax(&format!("rayleigh hvp n={n}"));
        let want = jax(&format!("rayleigh hessian n={n}"));
        for i in 0..3 {
            assert!(
                close(hvp[i], want_hvp[i], 1e-12),
                "n {n} hvp {i}: {} vs JAX {}",
                hvp[i],
                want_hvp[i]
            );
            let by_rows: f64 = (0..3).map(|j| fr[[i, j]] * u[j]).sum();
            assert!(close(hvp[i], by_rows, 1e-12), "n {n}: hvp vs hessian·u");
            for j in 0..3 {
                let w = want[3 * i + j];
                assert!(
                    close(rr[[i, j]], w, 1e-12),
                    "n {n} [{i},{j}]: {} vs JAX {w}",
                    rr[[i, j]]
                );
                assert!(close(rr[[i, j]], fr[[i, j]], 1e-12), "rev-rev vs fwd-rev");
            }
        }
        // Differences of the gradient along u.
        let h = 1e-6;
        let gp = rayleigh_grad((&x + &(h * &u)).view(), m.view(), n);
        let gm = rayleigh_grad((&x - &(h * &u)).view(), m.view(), n);
        for i in 0..3 {
            let fd = (gp[i] - gm[i]) / (2.0 * h);
            assert!(
                close(hvp[i], fd, 1e-6),
                "n {n} {i}: {} vs differences {fd}",
                hvp[i]
            );
        }
    }
}
