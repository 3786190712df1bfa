//! What fusion and `simplify` avoid recomputing or copying: a transposed
//! product is written in the transposed order (no copy kernel), and a
//! transcendental expression broadcast along new axes is computed once per
//! element of its own shape, not once per element of the broadcast. Each
//! program is also run with the kernel interpreter against the reference
//! interpreter on the unsimplified function.

mod common;

use common::{eval, random_tensor, rng, run_program};
use oxla_core::kernel::fusion::fuse;
use oxla_core::kernel::InstKind;
use oxla_core::ops::elementwise::UnaryOp;
use oxla_core::ops::DotDims;
use oxla_core::text::print;
use oxla_core::transforms::simplify;
use oxla_core::*;

fn sh(dims: &[Dim]) -> Shape {
    Shape(dims.to_vec())
}

fn check_values(f: &Function, shapes: &[Vec<usize>]) {
    let mut r = rng(7);
    let args: Vec<Tensor> = shapes
        .iter()
        .map(|s| random_tensor(&mut r, DType::F64, s.clone(), (-1.0, 1.0)))
        .collect();
    let want = eval(f, &args);
    let got = run_program(&fuse(f).expect("fuses"), &args);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.shape, w.shape);
        for (a, b) in g.data.iter().zip(&w.data) {
            assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "{a} vs {b}");
        }
    }
}

/// `(aᵀ·b)ᵀ`, the shape reverse mode gives a weight's gradient, becomes
/// `bᵀ·a`: one product kernel and no transpose.
fn transposed_product(n: Dim, p: Dim, q: Dim) -> Function {
    let mut f = Function::new("g");
    let a = f.add_param("a", Type::new(DType::F64, sh(&[n.clone(), p.clone()])));
    let b = f.add_param("b", Type::new(DType::F64, sh(&[n.clone(), q.clone()])));
    let d = DotDims {
        lhs_contract: vec![0],
        rhs_contract: vec![0],
        ..Default::default()
    };
    let prod = f.push(Op::DotGeneral(d), &[a, b]).unwrap(); // [p, q]
    let t = f.push(Op::Transpose { perm: vec![1, 0] }, &[prod]).unwrap(); // [q, p]
    f.outs = vec![t];
    f
}

#[test]
fn a_transposed_product_is_a_product_of_swapped_operands() {
    let f = transposed_product(Dim::sym("n"), Dim::sym("p"), Dim::sym("q"));
    let s = simplify(&f);
    assert!(
        !s.eqns.iter().any(|e| matches!(e.op, Op::Transpose { .. })),
        "{}",
        print(&s)
    );
    let program = fuse(&f).unwrap();
    assert_eq!(program.kernels.len(), 1, "{:?}", program.kernels);
    for [n, p, q] in [[3, 2, 5], [0, 1, 4], [7, 3, 1]] {
        let c = |x: usize| Dim::Const(x as u64);
        let f = transposed_product(c(n), c(p), c(q));
        check_values(&f, &[vec![n, p], vec![n, q]]);
    }
}

/// A product used twice keeps its transpose: swapping would compute it twice.
#[test]
fn a_product_with_other_uses_keeps_its_transpose() {
    let (n, p) = (Dim::Const(4), Dim::Const(3));
    let mut f = Function::new("g");
    let a = f.add_param("a", Type::new(DType::F64, sh(&[n.clone(), p.clone()])));
    let d = DotDims {
        lhs_contract: vec![0],
        rhs_contract: vec![0],
        ..Default::default()
    };
    let prod = f.push(Op::DotGeneral(d), &[a, a]).unwrap();
    let t = f.push(Op::Transpose { perm: vec![1, 0] }, &[prod]).unwrap();
    let sum = f.add(prod, t);
    f.outs = vec![sum];
    let s = simplify(&f);
    let products = s
        .eqns
        .iter()
        .filter(|e| matches!(e.op, Op::DotGeneral(_)))
        .count();
    assert_eq!(products, 1, "{}", print(&s));
    check_values(&f, &[vec![4, 3]]);
}

/// `exp(sums)` broadcast back over the summed axis and multiplied by `x`.
/// Column sums (`over_rows`) broadcast over the rows would recompute the
/// exponential once per row: it becomes a kernel over the columns and the
/// map kernel evaluates none. Row sums broadcast over the columns stay
/// inline: the CPU evaluates a value invariant along the innermost axis once
/// per row anyway, so a buffer would only add a pass.
fn scaled_by_exp_of_sums(b: Dim, n: Dim, over_rows: bool) -> Function {
    let mut f = Function::new("g");
    let x = f.add_param("x", Type::new(DType::F64, sh(&[b.clone(), n.clone()])));
    let (axis, kept) = if over_rows { (0, 1) } else { (1, 0) };
    let sums = f.reduce_sum(x, vec![axis]);
    let e = f.unary(UnaryOp::Exp, sums);
    let wide = f.broadcast(e, sh(&[b.clone(), n.clone()]), vec![kept]);
    let y = f.mul(wide, x);
    f.outs = vec![y];
    f
}

fn exps_in(k: &oxla_core::kernel::Kernel) -> usize {
    k.insts
        .iter()
        .filter(|i| matches!(i.kind, InstKind::Unary(UnaryOp::Exp, _)))
        .count()
}

#[test]
fn a_transcendental_broadcast_over_outer_axes_is_computed_once() {
    for over_rows in [true, false] {
        let program = fuse(&scaled_by_exp_of_sums(
            Dim::sym("b"),
            Dim::sym("n"),
            over_rows,
        ))
        .unwrap();
        let map = program
            .kernels
            .iter()
            .find(|k| k.domain.len() == 2 && k.reduce_dims == 0)
            .expect("a map kernel over the matrix");
        let want = if over_rows { 0 } else { 1 };
        assert_eq!(
            exps_in(map),
            want,
            "over_rows {over_rows}: {:?}",
            program.kernels
        );
        for [b, n] in [[3, 5], [0, 2], [4, 0], [1, 1]] {
            let f = scaled_by_exp_of_sums(Dim::Const(b as u64), Dim::Const(n as u64), over_rows);
            check_values(&f, &[vec![b, n]]);
        }
    }
}
