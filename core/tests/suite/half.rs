//! Half types (`f16`, `bf16`): the kernel interpreter loads halves, computes
//! in f32 and rounds on store, so a single-kernel program on half inputs
//! equals the f32 function on the same (exactly widened) inputs, rounded to
//! the half type. The reference interpreter rounds after every op, so it
//! agrees with that to within a few half-precision ulps.

use crate::common;

use common::{assert_close, rng};
use oxla_core::exec::InterpLauncher;
use oxla_core::kernel::fusion::fuse;
use oxla_core::ops::elementwise::{BinaryOp, UnaryOp};
use oxla_core::*;
use rand::Rng;

const HALVES: [DType; 2] = [DType::F16, DType::BF16];

struct HalfCase {
    name: &'static str,
    /// Param shapes (rank 0, `[n]` or `[n,3]`) and value ranges.
    params: Vec<(usize, (f64, f64))>,
    body: fn(&mut Function, &[Var], DType) -> Vec<Var>,
    /// Whether fusion makes one kernel (then the kernel result is exact).
    one_kernel: bool,
    /// Error bound of the per-op-rounding interpreter, in ulps of the
    /// half type times `max(1, |value|)`, per element of `n`.
    ulps: f64,
    ulps_per_n: f64,
}

fn build(c: &HalfCase, dtype: DType) -> Function {
    let n = Dim::sym("n");
    let mut f = Function::new(c.name);
    let ps: Vec<Var> = c
        .params
        .iter()
        .enumerate()
        .map(|(i, (rank, _))| {
            let shape = match rank {
                0 => Shape::scalar(),
                1 => Shape(vec![n.clone()]),
                _ => Shape(vec![n.clone(), Dim::Const(3)]),
            };
            f.add_param(&format!("p{i}"), Type::new(dtype, shape))
        })
        .collect();
    f.outs = (c.body)(&mut f, &ps, dtype);
    verify::verify(&f).unwrap();
    f
}

fn cases() -> Vec<HalfCase> {
    let any = (-2.0, 2.0);
    let pos = (0.5, 2.0);
    vec![
        HalfCase {
            name: "chain",
            params: vec![(1, any), (1, pos)],
            body: |f, p, _| {
                let xy = f.mul(p[0], p[1]);
                let nx = f.neg(p[0]);
                let e = f.unary(UnaryOp::Exp, nx);
                let s = f.add(xy, e);
                let t = f.unary(UnaryOp::Tanh, s);
                let r = f.unary(UnaryOp::Sqrt, p[1]);
                let l = f.unary(UnaryOp::Log, p[1]);
                let a = f.sub(t, r);
                vec![f.add(a, l)]
            },
            one_kernel: true,
            ulps: 16.0,
            ulps_per_n: 0.0,
        },
        HalfCase {
            name: "scaled_shift",
            params: vec![(2, any), (0, any), (1, any)],
            body: |f, p, d| {
                let s = f.shape(p[0]).clone();
                let b = f.broadcast(p[1], s.clone(), vec![]);
                let c = f.broadcast(p[2], s, vec![0]);
                let m = f.mul(p[0], b);
                let s = f.shape(m).clone();
                let k = f.full(0.75, d, &s);
                let m = f.mul(m, k);
                vec![f.add(m, c)]
            },
            one_kernel: true,
            ulps: 8.0,
            ulps_per_n: 0.0,
        },
        HalfCase {
            name: "max_min_powi",
            params: vec![(1, any), (1, any)],
            body: |f, p, _| {
                let hi = f.binary(BinaryOp::Max, p[0], p[1]);
                let lo = f.binary(BinaryOp::Min, p[0], p[1]);
                let c = f.unary(UnaryOp::Powi(3), lo);
                let q = f.div(c, hi);
                vec![f.mul(q, p[0])]
            },
            one_kernel: true,
            ulps: 16.0,
            ulps_per_n: 0.0,
        },
        HalfCase {
            name: "pow",
            params: vec![(1, pos), (1, any)],
            body: |f, p, _| vec![f.binary(BinaryOp::Pow, p[0], p[1])],
            one_kernel: true,
            ulps: 4.0,
            ulps_per_n: 0.0,
        },
        HalfCase {
            name: "sum_of_products",
            params: vec![(1, any), (1, any), (1, any)],
            body: |f, p, d| {
                let two = f.full(2.0, d, &f.shape(p[0]).clone());
                let a = f.mul(p[0], two);
                let b = f.mul(a, p[1]);
                let c = f.add(b, p[2]);
                vec![f.reduce_sum(c, vec![0])]
            },
            one_kernel: true,
            ulps: 8.0,
            ulps_per_n: 12.0,
        },
        HalfCase {
            name: "dot",
            params: vec![(1, any), (1, any)],
            body: |f, p, _| vec![f.dot(p[0], p[1])],
            one_kernel: true,
            ulps: 8.0,
            ulps_per_n: 8.0,
        },
        HalfCase {
            name: "rows",
            params: vec![(2, any), (2, any)],
            body: |f, p, _| {
                let s = f.unary(UnaryOp::Sin, p[0]);
                let m = f.mul(s, p[1]);
                vec![f.reduce_sum(m, vec![1])]
            },
            one_kernel: true,
            ulps: 16.0,
            ulps_per_n: 0.0,
        },
        HalfCase {
            name: "softmax",
            params: vec![(1, any)],
            body: |f, p, _| {
                let e = f.unary(UnaryOp::Exp, p[0]);
                let s = f.reduce_sum(e, vec![0]);
                let sb = f.broadcast(s, f.shape(p[0]).clone(), vec![]);
                vec![f.div(e, sb)]
            },
            one_kernel: false,
            ulps: 8.0,
            ulps_per_n: 4.0,
        },
    ]
}

fn shape_of(rank: usize, n: usize) -> Vec<usize> {
    match rank {
        0 => vec![],
        1 => vec![n],
        _ => vec![n, 3],
    }
}

#[test]
fn half_types_agree_with_rounded_f32() {
    for (ci, c) in cases().iter().enumerate() {
        for h in HALVES {
            let fh = build(c, h);
            let f32f = build(c, DType::F32);
            let p = fuse(&fh).unwrap();
            if c.one_kernel {
                assert_eq!(p.kernels.len(), 1, "{}: {}", c.name, p.text());
            }
            for n in [0usize, 1, 3, 8, 33, 1001] {
                let ctx = format!("{} in {h} at n = {n}", c.name);
                let mut rng = rng(ci as u64 * 1000 + n as u64);
                // Half inputs, and the same values as f32 (exact).
                let args_h: Vec<Tensor> = c
                    .params
                    .iter()
                    .map(|(rank, r)| {
                        let shape = shape_of(*rank, n);
                        let k = shape.iter().product();
                        let data = (0..k).map(|_| rng.gen_range(r.0..r.1)).collect();
                        Tensor::new(h, shape, data)
                    })
                    .collect();
                let args_32: Vec<Tensor> = args_h
                    .iter()
                    .map(|t| Tensor::new(DType::F32, t.shape.clone(), t.data.clone()))
                    .collect();
                assert!(args_h.iter().zip(&args_32).all(|(a, b)| a.data == b.data));
                let r32 = interp::eval(&f32f, &args_32).unwrap();
                let want: Vec<Vec<f64>> = r32
                    .iter()
                    .map(|t| t.data.iter().map(|v| h.round(*v)).collect())
                    .collect();

                // Kernel interpreter on half buffers.
                let bufs: Vec<Buffer> = args_h.iter().map(Tensor::to_buffer).collect();
                let out = p.run(&InterpLauncher(&p.kernels), &bufs).unwrap();
                assert_eq!(out[0].dtype(), h, "{ctx}");
                let got = out[0].to_f64();
                let eps = h.epsilon();
                if c.one_kernel {
                    assert_eq!(got, want[0], "{ctx}: kernel interpreter vs rounded f32");
                } else {
                    // The reduction is stored as a half between kernels.
                    assert_close(
                        &format!("{ctx}: kernel interpreter vs rounded f32"),
                        &got,
                        &want[0],
                        4.0 * eps,
                    );
                }

                // Reference interpreter on halves: rounds after every op.
                let rh = interp::eval(&fh, &args_h).unwrap();
                assert_eq!(rh[0].dtype, h);
                let tol = (c.ulps + c.ulps_per_n * n as f64) * eps;
                assert_close(
                    &format!("{ctx}: interpreter vs rounded f32"),
                    &rh[0].data,
                    &want[0],
                    tol,
                );
            }
        }
    }
}

/// A literal of a half type holds the half nearest its value, in the
/// reference interpreter (and constant folding) and in kernels alike:
/// `x * 0.1` in f16 multiplies by f16(0.1), not by f32(0.1).
#[test]
fn half_literals_are_rounded_to_their_type() {
    for h in HALVES {
        let mut f = Function::new("scale");
        let x = f.add_param("x", Type::new(h, Shape(vec![Dim::sym("n")])));
        let s = f.shape(x).clone();
        let k = f.full(0.1, h, &s);
        f.outs = vec![f.mul(x, k)];
        let xs: Vec<f64> = (1..=64).map(|i| 1.0 + i as f64 / 64.0).collect();
        let lit = h.round(0.1);
        assert_ne!(lit, 0.1f32 as f64);
        // One f32 product of half values, rounded to the half type.
        let want: Vec<f64> = xs
            .iter()
            .map(|x| h.round((h.round(*x) as f32 * lit as f32) as f64))
            .collect();
        let r = interp::eval(&f, &[Tensor::vector(h, &xs)]).unwrap();
        assert_eq!(r[0].data, want, "{h}: interpreter");
        let p = fuse(&f).unwrap();
        let out = p
            .run(&InterpLauncher(&p.kernels), &[Buffer::from_f64(h, &xs)])
            .unwrap();
        assert_eq!(out[0].to_f64(), want, "{h}: kernel interpreter");
    }
}

/// Rounding to nearest on store: 1 + 0.75 ulp rounds up to the next half,
/// 1 + 0.25 ulp down to 1, in both interpreters.
#[test]
fn rounding_on_store() {
    for h in HALVES {
        let eps = h.epsilon();
        let mut f = Function::new("add");
        let x = f.add_param("x", Type::scalar(h));
        let y = f.add_param("y", Type::scalar(h));
        f.outs = vec![f.add(x, y)];
        let p = fuse(&f).unwrap();
        for (b, want) in [(0.75 * eps, 1.0 + eps), (0.25 * eps, 1.0)] {
            assert_eq!(h.round(b), b, "{h}: {b:e} is a half");
            let r = interp::eval(&f, &[Tensor::scalar(h, 1.0), Tensor::scalar(h, b)]).unwrap();
            assert_eq!(r[0].data, vec![want], "{h}: interpreter, 1 + {b:e}");
            let out = p
                .run(
                    &InterpLauncher(&p.kernels),
                    &[Buffer::from_f64(h, &[1.0]), Buffer::from_f64(h, &[b])],
                )
                .unwrap();
            assert_eq!(out[0].to_f64(), vec![want], "{h}: kernel, 1 + {b:e}");
        }
    }
}
