//! Fusion of the n-dimensional ops (reduce_max/min, transpose, reshape,
//! dot_general, stop_gradient, dim_size, iota): the program run with the
//! kernel interpreter against the reference interpreter on the unfused
//! function, bit for bit (every value here is exact or summed in f64 in the
//! same order), at awkward sizes and with NaN and ±inf in max/min; and the
//! kernels fusion makes (how many, what they hold).

use crate::common;

use common::nd::*;
use common::{rng, run_program};
use oxla_core::exec::Program;
use oxla_core::kernel::fusion::fuse;
use oxla_core::kernel::{InstKind, Kernel, Reduce};
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use oxla_core::*;
use rand::rngs::StdRng;
use rand::Rng;
use std::collections::BTreeMap;

/// Sizes the symbols `n` and `m` take.
const SIZES: [usize; 6] = [0, 1, 3, 4, 17, 1000];

/// A value in [-2, 2] (quarters, so ties happen), or now and then a NaN, an
/// infinity or a signed zero when `specials`.
fn value(rng: &mut StdRng, specials: bool) -> f64 {
    if specials && rng.gen_bool(0.08) {
        return [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0][rng.gen_range(0..5)];
    }
    if rng.gen_bool(0.3) {
        rng.gen_range(-8..=8) as f64 * 0.25
    } else {
        rng.gen_range(-2.0..2.0)
    }
}

fn args_for(
    f: &Function,
    env: &BTreeMap<String, usize>,
    rng: &mut StdRng,
    specials: bool,
) -> Vec<Tensor> {
    args_with(f, env, rng, |rng| value(rng, specials))
}

/// Equal values: the same bits, or both NaN.
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Fuse `f`, run it at every binding of its symbols to `SIZES` (pairs kept
/// below 20000 elements) and compare bit for bit with `interp::eval`.
fn check(f: &Function, specials: bool) -> Program {
    let p = fuse(f).unwrap_or_else(|e| panic!("fuse `{}`: {e}", f.name));
    let envs = bindings(f, &SIZES, 20_000);
    for (i, env) in envs.iter().enumerate() {
        let mut rng = rng(i as u64 * 7919 + f.eqns.len() as u64);
        let args = args_for(f, env, &mut rng, specials);
        let want = interp::eval(f, &args).unwrap_or_else(|e| panic!("eval: {e}"));
        let got = run_program(&p, &args);
        for (o, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g.shape, w.shape,
                "`{}` at {env:?}: output {o} shape",
                f.name
            );
            if let Some(j) = (0..w.numel()).find(|&j| !same(g.data[j], w.data[j])) {
                panic!(
                    "`{}` at {env:?}: output {o}[{j}] = {:e}, expected {:e}\n{}",
                    f.name,
                    g.data[j],
                    w.data[j],
                    p.text()
                );
            }
        }
    }
    p
}

/// Every buffer of a program is a parameter or an output.
fn no_intermediates(p: &Program) -> bool {
    p.buffers
        .iter()
        .enumerate()
        .all(|(b, info)| info.param.is_some() || p.outputs.contains(&b))
}

fn reduce_op(r: Reduce, axes: Vec<usize>) -> Op {
    match r {
        Reduce::Sum => Op::ReduceSum { axes },
        Reduce::Max => Op::ReduceMax { axes },
        Reduce::Min => Op::ReduceMin { axes },
        Reduce::Prod => Op::ReduceProd { axes },
    }
}

/// Every subset of the axes of `[n, 3, m]`, max and min, f64 and f32, with
/// NaN and infinities among the inputs, and of an expression (`x * y`).
#[test]
fn reduce_max_min_over_every_axis_subset() {
    for dtype in [DType::F64, DType::F32] {
        for r in [Reduce::Max, Reduce::Min] {
            for mask in 0..8usize {
                let axes: Vec<usize> = (0..3).filter(|a| mask & (1 << a) != 0).collect();
                let s = sh(&[n(), k(3), m()]);
                let f = build(
                    &format!("{}_{axes:?}_{dtype}", r.name()),
                    &[("x", dtype, s.clone()), ("y", dtype, s)],
                    |f, p| {
                        let xy = f.mul(p[0], p[1]);
                        let a = push(f, reduce_op(r, axes.clone()), &[p[0]]);
                        let b = push(f, reduce_op(r, axes.clone()), &[xy]);
                        vec![a, b]
                    },
                );
                let p = check(&f, true);
                let reductions = p.kernels.iter().filter(|k| k.is_reduction()).count();
                if axes.is_empty() {
                    assert_eq!(reductions, 0, "{}", p.text());
                } else {
                    assert_eq!(reductions, 2, "{}", p.text());
                    assert!(p.kernels.iter().all(|k| k.reduce == r), "{}", p.text());
                }
            }
        }
    }
}

/// Max over no elements is -inf, min +inf; sums of no elements stay 0.
#[test]
fn empty_max_and_min_are_errors_at_the_call() {
    // JAX raises for a max or min over no elements; the sum keeps its 0.
    let f = build("empty", &[("x", DType::F32, sh(&[n(), k(0)]))], |f, p| {
        let a = push(f, Op::ReduceMax { axes: vec![1] }, &[p[0]]);
        let b = push(f, Op::ReduceMin { axes: vec![1] }, &[p[0]]);
        let c = f.reduce_sum(p[0], vec![1]);
        vec![a, b, c]
    });
    let p = fuse(&f).unwrap();
    let err = p.check_nonempty(&[3]).expect_err("an empty max");
    assert!(
        err.contains("`empty`")
            && err.contains("axis 1 of argument `x`")
            && err.contains("no identity"),
        "{err}"
    );
    let g = build(
        "sum_only",
        &[("x", DType::F32, sh(&[n(), k(0)]))],
        |f, p| vec![f.reduce_sum(p[0], vec![1])],
    );
    let p = fuse(&g).unwrap();
    let x = Tensor::new(DType::F32, vec![3, 0], vec![]);
    let got = run_program(&p, &[x, Tensor::new(DType::F32, vec![3], vec![0.0; 3])]);
    assert_eq!(got[0].data, vec![0.0; 3]);
}

/// A NaN anywhere in a row makes its max and min NaN, whatever its place.
#[test]
fn nan_anywhere_propagates() {
    let f = build("nan", &[("x", DType::F64, sh(&[k(5), n()]))], |f, p| {
        let a = push(f, Op::ReduceMax { axes: vec![1] }, &[p[0]]);
        let b = push(f, Op::ReduceMin { axes: vec![1] }, &[p[0]]);
        vec![a, b]
    });
    let p = fuse(&f).unwrap();
    for len in [1usize, 2, 17, 1001] {
        let mut data = vec![1.0; 5 * len];
        for row in 0..5 {
            // Row r has its NaN at position r * (len - 1) / 4.
            data[row * len + row * (len - 1) / 4] = f64::NAN;
        }
        let x = Tensor::new(DType::F64, vec![5, len], data);
        let got = run_program(&p, &[x, Tensor::new(DType::F32, vec![len], vec![0.0; len])]);
        assert!(
            got.iter().all(|t| t.data.iter().all(|v| v.is_nan())),
            "{len}"
        );
    }
}

/// Every permutation of a rank-3 value: as an output, combined with an
/// untransposed value, reduced (sum, max) along each axis, and a
/// transpose of a transpose.
#[test]
fn transposes() {
    let perms = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    for perm in perms {
        let s = sh(&[n(), k(3), m()]);
        let ts = Shape(perm.iter().map(|p| s.0[*p].clone()).collect());
        let f = build(
            &format!("transpose_{perm:?}"),
            &[("x", DType::F64, s), ("y", DType::F64, ts)],
            |f, p| {
                let t = push(
                    f,
                    Op::Transpose {
                        perm: perm.to_vec(),
                    },
                    &[p[0]],
                );
                let e = f.unary(UnaryOp::Exp, t);
                let z = f.mul(e, p[1]);
                let s0 = f.reduce_sum(z, vec![0]);
                let m2 = push(f, Op::ReduceMax { axes: vec![2] }, &[z]);
                let inv = oxla_core::ops::layout::inverse_perm(&perm);
                let back = push(f, Op::Transpose { perm: inv }, &[z]);
                vec![t, s0, m2, back]
            },
        );
        let p = check(&f, true);
        // Four outputs, one kernel each: the transposes are strides.
        assert_eq!(p.kernels.len(), 4, "{}", p.text());
        assert!(no_intermediates(&p), "{}", p.text());
    }
}

/// Reshapes that only add or drop unit axes remap coordinates (no kernel of
/// their own); others read a materialized operand through the reshaped
/// strides.
#[test]
fn reshapes() {
    // [n, 3] → [1, n, 1, 3] → [n, 3]: unit axes only, one kernel for the sum.
    let f = build(
        "unit_axes",
        &[("x", DType::F64, sh(&[n(), k(3)]))],
        |f, p| {
            let e = f.unary(UnaryOp::Tanh, p[0]);
            let r = push(
                f,
                Op::Reshape {
                    shape: sh(&[k(1), n(), k(1), k(3)]),
                },
                &[e],
            );
            let s = push(
                f,
                Op::ReduceMax {
                    axes: vec![0, 1, 2],
                },
                &[r],
            );
            let back = push(
                f,
                Op::Reshape {
                    shape: sh(&[n(), k(3)]),
                },
                &[r],
            );
            let y = f.sub(back, p[0]);
            vec![s, y]
        },
    );
    let p = check(&f, true);
    assert_eq!(p.kernels.len(), 2, "{}", p.text());
    assert!(no_intermediates(&p), "{}", p.text());

    // [n, 6] → [n, 2, 3] (regrouping the tail) and [n, 6] → [6, n] (same
    // elements, another grouping), of an expression: it is materialized
    // once and read through the new strides.
    let f = build("regroup", &[("x", DType::F64, sh(&[n(), k(6)]))], |f, p| {
        let e = f.unary(UnaryOp::Exp, p[0]);
        let a = push(
            f,
            Op::Reshape {
                shape: sh(&[n(), k(2), k(3)]),
            },
            &[e],
        );
        let sa = push(f, Op::ReduceMin { axes: vec![1] }, &[a]);
        let b = push(
            f,
            Op::Reshape {
                shape: sh(&[k(6), n()]),
            },
            &[e],
        );
        let two = f.full(2.0, DType::F64, &sh(&[k(6), n()]));
        let b2 = f.mul(b, two);
        vec![sa, b2]
    });
    let p = check(&f, false);
    assert_eq!(p.kernels.len(), 3, "exp, min, mul: {}", p.text());

    // A reshape of a transpose (not row-major): the transpose is written.
    let f = build(
        "of_transpose",
        &[("x", DType::F32, sh(&[n(), k(3)]))],
        |f, p| {
            let t = push(f, Op::Transpose { perm: vec![1, 0] }, &[p[0]]);
            let r = push(
                f,
                Op::Reshape {
                    shape: sh(&[n(), k(3)]),
                },
                &[t],
            );
            let y = f.add(r, p[0]);
            vec![y]
        },
    );
    check(&f, true);

    // A reshape of a parameter needs no kernel but the consumer's; as an
    // output it is one copy.
    let f = build(
        "of_param",
        &[("x", DType::F64, sh(&[n(), k(4)]))],
        |f, p| {
            vec![push(
                f,
                Op::Reshape {
                    shape: sh(&[k(2), n(), k(2)]),
                },
                &[p[0]],
            )]
        },
    );
    let p = check(&f, false);
    assert_eq!(p.kernels.len(), 1, "{}", p.text());
}

/// Whether `k` is exactly `Load a, Load b, Mul` stored once, a sum over one
/// axis: the form a gemm path matches.
fn is_plain_product(k: &Kernel) -> bool {
    matches!(
        k.insts.iter().map(|i| &i.kind).collect::<Vec<_>>()[..],
        [
            InstKind::Load { .. },
            InstKind::Load { .. },
            InstKind::Binary(BinaryOp::Mul, 0, 1)
        ]
    ) && k.stores.len() == 1
        && k.reduce == Reduce::Sum
}

/// Products of every shape: matrix·matrix, contracted on either axis of
/// either operand, batched, two contracted axes, no contracted axis (an
/// outer product), vector·matrix, with transposed operands.
#[test]
fn dot_generals() {
    let f64s = DType::F64;
    // (name, lhs shape, rhs shape, lhs contract, rhs contract, lhs batch, rhs batch)
    type Spec = (
        &'static str,
        Vec<Dim>,
        Vec<Dim>,
        Vec<usize>,
        Vec<usize>,
        Vec<usize>,
        Vec<usize>,
    );
    let specs: Vec<Spec> = vec![
        (
            "mm",
            vec![m(), k(17)],
            vec![k(17), n()],
            vec![1],
            vec![0],
            vec![],
            vec![],
        ),
        (
            "mtm",
            vec![k(3), m()],
            vec![k(3), n()],
            vec![0],
            vec![0],
            vec![],
            vec![],
        ),
        (
            "mmt",
            vec![m(), k(5)],
            vec![n(), k(5)],
            vec![1],
            vec![1],
            vec![],
            vec![],
        ),
        (
            "batched",
            vec![k(2), m(), k(4)],
            vec![k(2), k(4), n()],
            vec![2],
            vec![1],
            vec![0],
            vec![0],
        ),
        (
            "batch_last",
            vec![m(), k(4), k(3)],
            vec![k(3), k(4), n()],
            vec![1],
            vec![1],
            vec![2],
            vec![0],
        ),
        (
            "two_contracted",
            vec![m(), k(3), k(4)],
            vec![k(4), n(), k(3)],
            vec![1, 2],
            vec![2, 0],
            vec![],
            vec![],
        ),
        (
            "outer",
            vec![m()],
            vec![n()],
            vec![],
            vec![],
            vec![],
            vec![],
        ),
        (
            "vec_mat",
            vec![k(1000)],
            vec![k(1000), n()],
            vec![0],
            vec![0],
            vec![],
            vec![],
        ),
        (
            "inner_n",
            vec![n()],
            vec![n()],
            vec![0],
            vec![0],
            vec![],
            vec![],
        ),
    ];
    for (name, ls, rs, lc, rc, lb, rb) in specs {
        let f = build(
            name,
            &[("a", f64s, sh(&ls)), ("b", f64s, sh(&rs))],
            |f, p| vec![dot_general(f, p[0], p[1], &lc, &rc, &lb, &rb)],
        );
        let p = check(&f, false);
        assert_eq!(p.kernels.len(), 1, "{name}: {}", p.text());
        let kern = &p.kernels[0];
        assert_eq!(kern.reduce_dims, lc.len(), "{name}");
        if lc.len() == 1 {
            assert!(is_plain_product(kern), "{name}: {kern}");
        }
    }
    // Operands that are transposes of parameters are read through strides:
    // still one plain product, no copy.
    let f = build(
        "transposed_operands",
        &[
            ("a", f64s, sh(&[k(17), m()])),
            ("b", f64s, sh(&[n(), k(17)])),
        ],
        |f, p| {
            let at = push(f, Op::Transpose { perm: vec![1, 0] }, &[p[0]]);
            let bt = push(f, Op::Transpose { perm: vec![1, 0] }, &[p[1]]);
            vec![dot_general(f, at, bt, &[1], &[0], &[], &[])]
        },
    );
    let p = check(&f, false);
    assert_eq!(p.kernels.len(), 1, "{}", p.text());
    assert!(is_plain_product(&p.kernels[0]), "{}", p.text());
    // f32 products, summed in f32 by the kernel interpreter and in f64 by
    // the reference: close, not equal.
    let f = build(
        "mm_f32",
        &[
            ("a", DType::F32, sh(&[m(), k(300)])),
            ("b", DType::F32, sh(&[k(300), n()])),
        ],
        |f, p| vec![dot_general(f, p[0], p[1], &[1], &[0], &[], &[])],
    );
    let p = fuse(&f).unwrap();
    let mut env = BTreeMap::new();
    env.insert("m".to_string(), 3);
    env.insert("n".to_string(), 5);
    let args = args_for(&f, &env, &mut rng(3), false);
    let want = interp::eval(&f, &args).unwrap();
    let got = run_program(&p, &args);
    common::assert_close("mm f32", &got[0].data, &want[0].data, 1e-5);
}

/// `tanh(x) @ w`: `tanh(x)` is computed once, by a map kernel, and the
/// product kernel is a plain `Load, Load, Mul`; a bias add and a tanh after
/// the product are one more kernel.
#[test]
fn tanh_x_matmul_w_then_bias_and_tanh() {
    let f = build(
        "mlp_layer",
        &[
            ("x", DType::F64, sh(&[m(), k(17)])),
            ("w", DType::F64, sh(&[k(17), n()])),
            ("b", DType::F64, sh(&[n()])),
        ],
        |f, p| {
            let t = f.unary(UnaryOp::Tanh, p[0]);
            let y = dot_general(f, t, p[1], &[1], &[0], &[], &[]);
            let shape = f.shape(y).clone();
            let bb = f.broadcast(p[2], shape, vec![1]);
            let z = f.add(y, bb);
            vec![f.unary(UnaryOp::Tanh, z)]
        },
    );
    let p = check(&f, false);
    assert_eq!(p.kernels.len(), 3, "{}", p.text());
    let tanh = &p.kernels[0];
    assert!(!tanh.is_reduction(), "{tanh}");
    assert!(tanh
        .insts
        .iter()
        .any(|i| i.kind == InstKind::Unary(UnaryOp::Tanh, 0)));
    assert!(is_plain_product(&p.kernels[1]), "{}", p.kernels[1]);
    let after = &p.kernels[2];
    assert!(!after.is_reduction());
    let kinds: Vec<&InstKind> = after.insts.iter().map(|i| &i.kind).collect();
    assert!(kinds
        .iter()
        .any(|k| matches!(k, InstKind::Binary(BinaryOp::Add, ..))));
    assert!(kinds
        .iter()
        .any(|k| matches!(k, InstKind::Unary(UnaryOp::Tanh, _))));
    assert_eq!(p.launches.len(), 3);
}

/// A transpose makes no kernel: `sum(transpose(x) * y)` and
/// `max(transpose(x))` are one kernel each, reading `x` through permuted
/// strides.
#[test]
fn transpose_creates_no_kernel() {
    let f = build(
        "t_sum",
        &[
            ("x", DType::F64, sh(&[n(), k(3)])),
            ("y", DType::F64, sh(&[k(3), n()])),
        ],
        |f, p| {
            let t = push(f, Op::Transpose { perm: vec![1, 0] }, &[p[0]]);
            let z = f.mul(t, p[1]);
            let s = f.reduce_sum(z, vec![0, 1]);
            let mx = push(f, Op::ReduceMax { axes: vec![1] }, &[t]);
            vec![s, mx]
        },
    );
    let p = check(&f, true);
    assert_eq!(p.kernels.len(), 2, "{}", p.text());
    assert!(no_intermediates(&p), "{}", p.text());
}

/// stop_gradient is the identity; dim_size is the bound size (`mean`);
/// iota is the coordinate (one-hot rows, a masked argmax).
#[test]
fn stop_gradient_dim_size_and_iota() {
    let f = build("mean", &[("x", DType::F64, sh(&[n(), m()]))], |f, p| {
        let sg = push(f, Op::StopGradient, &[p[0]]);
        let s = f.reduce_sum(sg, vec![0]);
        let len = push(
            f,
            Op::DimSize {
                dim: n(),
                dtype: DType::F64,
            },
            &[],
        );
        let lb = f.broadcast(len, sh(&[m()]), vec![]);
        let mean = f.div(s, lb);
        let whole = push(
            f,
            Op::DimSize {
                dim: k(7),
                dtype: DType::F64,
            },
            &[],
        );
        let mn = push(
            f,
            Op::DimSize {
                dim: m(),
                dtype: DType::F32,
            },
            &[],
        );
        vec![mean, whole, mn]
    });
    let p = check(&f, false);
    assert!(p.kernels.iter().any(|k| k
        .insts
        .iter()
        .any(|i| i.kind == InstKind::Size(Size::of(&n())))));

    for dtype in [DType::F64, DType::F32] {
        // onehot[i, j] = (j == labels[i]), labels in [0, 3]; the largest
        // column holding a row's max (-1 for a NaN row: no equal element).
        let f = build(
            &format!("iota_{dtype}"),
            &[
                ("labels", dtype, sh(&[n()])),
                ("x", dtype, sh(&[n(), k(4)])),
            ],
            |f, p| {
                let s = sh(&[n(), k(4)]);
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
                let mx = push(f, Op::ReduceMax { axes: vec![1] }, &[p[1]]);
                let mb = f.broadcast(mx, s.clone(), vec![0]);
                let at = f.cmp(CmpOp::Eq, p[1], mb);
                let none = f.full(-1.0, dtype, &s);
                let idx = f.select(at, cols, none);
                let arg = push(f, Op::ReduceMax { axes: vec![1] }, &[idx]);
                let r = f.add(rows, onehot);
                // A rank-3 iota through a unit reshape.
                let r3 = push(
                    f,
                    Op::Reshape {
                        shape: sh(&[n(), k(1), k(4)]),
                    },
                    &[r],
                );
                let io = push(
                    f,
                    Op::Iota {
                        shape: sh(&[n(), k(1), k(4)]),
                        axis: 1,
                        dtype,
                    },
                    &[],
                );
                let r3 = f.add(r3, io);
                vec![onehot, arg, r3]
            },
        );
        let p = check(&f, true);
        assert!(p
            .kernels
            .iter()
            .any(|k| k.insts.iter().any(|i| i.kind == InstKind::Index(1))));
    }
}

/// Sum kernels keep their text (and so their symbol) from before the
/// reduce field; a max kernel of the same loop says so in its text.
#[test]
fn sum_kernels_keep_their_text() {
    let f = build("s", &[("x", DType::F32, sh(&[n()]))], |f, p| {
        vec![f.reduce_sum(p[0], vec![0])]
    });
    let p = fuse(&f).unwrap();
    let text = p.kernels[0].body_text();
    assert_eq!(
        text,
        "(f32, out f32) sizes(n) domain[n] reduce=1\n  v0: f32 = load a0 strides[1]\n  store a1 v0\n"
    );
    assert_eq!(p.kernels[0].name, p.kernels[0].symbol());
    let g = build("m", &[("x", DType::F32, sh(&[n()]))], |f, p| {
        vec![push(f, Op::ReduceMax { axes: vec![0] }, &[p[0]])]
    });
    let q = fuse(&g).unwrap();
    assert!(q.kernels[0].body_text().contains("reduce=1 max\n"));
    assert_ne!(q.kernels[0].name, p.kernels[0].name);
}

/// `check_call` rejects a kernel whose `Size` names a symbol not in
/// `sizes` or whose `Index` is past the domain, instead of panicking.
#[test]
fn malformed_size_and_index_are_errors() {
    let f = build("i", &[("x", DType::F32, sh(&[n()]))], |f, p| {
        let io = push(
            f,
            Op::Iota {
                shape: sh(&[n()]),
                axis: 0,
                dtype: DType::F32,
            },
            &[],
        );
        let len = push(
            f,
            Op::DimSize {
                dim: n(),
                dtype: DType::F32,
            },
            &[],
        );
        let lb = f.broadcast(len, sh(&[n()]), vec![]);
        let a = f.add(io, lb);
        vec![f.add(a, p[0])]
    });
    let p = fuse(&f).unwrap();
    let k0 = p.kernels[0].clone();
    let mut k = k0.clone();
    let bufs = || {
        let mut b = vec![(DType::F32, 3); k0.args.len()];
        b.truncate(k0.args.len());
        b.into_iter()
    };
    assert!(k.check_call(bufs(), &[3]).is_ok());
    let idx = k
        .insts
        .iter()
        .position(|i| matches!(i.kind, InstKind::Index(_)))
        .unwrap();
    k.insts[idx].kind = InstKind::Index(1);
    assert!(k.check_call(bufs(), &[3]).is_err());
    let mut k = p.kernels[0].clone();
    let sz = k
        .insts
        .iter()
        .position(|i| matches!(i.kind, InstKind::Size(_)))
        .unwrap();
    k.insts[sz].kind = InstKind::Size(Size::of(&m()));
    assert!(k.check_call(bufs(), &[3]).is_err());
}

/// Matrix products `a · b` (operands stored transposed or not, with a batch
/// axis or not) at every size in {0, 1, 2, 3, 5, 7} of m, k and n, by the
/// reference interpreter and by the fused program, against a plain triple
/// loop summed in f64: within (k + 2)·eps·Σ|a·b| (the loop's own
/// rounding error bound plus the reference's, which rounds once).
#[test]
fn matmul_matches_a_triple_loop() {
    const SIZES: [usize; 6] = [0, 1, 2, 3, 5, 7];
    for batched in [false, true] {
        for (a_t, b_t) in [(false, false), (true, false), (false, true), (true, true)] {
            let bdim: Vec<Dim> = if batched { vec![k(2)] } else { vec![] };
            let mut a_shape = bdim.clone();
            a_shape.extend(if a_t {
                [Dim::sym("k"), m()]
            } else {
                [m(), Dim::sym("k")]
            });
            let mut b_shape = bdim.clone();
            b_shape.extend(if b_t {
                [n(), Dim::sym("k")]
            } else {
                [Dim::sym("k"), n()]
            });
            let off = bdim.len();
            let lc = off + if a_t { 0 } else { 1 };
            let rc = off + if b_t { 1 } else { 0 };
            let batch: Vec<usize> = (0..off).collect();
            let f = build(
                &format!("matmul_{a_t}_{b_t}_{batched}"),
                &[
                    ("a", DType::F64, sh(&a_shape)),
                    ("b", DType::F64, sh(&b_shape)),
                ],
                |f, p| vec![dot_general(f, p[0], p[1], &[lc], &[rc], &batch, &batch)],
            );
            let p = fuse(&f).unwrap();
            let mut rng = rng(11);
            for (mm, kk, nn) in SIZES.iter().flat_map(|&a| {
                SIZES
                    .iter()
                    .flat_map(move |&b| SIZES.iter().map(move |&c| (a, b, c)))
            }) {
                let env: BTreeMap<String, usize> = [("m", mm), ("k", kk), ("n", nn)]
                    .map(|(s, v)| (s.to_string(), v))
                    .into();
                let args = args_for(&f, &env, &mut rng, false);
                let bs = if batched { 2 } else { 1 };
                let (a, b) = (&args[0].data, &args[1].data);
                let at = |q: usize, i: usize, l: usize| {
                    a[q * mm * kk + if a_t { l * mm + i } else { i * kk + l }]
                };
                let bt = |q: usize, l: usize, j: usize| {
                    b[q * kk * nn + if b_t { j * kk + l } else { l * nn + j }]
                };
                let want = interp::eval(&f, &args).unwrap().remove(0);
                let fused = run_program(&p, &args).remove(0);
                let mut shape = if batched { vec![2] } else { vec![] };
                shape.extend([mm, nn]);
                let ctx = format!("{} at m={mm} k={kk} n={nn}", f.name);
                assert_eq!(want.shape, shape, "{ctx}");
                assert_eq!(fused.shape, shape, "{ctx}");
                for q in 0..bs {
                    for i in 0..mm {
                        for j in 0..nn {
                            let terms = (0..kk).map(|l| at(q, i, l) * bt(q, l, j));
                            let looped: f64 = terms.clone().sum();
                            let mag: f64 = terms.map(f64::abs).sum();
                            let bound = (kk as f64 + 2.0) * f64::EPSILON * mag;
                            let e = (q * mm + i) * nn + j;
                            for (who, got) in
                                [("reference", want.data[e]), ("fused", fused.data[e])]
                            {
                                assert!(
                                    (got - looped).abs() <= bound,
                                    "{ctx}: {who} [{q},{i},{j}] = {got}, loop {looped}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
