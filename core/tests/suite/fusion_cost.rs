//! What fusion and `simplify` avoid recomputing or copying: a transposed
//! product is written in the transposed order (no copy kernel), and a
//! transcendental expression broadcast along new axes is computed once per
//! element of its own shape, not once per element of the broadcast. Each
//! program is also run with the kernel interpreter against the reference
//! interpreter on the unsimplified function.

use crate::common;

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

/// An embedding lookup `tanh(table[ids] * 2)` and its VJP. The lookup is one
/// kernel over the result `[n, d]` whose indexed load fuses into the
/// elementwise chain: its domain, its instructions and its launch never
/// mention the table's row count `v`, so the work is the same for any
/// table. The gradient adds one zero fill over the table and one
/// scatter-add over `[n, d]` (no one-hot: no `[n, v, d]` domain anywhere).
fn lookup() -> Function {
    let mut f = Function::new("lookup");
    let (v, n, d) = (Dim::sym("v"), Dim::sym("n"), Dim::sym("d"));
    let table = f.add_param("table", Type::new(DType::F64, sh(&[v, d.clone()])));
    let ids = f.add_param("ids", Type::new(DType::I64, sh(&[n])));
    let g = oxla_core::ops::gather::gather(&mut f, table, ids, 0, 0);
    let two = f.literal(2.0, DType::F64);
    let two = f.broadcast(two, f.shape(g).clone(), vec![]);
    let y = f.mul(g, two);
    f.outs = vec![f.unary(UnaryOp::Tanh, y)];
    f
}

fn mentions(k: &oxla_core::kernel::Kernel, sym: &str) -> bool {
    k.domain.iter().any(|s| s.syms.iter().any(|x| x == sym))
}

#[test]
fn a_gather_costs_one_read_per_result_element() {
    let f = lookup();
    let program = fuse(&f).unwrap();
    assert_eq!(program.kernels.len(), 1, "{}", program.text());
    let k = &program.kernels[0];
    assert_eq!(k.domain.len(), 2, "{k}");
    assert!(!mentions(k, "v"), "{k}");
    let indexed = k
        .insts
        .iter()
        .filter(|i| matches!(i.kind, InstKind::LoadIndexed { .. }))
        .count();
    assert_eq!(indexed, 1, "{k}");
    assert!(k
        .insts
        .iter()
        .any(|i| matches!(i.kind, InstKind::Unary(UnaryOp::Tanh, _))));

    let g = oxla_core::transforms::vjp(&f);
    let program = fuse(&g).unwrap();
    let over_table: Vec<_> = program
        .kernels
        .iter()
        .filter(|k| mentions(k, "v"))
        .collect();
    assert_eq!(over_table.len(), 1, "{}", program.text());
    // The one kernel over the table is the zero fill.
    assert!(
        over_table[0].insts.len() == 1
            && matches!(over_table[0].insts[0].kind, InstKind::Const(c) if c == 0.0),
        "{}",
        over_table[0]
    );
    let scatters = program
        .kernels
        .iter()
        .filter(|k| k.is_indexed() && k.region().is_some());
    assert_eq!(scatters.count(), 1, "{}", program.text());
    assert!(
        program.kernels.iter().all(|k| k.domain.len() <= 2),
        "{}",
        program.text()
    );
}
