//! Every elementwise op, map kernels over `n` elements, f32 and f64,
//! JIT (host and baseline ISA) against the interpreter.

use crate::common;
use common::*;
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use oxla_core::{Buffer, DType};

const FLOATS: [DType; 2] = [DType::F32, DType::F64];

/// `out[i] = op(x[i])` for one unary op.
fn unary_kernel(op: UnaryOp, ty: DType) -> oxla_core::Kernel {
    let mut kb = KernelBuilder::new(
        &format!("unary_{}_{ty}", op.name()),
        &["n"],
        vec![sym("n")],
        0,
    );
    let x = kb.arg(ty, false);
    let out = kb.arg(ty, true);
    let v = kb.load(x, vec![c(1)]);
    let r = kb.unary(op, v);
    kb.store(out, r);
    kb.build()
}

#[test]
fn unary_ops_match_interpreter() {
    let mut ops: Vec<UnaryOp> = UnaryOp::SIMPLE.to_vec();
    ops.extend([
        UnaryOp::Powi(0),
        UnaryOp::Powi(1),
        UnaryOp::Powi(2),
        UnaryOp::Powi(5),
        UnaryOp::Powi(-3),
    ]);
    for ty in FLOATS {
        for op in &ops {
            let (lo, hi) = match op {
                UnaryOp::Log | UnaryOp::Sqrt => (1e-3, 50.0),
                UnaryOp::Exp => (-30.0, 30.0),
                UnaryOp::Sin | UnaryOp::Cos => (-100.0, 100.0),
                UnaryOp::Powi(_) => (0.5, 2.0),
                _ => (-5.0, 5.0),
            };
            let k = unary_kernel(*op, ty);
            for n in [0, 1, 5, 1001] {
                check(&k, &[n], lo, hi, 4.0 * tol(ty));
            }
        }
    }
}

#[test]
fn unary_special_values() {
    let specials = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -1.0,
        1e-40,
        1e-310,
        100.0,
        -100.0,
        800.0,
    ];
    for ty in FLOATS {
        for op in UnaryOp::SIMPLE {
            let k = unary_kernel(op, ty);
            let inputs = [Buffer::from_f64(ty, &specials)];
            check_with(&k, &[specials.len() as i64], &inputs, 4.0 * tol(ty));
        }
    }
}

#[test]
fn binary_ops_match_interpreter() {
    for ty in FLOATS {
        for op in BinaryOp::ALL {
            let mut kb = KernelBuilder::new(
                &format!("binary_{}_{ty}", op.name()),
                &["n"],
                vec![sym("n")],
                0,
            );
            let (x, y) = (kb.arg(ty, false), kb.arg(ty, false));
            let out = kb.arg(ty, true);
            let (a, b) = (kb.load(x, vec![c(1)]), kb.load(y, vec![c(1)]));
            let r = kb.binary(op, a, b);
            kb.store(out, r);
            let k = kb.build();
            for n in LENGTHS {
                check(&k, &[n], 0.25, 4.0, tol(ty));
            }
            // NaN and infinities: max/min give the second operand on NaN.
            let xs = [
                f64::NAN,
                1.0,
                f64::NAN,
                f64::INFINITY,
                -0.0,
                2.0,
                3.0,
                f64::NEG_INFINITY,
            ];
            let ys = [1.0, f64::NAN, f64::NAN, 5.0, 0.0, f64::INFINITY, -3.0, 7.0];
            check_with(
                &k,
                &[8],
                &[Buffer::from_f64(ty, &xs), Buffer::from_f64(ty, &ys)],
                tol(ty),
            );
        }
    }
}

#[test]
fn compare_and_select_match_interpreter() {
    for ty in FLOATS {
        for op in CmpOp::ALL {
            // out = x OP y ? x : 2 - y, plus the bool itself and as a float.
            let mut kb = KernelBuilder::new(
                &format!("cmp_{}_{ty}", op.name()),
                &["n"],
                vec![sym("n")],
                0,
            );
            let (x, y) = (kb.arg(ty, false), kb.arg(ty, false));
            let (out, flag, as_float) = (
                kb.arg(ty, true),
                kb.arg(DType::Bool, true),
                kb.arg(ty, true),
            );
            let (a, b) = (kb.load(x, vec![c(1)]), kb.load(y, vec![c(1)]));
            let p = kb.cmp(op, a, b);
            let two = kb.konst(ty, 2.0);
            let other = kb.binary(BinaryOp::Sub, two, b);
            let r = kb.select(p, a, other);
            kb.store(out, r);
            kb.store(flag, p);
            kb.store(as_float, p);
            let k = kb.build();
            for n in [0, 3, 1001] {
                // Few distinct values so that equality happens.
                let inputs: Vec<Buffer> = random_inputs(&k, &[n], 7, 0.0, 3.0)
                    .iter()
                    .map(|b| {
                        Buffer::from_f64(
                            ty,
                            &b.to_f64().iter().map(|v| v.floor()).collect::<Vec<_>>(),
                        )
                    })
                    .collect();
                check_with(&k, &[n], &inputs, tol(ty));
            }
            let xs = [f64::NAN, 1.0, f64::NAN, 2.0, -0.0];
            let ys = [1.0, f64::NAN, f64::NAN, 2.0, 0.0];
            check_with(
                &k,
                &[5],
                &[Buffer::from_f64(ty, &xs), Buffer::from_f64(ty, &ys)],
                tol(ty),
            );
        }
    }
}

#[test]
fn vectorized_select_of_bool_input() {
    // A bool buffer loaded contiguously forces the scalar loop; a broadcast
    // one is hoisted into the vector loop as a lane mask.
    for stride in [c(1), zero()] {
        let mut kb = KernelBuilder::new("select_bool", &["n"], vec![sym("n")], 0);
        let (m, x) = (kb.arg(DType::Bool, false), kb.arg(DType::F32, false));
        let out = kb.arg(DType::F32, true);
        let cond = kb.load(m, vec![stride.clone()]);
        let a = kb.load(x, vec![c(1)]);
        let neg = kb.unary(UnaryOp::Neg, a);
        let r = kb.select(cond, a, neg);
        kb.store(out, r);
        let k = kb.build();
        for n in LENGTHS {
            check(&k, &[n], -1.0, 1.0, 0.0);
        }
    }
}

#[test]
fn fused_chain_of_mul_add_and_sub() {
    // out = (x*y + z) - x*z and z - x*y: the fma patterns.
    for ty in FLOATS {
        let mut kb = KernelBuilder::new(&format!("fma_chain_{ty}"), &["n"], vec![sym("n")], 0);
        let (x, y, z) = (kb.arg(ty, false), kb.arg(ty, false), kb.arg(ty, false));
        let (o1, o2) = (kb.arg(ty, true), kb.arg(ty, true));
        let (a, b, cc) = (
            kb.load(x, vec![c(1)]),
            kb.load(y, vec![c(1)]),
            kb.load(z, vec![c(1)]),
        );
        let xy = kb.binary(BinaryOp::Mul, a, b);
        let s = kb.binary(BinaryOp::Add, xy, cc);
        let xz = kb.binary(BinaryOp::Mul, a, cc);
        let r = kb.binary(BinaryOp::Sub, s, xz);
        let r2 = kb.binary(BinaryOp::Sub, cc, xy);
        kb.store(o1, r);
        kb.store(o2, r2);
        let k = kb.build();
        for n in LENGTHS {
            check(&k, &[n], -2.0, 2.0, 8.0 * tol(ty));
        }
    }
}
