//! The whole pipeline through the macros: attribute → IR → transforms →
//! fusion → Cranelift JIT (this package has no build script), checked
//! against the reference interpreter on the same IR and against finite
//! differences.

use oxla::oxla_core::{interp, text, DType, Tensor};
use oxla::{grad, jit, jvp, value_and_grad, vjp, vmap};
use rand::{rngs::StdRng, Rng, SeedableRng};

#[jit]
#[grad(chain_grad, wrt = (x, y))]
fn chain(x: &[f32], y: &[f32], s: f32) -> f32 {
    sum((x * s).tanh() * y.exp() + (x - y).max(x * 0.5) / (y * y + 1.0))
}

// The same chain in f64, for finite differences at a tight tolerance.
#[grad(chain64_grad, wrt = (x, y))]
fn chain64(x: &[f64], y: &[f64], s: f64) -> f64 {
    sum((x * s).tanh() * y.exp() + (x - y).max(x * 0.5) / (y * y + 1.0))
}

#[jit]
fn elementwise(x: &[f64], y: &[f64]) -> (Vec<f64>, f64) {
    let a = x.sin() * y.cos() + x.sqrt().ln();
    let b = if x > y { x.powi(3) } else { -y };
    (a * b, dot(a, b))
}

#[vmap(square_all)]
fn square(x: f32) -> f32 {
    x * x
}

#[vmap(per_example, in_axes = (None, 0, 0))]
#[grad(loss_grad, wrt = w)]
fn loss(w: &[f64], x: &[f64], y: f64) -> f64 {
    (1.0 + (-y * dot(w, x)).exp()).ln()
}

#[value_and_grad(poly_vg)]
fn poly(x: f64, y: f64) -> f64 {
    x.powi(3) * y - (x * y).sin()
}

#[jvp(poly_jvp)]
fn poly_forward(x: f64, y: f64) -> f64 {
    x.powi(3) * y - (x * y).sin()
}

#[vjp(poly_vjp)]
fn poly_reverse(x: f64, y: f64) -> f64 {
    x.powi(3) * y - (x * y).sin()
}

// Hessian-vector products, forward over reverse, and a batch of JVPs.
#[vmap(poly_hvp_batch, in_axes = (None, None, 0, 0))]
#[jvp(poly_hvp)]
#[grad(poly_grad)]
fn poly2(x: f64, y: f64) -> f64 {
    x.powi(3) * y - (x * y).sin()
}

fn random(rng: &mut StdRng, n: usize, lo: f64, hi: f64) -> Vec<f64> {
    (0..n).map(|_| rng.gen_range(lo..hi)).collect()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs()))
}

/// The arguments of `chain` and `chain_grad` for the interpreter.
fn chain_args(x: &[f64], y: &[f64]) -> Vec<Tensor> {
    vec![
        Tensor::vector(DType::F32, x),
        Tensor::vector(DType::F32, y),
        Tensor::scalar(DType::F32, 0.7),
    ]
}

/// Run an IR text with the interpreter.
fn reference(ir: &str, args: Vec<Tensor>) -> Vec<Tensor> {
    interp::eval(&text::parse(ir).unwrap(), &args).unwrap()
}

#[test]
fn jit_matches_interpreter_on_every_length() {
    let mut rng = StdRng::seed_from_u64(7);
    for n in [0usize, 1, 3, 4, 5, 1000, 1001] {
        let x = random(&mut rng, n, 0.1, 2.0);
        let y = random(&mut rng, n, -1.0, 1.0);
        let (xf, yf): (Vec<f32>, Vec<f32>) = (
            x.iter().map(|v| *v as f32).collect(),
            y.iter().map(|v| *v as f32).collect(),
        );
        let got = chain(&xf, &yf, 0.7);
        let want = reference(CHAIN_IR, chain_args(&x, &y));
        assert!(
            close(got as f64, want[0].data[0], 1e-4),
            "n={n}: {got} vs {}",
            want[0].data[0]
        );

        let (gx, gy) = chain_grad(&xf, &yf, 0.7);
        let want = reference(CHAIN_GRAD_IR, chain_args(&x, &y));
        for (g, w) in gx
            .iter()
            .zip(&want[0].data)
            .chain(gy.iter().zip(&want[1].data))
        {
            assert!(close(*g as f64, *w, 1e-5), "n={n}: {g} vs {w}");
        }

        let (a, d) = elementwise(&x, &y);
        let want = reference(
            ELEMENTWISE_IR,
            vec![
                Tensor::vector(DType::F64, &x),
                Tensor::vector(DType::F64, &y),
            ],
        );
        assert_eq!(a.len(), n);
        for (g, w) in a.iter().zip(&want[0].data) {
            assert!(close(*g, *w, 1e-13), "n={n}: {g} vs {w}");
        }
        assert!(
            close(d, want[1].data[0], 1e-12),
            "n={n}: {d} vs {}",
            want[1].data[0]
        );
    }
}

#[test]
fn repeated_calls_reuse_buffers_without_stale_values() {
    // Scalar outputs stay in a per-thread pool for reuse; every call must
    // still see only its own inputs.
    let mut rng = StdRng::seed_from_u64(13);
    for _ in 0..5 {
        let x = random(&mut rng, 9, 0.1, 2.0);
        let y = random(&mut rng, 9, -1.0, 1.0);
        let (a, d) = elementwise(&x, &y);
        let want = reference(
            ELEMENTWISE_IR,
            vec![
                Tensor::vector(DType::F64, &x),
                Tensor::vector(DType::F64, &y),
            ],
        );
        assert_eq!(a.len(), 9);
        assert!(a
            .iter()
            .zip(&want[0].data)
            .all(|(g, w)| close(*g, *w, 1e-13)));
        assert!(close(d, want[1].data[0], 1e-12));
    }
}

#[test]
fn grad_of_jit_matches_finite_differences() {
    // Central differences of the f64 chain on every coordinate (the f32
    // gradient is checked against the interpreter above).
    let mut rng = StdRng::seed_from_u64(3);
    for n in [1usize, 5, 9] {
        let x = random(&mut rng, n, 0.1, 2.0);
        let y = random(&mut rng, n, -1.0, 1.0);
        let (gx, gy) = chain64_grad(&x, &y, 0.7);
        let h = 1e-6;
        for i in 0..n {
            for (which, g) in [(0, gx[i]), (1, gy[i])] {
                let (mut p, mut m) = ((x.clone(), y.clone()), (x.clone(), y.clone()));
                if which == 0 {
                    p.0[i] += h;
                    m.0[i] -= h;
                } else {
                    p.1[i] += h;
                    m.1[i] -= h;
                }
                let fd = (chain64(&p.0, &p.1, 0.7) - chain64(&m.0, &m.1, 0.7)) / (2.0 * h);
                assert!(close(g, fd, 1e-7), "n={n}, ∂{which}[{i}]: {g} vs {fd}");
            }
        }
    }
}

#[test]
fn vmap_matches_a_loop() {
    let xs: Vec<f32> = (1..=10).map(|i| i as f32).collect();
    let want: Vec<f32> = xs.iter().map(|x| square(*x)).collect();
    assert_eq!(square_all(&xs), want);

    let mut rng = StdRng::seed_from_u64(11);
    let (b, d) = (7, 4);
    let w = random(&mut rng, d, -1.0, 1.0);
    let xs = random(&mut rng, b * d, -2.0, 2.0);
    let ys: Vec<f64> = (0..b)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let x2 = oxla::ndarray::ArrayView2::from_shape((b, d), &xs).unwrap();
    let batched = per_example(&w, x2, &ys);
    assert_eq!(batched.dim(), (b, d));
    for i in 0..b {
        let single = loss_grad(&w, &xs[i * d..(i + 1) * d], ys[i]);
        for (g, s) in batched.row(i).iter().zip(&single) {
            assert!(close(*g, *s, 1e-14), "example {i}: {g} vs {s}");
        }
    }
}

#[test]
fn jvp_and_vjp_satisfy_the_dot_product_identity() {
    let mut rng = StdRng::seed_from_u64(5);
    for _ in 0..20 {
        let (x, y) = (rng.gen_range(-2.0..2.0), rng.gen_range(-2.0..2.0));
        let (u, v, w) = (
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
        );
        let (value, t) = poly_jvp(x, y, u, v);
        let (value2, cx, cy) = poly_vjp(x, y, w);
        assert_eq!(value, poly(x, y));
        assert_eq!(value2, poly(x, y));
        assert!(close(w * t, cx * u + cy * v, 1e-13));
        let (value3, gx, gy) = poly_vg(x, y);
        assert_eq!(value3, value);
        assert!(close(gx * w, cx, 1e-13) && close(gy * w, cy, 1e-13));
    }
}

#[test]
fn composed_transforms_match_finite_differences() {
    let (x, y) = (0.8, -0.6);
    let (u, v) = (0.3, -1.1);
    // jvp(grad(f)) returns (grads..., H·(u, v)).
    let (gx, gy, hx, hy) = poly_hvp(x, y, u, v);
    assert_eq!((gx, gy), poly_grad(x, y));
    let h = 1e-6;
    let (gxp, gyp) = poly_grad(x + h * u, y + h * v);
    let (gxm, gym) = poly_grad(x - h * u, y - h * v);
    assert!(close(hx, (gxp - gxm) / (2.0 * h), 1e-7), "{hx}");
    assert!(close(hy, (gyp - gym) / (2.0 * h), 1e-7), "{hy}");
    // vmap over directions: one HVP per row.
    let (us, vs) = ([1.0, 0.0, u], [0.0, 1.0, v]);
    let (bgx, _bgy, bhx, bhy) = poly_hvp_batch(x, y, &us, &vs);
    // The batch runs compiled kernels, whose sin/cos are within an ulp or
    // two of the std functions the scalar path calls: equal to that error.
    for i in 0..3 {
        let (_, _, hx, hy) = poly_hvp(x, y, us[i], vs[i]);
        for (b, s) in [(bgx[i], gx), (bhx[i], hx), (bhy[i], hy)] {
            assert!(close(b, s, 4.0 * f64::EPSILON), "row {i}: {b} vs {s}");
        }
    }
}

#[test]
#[should_panic(expected = "argument `y`")]
fn a_length_mismatch_names_the_argument() {
    chain(&[1.0, 2.0, 3.0], &[1.0, 2.0], 1.0);
}

#[test]
fn functions_compile_once_by_jit() {
    let _ = chain(&[1.0], &[2.0], 1.0);
    let log = oxla::compile_log();
    let rec = log
        .iter()
        .find(|r| r.function == "chain")
        .expect("chain was compiled");
    assert_eq!(rec.how, oxla::CompiledBy::Jit);
    let _ = chain(&[1.0, 2.0], &[2.0, 3.0], 1.0);
    let compiles = oxla::compile_log()
        .iter()
        .filter(|r| r.function == "chain")
        .count();
    assert_eq!(compiles, 1, "a second call reuses the compiled kernels");
    assert_eq!(
        rec.kernels, 1,
        "the elementwise chain and its sum fuse into one kernel"
    );
}
