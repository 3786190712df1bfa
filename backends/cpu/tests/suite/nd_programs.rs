//! Whole programs with the n-dimensional ops (reduce_max/min, transpose,
//! reshape, dot_general, stop_gradient, dim_size, iota) fused, compiled for
//! the host and for baseline SSE2, and run by the executor (also with the
//! matrix products on `gemm`, as the `oxla` crate runs them), against the
//! reference interpreter on the unfused function: exactly where the result
//! is exact (max/min, layout, iota), within a summation bound elsewhere.

use crate::common;
use crate::ir_common::nd;

use common::Compiled;
use nd::*;
use oxla_core::exec::{FnLauncher, InterpLauncher, Launcher, Program};
use oxla_core::kernel::fusion::fuse;
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use oxla_core::{interp, Buffer, DType, Dim, Function, Op, Shape, Tensor};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

const SIZES: [usize; 6] = [0, 1, 3, 5, 17, 1001];

fn value(rng: &mut StdRng, specials: bool) -> f64 {
    if specials && rng.gen_bool(0.05) {
        return [f64::NAN, f64::INFINITY, f64::NEG_INFINITY][rng.gen_range(0..3)];
    }
    rng.gen_range(-2.0..2.0)
}

/// How closely a backend must match `interp::eval`.
#[derive(Clone, Copy)]
enum Tol {
    /// The same value (NaN matches NaN; a zero of either sign matches zero).
    Exact,
    /// Within `rtol · max(1, |want|)`.
    Rel(f64),
}

/// Fuse `f`, compile it for the host and baseline, and compare the
/// kernel interpreter and both JITs with `interp::eval` at every binding
/// of the symbols to `SIZES` (up to 20000 elements).
fn check(f: &Function, specials: bool, tol: Tol) {
    let p = fuse(f).unwrap_or_else(|e| panic!("fuse `{}`: {e}", f.name));
    let jit = Compiled::new(&p.kernels);
    let with_gemm = jit.with_gemm();
    let launchers: [(&str, &dyn Launcher); 4] = [
        ("kernel interpreter", &InterpLauncher(&p.kernels)),
        ("JIT host", &FnLauncher(&jit.host)),
        ("JIT baseline", &FnLauncher(&jit.base)),
        ("JIT host, products on gemm", &with_gemm),
    ];
    let envs = bindings(f, &SIZES, 20_000);
    for (c, env) in envs.iter().enumerate() {
        let mut rng = StdRng::seed_from_u64(c as u64 + 17 * f.eqns.len() as u64);
        let args = args_with(f, env, &mut rng, |rng| value(rng, specials));
        let want = interp::eval(f, &args).unwrap_or_else(|e| panic!("eval: {e}"));
        let bufs: Vec<Buffer> = args.iter().map(Tensor::to_buffer).collect();
        for (name, launcher) in launchers {
            let got = match p.run(launcher, &bufs) {
                Ok(got) => got,
                // A max or min over no elements is an error at the call, as
                // JAX raises (`Program::check_nonempty`): nothing to compare.
                Err(e) if e.contains("no identity") => continue,
                Err(e) => panic!("{name}: `{}` at {env:?}: {e}", f.name),
            };
            compare(&p, name, env, &got, &want, tol);
        }
    }
}

fn compare(
    p: &Program,
    name: &str,
    env: &BTreeMap<String, usize>,
    got: &[Buffer],
    want: &[Tensor],
    tol: Tol,
) {
    for (o, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.len(), w.numel(), "{name}: output {o} length at {env:?}");
        for j in 0..w.numel() {
            let (a, b) = (g.get(j), w.data[j]);
            let ok = if a.is_nan() || b.is_nan() {
                a.is_nan() && b.is_nan()
            } else if a.is_infinite() || b.is_infinite() {
                a == b
            } else {
                match tol {
                    Tol::Exact => a == b,
                    Tol::Rel(r) => (a - b).abs() <= r * b.abs().max(1.0),
                }
            };
            assert!(
                ok,
                "{name}: `{}` at {env:?}: output {o}[{j}] = {a:e}, expected {b:e}\n{}",
                p.function.name,
                p.text()
            );
        }
    }
}

fn reduce_op(max: bool, axes: Vec<usize>) -> Op {
    if max {
        Op::ReduceMax { axes }
    } else {
        Op::ReduceMin { axes }
    }
}

#[test]
fn reduce_max_min_over_axes() {
    for dtype in [DType::F32, DType::F64] {
        for max in [true, false] {
            for axes in [
                vec![0],
                vec![1],
                vec![2],
                vec![0, 2],
                vec![1, 2],
                vec![0, 1, 2],
            ] {
                let s = sh(&[n(), k(3), m()]);
                let f = build(
                    "choose",
                    &[("x", dtype, s.clone()), ("y", dtype, s)],
                    |f, p| {
                        let e = f.mul(p[0], p[1]);
                        let a = push(f, reduce_op(max, axes.clone()), &[p[0]]);
                        let b = push(f, reduce_op(max, axes.clone()), &[e]);
                        vec![a, b]
                    },
                );
                check(&f, true, Tol::Exact);
            }
        }
    }
}

/// Row softmax with the max subtracted, and the row max itself.
#[test]
fn stable_softmax() {
    for dtype in [DType::F32, DType::F64] {
        let s = sh(&[m(), n()]);
        let f = build("softmax", &[("x", dtype, s.clone())], |f, p| {
            let mx = push(f, Op::ReduceMax { axes: vec![1] }, &[p[0]]);
            let mb = f.broadcast(mx, s.clone(), vec![0]);
            let d = f.sub(p[0], mb);
            let e = f.unary(UnaryOp::Exp, d);
            let z = f.reduce_sum(e, vec![1]);
            let zb = f.broadcast(z, s.clone(), vec![0]);
            vec![f.div(e, zb), mx]
        });
        let rtol = if dtype == DType::F32 { 1e-5 } else { 1e-13 };
        check(&f, false, Tol::Rel(rtol));
    }
}

/// Transposes of every rank-3 permutation as outputs and under maps and
/// reductions; reshapes of both kinds.
#[test]
fn transposes_and_reshapes() {
    for perm in [[0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
        for dtype in [DType::F32, DType::F64] {
            let s = sh(&[n(), k(3), m()]);
            let ts = Shape(perm.iter().map(|p| s.0[*p].clone()).collect());
            let f = build("t", &[("x", dtype, s), ("y", dtype, ts)], |f, p| {
                let t = push(
                    f,
                    Op::Transpose {
                        perm: perm.to_vec(),
                    },
                    &[p[0]],
                );
                let z = f.mul(t, p[1]);
                let mx = push(f, Op::ReduceMax { axes: vec![0] }, &[z]);
                vec![t, z, mx]
            });
            check(&f, true, Tol::Exact);
        }
    }
    for dtype in [DType::F32, DType::F64] {
        let f = build("reshape", &[("x", dtype, sh(&[n(), k(6)]))], |f, p| {
            // An exactly rounded expression (x²), materialized for the reshape.
            let e = f.mul(p[0], p[0]);
            let a = push(
                f,
                Op::Reshape {
                    shape: sh(&[k(2), n(), k(3)]),
                },
                &[e],
            );
            let mn = push(f, Op::ReduceMin { axes: vec![2] }, &[a]);
            let u = push(
                f,
                Op::Reshape {
                    shape: sh(&[n(), k(1), k(6)]),
                },
                &[p[0]],
            );
            let neg = f.neg(u);
            vec![mn, neg, a]
        });
        check(&f, true, Tol::Exact);
    }
}

/// Products: matmul, transposed operands, batched, two contracted axes,
/// an outer product; and a layer `tanh(tanh(x) @ w + b)`.
#[test]
fn dot_generals_and_a_layer() {
    for dtype in [DType::F32, DType::F64] {
        let rtol = if dtype == DType::F32 { 2e-5 } else { 1e-12 };
        type Spec = (
            Vec<Dim>,
            Vec<Dim>,
            Vec<usize>,
            Vec<usize>,
            Vec<usize>,
            Vec<usize>,
        );
        let specs: Vec<Spec> = vec![
            (
                vec![m(), k(17)],
                vec![k(17), n()],
                vec![1],
                vec![0],
                vec![],
                vec![],
            ),
            (
                vec![k(33), m()],
                vec![n(), k(33)],
                vec![0],
                vec![1],
                vec![],
                vec![],
            ),
            (
                vec![k(2), m(), k(5)],
                vec![k(2), k(5), n()],
                vec![2],
                vec![1],
                vec![0],
                vec![0],
            ),
            (
                vec![m(), k(3), k(4)],
                vec![k(4), n(), k(3)],
                vec![1, 2],
                vec![2, 0],
                vec![],
                vec![],
            ),
            (vec![m()], vec![n()], vec![], vec![], vec![], vec![]),
            (vec![n()], vec![n(), k(3)], vec![0], vec![0], vec![], vec![]),
        ];
        for (ls, rs, lc, rc, lb, rb) in specs {
            let f = build(
                "dg",
                &[("a", dtype, sh(&ls)), ("b", dtype, sh(&rs))],
                |f, p| vec![dot_general(f, p[0], p[1], &lc, &rc, &lb, &rb)],
            );
            check(&f, false, Tol::Rel(rtol));
        }
        let f = build(
            "layer",
            &[
                ("x", dtype, sh(&[m(), k(40)])),
                ("w", dtype, sh(&[k(40), n()])),
                ("b", dtype, sh(&[n()])),
            ],
            |f, p| {
                let t = f.unary(UnaryOp::Tanh, p[0]);
                let y = dot_general(f, t, p[1], &[1], &[0], &[], &[]);
                let ys = f.shape(y).clone();
                let bb = f.broadcast(p[2], ys, vec![1]);
                let z = f.add(y, bb);
                vec![f.unary(UnaryOp::Tanh, z)]
            },
        );
        check(&f, false, Tol::Rel(rtol));
    }
}

/// stop_gradient, `mean` by dim_size, one-hot rows and a masked argmax by
/// iota.
#[test]
fn dim_size_and_iota() {
    for dtype in [DType::F32, DType::F64] {
        let s = sh(&[n(), k(4)]);
        let f = build(
            "iota",
            &[("labels", dtype, sh(&[n()])), ("x", dtype, s.clone())],
            |f, p| {
                let cols = push(
                    f,
                    Op::Iota {
                        shape: s.clone(),
                        axis: 1,
                        dtype,
                    },
                    &[],
                );
                let rows = push(
                    f,
                    Op::Iota {
                        shape: s.clone(),
                        axis: 0,
                        dtype,
                    },
                    &[],
                );
                let lab = f.broadcast(p[0], s.clone(), vec![0]);
                let eq = f.cmp(CmpOp::Eq, cols, lab);
                let one = f.full(1.0, dtype, &s);
                let zero = f.full(0.0, dtype, &s);
                let onehot = f.select(eq, one, zero);
                let sg = push(f, Op::StopGradient, &[p[1]]);
                let mx = push(f, Op::ReduceMax { axes: vec![1] }, &[sg]);
                let mb = f.broadcast(mx, s.clone(), vec![0]);
                let at = f.cmp(CmpOp::Eq, p[1], mb);
                let none = f.full(-1.0, dtype, &s);
                let idx = f.select(at, cols, none);
                let arg = push(f, Op::ReduceMax { axes: vec![1] }, &[idx]);
                let len = push(f, Op::DimSize { dim: n(), dtype }, &[]);
                let total = f.reduce_sum(p[1], vec![0, 1]);
                let four = f.literal(4.0, dtype);
                let cnt = f.binary(BinaryOp::Mul, len, four);
                let mean = f.div(total, cnt);
                let r = f.add(rows, onehot);
                vec![onehot, arg, mean, r]
            },
        );
        let rtol = if dtype == DType::F32 { 1e-5 } else { 1e-13 };
        check(&f, false, Tol::Rel(rtol));
    }
}
