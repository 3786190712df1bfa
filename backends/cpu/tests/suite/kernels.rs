//! Loop structure: ranks 0–3, reductions over one and two trailing axes,
//! broadcast and transposed loads, half-precision storage, several stores,
//! and the lengths that exercise the vector body and the scalar tail.

use crate::common;
use common::*;
use oxla_core::ops::elementwise::{BinaryOp, UnaryOp};
use oxla_core::DType;

const ALL_FLOATS: [DType; 4] = [DType::F32, DType::F64, DType::F16, DType::BF16];

#[test]
fn rank0_map_with_const() {
    for ty in ALL_FLOATS {
        let ct = ty.compute_type();
        let mut kb = KernelBuilder::new(&format!("rank0_{ty}"), &[], vec![], 0);
        let (x, out) = (kb.arg(ty, false), kb.arg(ty, true));
        let a = kb.load(x, vec![]);
        let k3 = kb.konst(ct, 3.0);
        let r = kb.binary(BinaryOp::Mul, a, k3);
        kb.store(out, r);
        check(&kb.build(), &[], -2.0, 2.0, tol(ty));
    }
}

/// out[i] = x[i] * y[i] + exp(x[i]) * 0.5, with a second output sqrt(|y|).
#[test]
fn rank1_map_every_length_and_dtype() {
    for ty in ALL_FLOATS {
        let ct = ty.compute_type();
        let mut kb = KernelBuilder::new(&format!("map1_{ty}"), &["n"], vec![sym("n")], 0);
        let (x, y) = (kb.arg(ty, false), kb.arg(ty, false));
        let (o1, o2) = (kb.arg(ty, true), kb.arg(DType::F32, true));
        let (a, b) = (kb.load(x, vec![c(1)]), kb.load(y, vec![c(1)]));
        let p = kb.binary(BinaryOp::Mul, a, b);
        let e = kb.unary(UnaryOp::Exp, a);
        let h = kb.konst(ct, 0.5);
        let eh = kb.binary(BinaryOp::Mul, e, h);
        let r = kb.binary(BinaryOp::Add, p, eh);
        kb.store(o1, r);
        let m = kb.binary(BinaryOp::Mul, b, b);
        let s = kb.unary(UnaryOp::Sqrt, m);
        kb.store(o2, s);
        let k = kb.build();
        for n in LENGTHS {
            check(&k, &[n], -3.0, 3.0, 4.0 * tol(ty));
        }
    }
}

/// out[i, j] = x[i, j] + row[j] * col[i] (broadcasts along both axes).
#[test]
fn rank2_map_with_broadcasts() {
    for ty in ALL_FLOATS {
        let mut kb = KernelBuilder::new(
            &format!("map2_{ty}"),
            &["m", "n"],
            vec![sym("m"), sym("n")],
            0,
        );
        let (x, row, col) = (kb.arg(ty, false), kb.arg(ty, false), kb.arg(ty, false));
        let out = kb.arg(ty, true);
        let a = kb.load(x, vec![sym("n"), c(1)]);
        let r = kb.load(row, vec![zero(), c(1)]);
        let cl = kb.load(col, vec![c(1), zero()]);
        let p = kb.binary(BinaryOp::Mul, r, cl);
        let s = kb.binary(BinaryOp::Add, a, p);
        kb.store(out, s);
        let k = kb.build();
        for (m, n) in [(0, 5), (3, 0), (1, 1), (3, 5), (2, 1001), (7, 4)] {
            check(&k, &[m, n], -2.0, 2.0, 4.0 * tol(ty));
        }
    }
}

/// out[i, j] = x[j, i] (transposed: innermost stride m, scalar loop), and
/// a constant-strided load (stride 2).
#[test]
fn transposed_and_strided_loads() {
    for ty in [DType::F32, DType::F64, DType::BF16] {
        let mut kb = KernelBuilder::new(
            &format!("transpose_{ty}"),
            &["m", "n"],
            vec![sym("n"), sym("m")],
            0,
        );
        let (x, y) = (kb.arg(ty, false), kb.arg(ty, false));
        let out = kb.arg(ty, true);
        let a = kb.load(x, vec![c(1), sym("n")]);
        let b = kb.load(y, vec![c(0), c(2)]);
        let s = kb.binary(BinaryOp::Sub, a, b);
        kb.store(out, s);
        let k = kb.build();
        for (m, n) in [(0, 3), (1, 1), (3, 5), (4, 4), (5, 1000)] {
            check(&k, &[m, n], -2.0, 2.0, tol(ty));
        }
    }
}

/// sum_j x[j] * y[j] over every length: vector accumulators and tail.
#[test]
fn full_reduction_every_length() {
    for ty in ALL_FLOATS {
        let mut kb = KernelBuilder::new(&format!("dot_{ty}"), &["n"], vec![sym("n")], 1);
        let (x, y) = (kb.arg(ty, false), kb.arg(ty, false));
        let out = kb.arg(ty, true);
        let (a, b) = (kb.load(x, vec![c(1)]), kb.load(y, vec![c(1)]));
        let p = kb.binary(BinaryOp::Mul, a, b);
        kb.store(out, p);
        let k = kb.build();
        for n in LENGTHS {
            // Reordered f32 sums of ~n terms of size ≤ 1: error ~ n·eps.
            let t = tol(ty) + if ty == DType::F64 { 1e-15 } else { 1e-7 } * n as f64;
            check(&k, &[n], -1.0, 1.0, t);
        }
    }
}

/// Row sums and row maxima-like reduction with two stores:
/// s[i] = sum_j x[i, j] + b[i], t[i] = sum_j tanh(x[i, j]) * w[j].
#[test]
fn reduction_over_last_axis_with_two_stores() {
    for ty in [DType::F32, DType::F64, DType::F16] {
        let mut kb = KernelBuilder::new(
            &format!("rowsum_{ty}"),
            &["m", "n"],
            vec![sym("m"), sym("n")],
            1,
        );
        let (x, b, w) = (kb.arg(ty, false), kb.arg(ty, false), kb.arg(ty, false));
        let (s_out, t_out) = (kb.arg(ty, true), kb.arg(DType::F64, true));
        let a = kb.load(x, vec![sym("n"), c(1)]);
        let bb = kb.load(b, vec![c(1), zero()]);
        let ww = kb.load(w, vec![zero(), c(1)]);
        let s = kb.binary(BinaryOp::Add, a, bb);
        let th = kb.unary(UnaryOp::Tanh, a);
        let t = kb.binary(BinaryOp::Mul, th, ww);
        kb.store(s_out, s);
        kb.store(t_out, t);
        let k = kb.build();
        for (m, n) in [(0, 4), (3, 0), (1, 1), (3, 5), (2, 1001), (4, 16)] {
            let t = tol(ty) + if ty == DType::F64 { 1e-15 } else { 2e-7 } * n as f64;
            check(&k, &[m, n], -2.0, 2.0, t);
        }
    }
}

/// out[i] = sum_{j,k} x[i, k, j] * y[j]: two reduced axes, the outer of them
/// strided, and a rank-3 domain.
#[test]
fn reduction_over_two_trailing_axes() {
    for ty in [DType::F32, DType::F64] {
        let dom = vec![sym("a"), sym("b"), sym("c")];
        let mut kb = KernelBuilder::new(&format!("sum2_{ty}"), &["a", "b", "c"], dom, 2);
        let (x, y) = (kb.arg(ty, false), kb.arg(ty, false));
        let out = kb.arg(ty, true);
        let bc = oxla_core::Size {
            factor: 1,
            syms: vec!["b".into(), "c".into()],
        };
        let xv = kb.load(x, vec![bc, c(1), sym("b")]);
        let yv = kb.load(y, vec![zero(), zero(), c(1)]);
        let p = kb.binary(BinaryOp::Mul, xv, yv);
        kb.store(out, p);
        let k = kb.build();
        for sizes in [
            [0, 2, 3],
            [2, 0, 3],
            [1, 1, 1],
            [3, 4, 5],
            [2, 3, 1001],
            [2, 7, 8],
        ] {
            let n = (sizes[1] * sizes[2]) as f64;
            let t = tol(ty) + if ty == DType::F64 { 1e-15 } else { 1e-7 } * n;
            check(&k, &sizes, -1.0, 1.0, t);
        }
        // The whole domain reduced: a scalar output.
        let mut kb = KernelBuilder::new(
            &format!("sumall_{ty}"),
            &["m", "n"],
            vec![sym("m"), sym("n")],
            2,
        );
        let x = kb.arg(ty, false);
        let out = kb.arg(ty, true);
        let xv = kb.load(x, vec![sym("n"), c(1)]);
        let e = kb.unary(UnaryOp::Exp, xv);
        kb.store(out, e);
        let k = kb.build();
        for (m, n) in [(0, 0), (1, 0), (1, 1), (3, 5), (4, 1000)] {
            let t = tol(ty) + if ty == DType::F64 { 1e-15 } else { 2e-7 } * (m * n) as f64;
            check(&k, &[m, n], -1.0, 1.0, t);
        }
    }
}

/// A strided reduction (scalar fallback): column sums of x.
#[test]
fn reduction_along_strided_axis() {
    for ty in [DType::F32, DType::BF16] {
        let mut kb = KernelBuilder::new(
            &format!("colsum_{ty}"),
            &["m", "n"],
            vec![sym("n"), sym("m")],
            1,
        );
        let x = kb.arg(ty, false);
        let out = kb.arg(ty, true);
        let xv = kb.load(x, vec![c(1), sym("n")]);
        let sq = kb.unary(UnaryOp::Powi(2), xv);
        kb.store(out, sq);
        let k = kb.build();
        for (m, n) in [(0, 3), (3, 0), (5, 3), (1001, 2)] {
            check(&k, &[m, n], -1.0, 1.0, tol(ty) + 1e-7 * m as f64);
        }
    }
}

#[test]
fn mixed_precision_inputs() {
    // f16 and f64 loads combined in f64 compute: scalar path with conversions.
    let mut kb = KernelBuilder::new("mixed", &["n"], vec![sym("n")], 0);
    let (h, d) = (kb.arg(DType::F16, false), kb.arg(DType::F64, false));
    let out = kb.arg(DType::BF16, true);
    let a = kb.load(h, vec![c(1)]);
    kb.k.insts[a].ty = DType::F64;
    let b = kb.load(d, vec![c(1)]);
    let s = kb.binary(BinaryOp::Div, a, b);
    kb.store(out, s);
    let k = kb.build();
    for n in LENGTHS {
        check(&k, &[n], 0.5, 2.0, tol(DType::BF16));
    }
}
