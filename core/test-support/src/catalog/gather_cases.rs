//! Catalog cases of `gather` and `scatter_add`. The catalog's parameters are
//! floats, so the indices are computed in each case: `floor` of a parameter
//! drawn from [-0.5, 3.5) converted to `i64` (indices -1..=3: some out of
//! range for the small axes, repeated ones, and a batched parameter makes
//! batched indices under `vmap`), or `floor(iota / 2)` (repeated, in
//! range). Index arrays of rank 0, 1 and 2; `n = 0` gives empty ones. The
//! derivative with respect to the index parameter is zero (a `floor` and a
//! conversion to an integer), and central differences agree away from the
//! jumps, where random points almost surely are.

use super::{build, case, shape, sum_all, Case, ANY, F};
use oxla_core::ops::elementwise::{Rounding, UnaryOp};
use oxla_core::ops::gather::{gather, scatter_add};
use oxla_core::*;

const INDEX: (f64, f64) = (-0.5, 3.5);

/// `floor(k)` as `i64` indices.
fn indices(f: &mut Function, k: Var) -> Var {
    let fl = f.unary(UnaryOp::Round(Rounding::Floor), k);
    f.push(Op::Convert { dtype: DType::I64 }, &[fl]).unwrap()
}

pub fn gather_cases(n: &Dim) -> Vec<Case> {
    let mut cases = Vec::new();
    let sh = |d: &[Dim]| Shape(d.to_vec());
    let (d2, d3, d4) = (Dim::Const(2), Dim::Const(3), Dim::Const(4));
    // Rows of a [n, 3] table by n indices, fused into a consumer.
    let f = build(
        "gather_rows",
        &[("x", shape(2, n)), ("k", shape(1, n))],
        |f, p| {
            let idx = indices(f, p[1]);
            let g = gather(f, p[0], idx, 0, 0);
            vec![f.mul(g, g)]
        },
    );
    cases.push(case("gather", f, vec![ANY, INDEX], vec![]));
    // Columns by a matrix of indices: [n, 3] at axis 1 by [2, 3] → [n, 2, 3].
    let f = build(
        "gather_cols_rank2_indices",
        &[("x", shape(2, n)), ("k", sh(&[d2.clone(), d3.clone()]))],
        |f, p| {
            let idx = indices(f, p[1]);
            let g = gather(f, p[0], idx, 1, 0);
            vec![f.unary(UnaryOp::Sin, g)]
        },
    );
    cases.push(case("gather", f, vec![ANY, INDEX], vec![]));
    // One row by a scalar index: rank-0 indices.
    let f = build(
        "gather_scalar_index",
        &[("x", sh(&[d4.clone(), n.clone()])), ("k", Shape::scalar())],
        |f, p| {
            let idx = indices(f, p[1]);
            vec![gather(f, p[0], idx, 0, 0)]
        },
    );
    cases.push(case("gather", f, vec![ANY, INDEX], vec![]));
    // Repeated in-range indices from iota, n of them into an axis of n: the
    // gradient scatters with repeats.
    let f = build("gather_repeated", &[("x", shape(1, n))], |f, p| {
        let at = f
            .push(
                Op::Iota {
                    shape: shape(1, n),
                    axis: 0,
                    dtype: F,
                },
                &[],
            )
            .unwrap();
        let half = f.literal(0.5, F);
        let half = f.broadcast(half, shape(1, n), vec![]);
        let k = f.mul(at, half);
        let idx = indices(f, k);
        let g = gather(f, p[0], idx, 0, 0);
        let y = f.mul(g, p[0]);
        vec![sum_all(f, y)]
    });
    cases.push(case("gather", f, vec![ANY], vec![]));
    // One index per row (`take_along_axis`): a shared leading axis.
    let f = build(
        "gather_per_row",
        &[("x", sh(&[n.clone(), d4.clone()])), ("k", shape(1, n))],
        |f, p| {
            let idx = indices(f, p[1]);
            let g = gather(f, p[0], idx, 1, 1);
            vec![f.unary(UnaryOp::Exp, g)]
        },
    );
    cases.push(case("gather", f, vec![ANY, INDEX], vec![]));
    // Scatter-add of [n, 3] updates into 4 rows, and per row of [2, n]
    // updates into [2, 4] (one shared axis, a matrix of indices).
    let f = build(
        "scatter_add_rows",
        &[("u", shape(2, n)), ("k", shape(1, n))],
        |f, p| {
            let idx = indices(f, p[1]);
            let s = scatter_add(f, p[0], idx, 0, 0, sh(&[d4.clone(), d3.clone()]));
            vec![f.mul(s, s)]
        },
    );
    cases.push(case("gather", f, vec![ANY, INDEX], vec![]));
    let f = build(
        "scatter_add_per_row",
        &[
            ("u", sh(&[d2.clone(), n.clone(), d3.clone()])),
            ("k", sh(&[d2.clone(), n.clone(), d3.clone()])),
        ],
        |f, p| {
            let idx = indices(f, p[1]);
            vec![scatter_add(
                f,
                p[0],
                idx,
                1,
                1,
                sh(&[d2.clone(), d4.clone()]),
            )]
        },
    );
    cases.push(case("gather", f, vec![ANY, INDEX], vec![]));
    cases
}
