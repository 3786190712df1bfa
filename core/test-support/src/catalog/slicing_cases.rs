//! Catalog cases of the slicing ops: slices with steps and bounds from the
//! end, on symbolic and constant axes (some empty), pads, concatenations
//! and stacks, alone and inside composites. Valid for `n >= 3`; the fusion
//! test also runs them at smaller `n`, where the ones that need a longer
//! axis must fail to bind.

use super::{build, case, shape, sum_all, Case, ANY};
use oxla_core::ops::elementwise::BinaryOp;
use oxla_core::ops::slicing::{concatenate, pad, slice_bounds};
use oxla_core::shape::derived::Bound::{self, End, Start};
use oxla_core::*;

/// A slice's start, end and step along one axis.
type SliceBounds = (Bound, Bound, u64);

fn sl(f: &mut Function, x: Var, b: &[(Bound, Bound, u64)]) -> Var {
    slice_bounds(f, x, b).unwrap()
}

const ALL: (Bound, Bound, u64) = (Start(0), End(0), 1);

pub fn slicing_cases(n: &Dim) -> Vec<Case> {
    let mut cases = Vec::new();
    let sh = |d: &[Dim]| Shape(d.to_vec());
    let (d2, d3) = (Dim::Const(2), Dim::Const(3));
    let r3 = sh(&[d2.clone(), n.clone(), d3.clone()]);
    let slices: Vec<(&str, Shape, Vec<SliceBounds>)> = vec![
        ("slice_from_1", shape(1, n), vec![(Start(1), End(0), 1)]),
        ("slice_to_neg_1", shape(1, n), vec![(Start(0), End(1), 1)]),
        ("slice_step_2", shape(1, n), vec![(Start(0), End(0), 2)]),
        (
            "slice_step_3_from_1",
            shape(1, n),
            vec![(Start(1), End(0), 3)],
        ),
        (
            "slice_last_3_step_2",
            shape(1, n),
            vec![(End(3), End(0), 2)],
        ),
        ("slice_first_2", shape(1, n), vec![(Start(0), Start(2), 1)]),
        (
            "slice_2d_rows_step_cols_neg",
            shape(2, n),
            vec![(Start(1), End(0), 2), (Start(0), End(1), 1)],
        ),
        (
            "slice_2d_cols_step_2",
            shape(2, n),
            vec![ALL, (Start(0), End(0), 2)],
        ),
        (
            "slice_2d_empty_cols",
            shape(2, n),
            vec![ALL, (Start(3), End(0), 1)],
        ),
        (
            "slice_3d",
            r3.clone(),
            vec![
                (Start(1), End(0), 1),
                (Start(1), End(1), 1),
                (End(2), End(0), 1),
            ],
        ),
    ];
    for (name, s, b) in slices {
        let f = build(name, &[("x", s)], |f, p| vec![sl(f, p[0], &b)]);
        cases.push(case("slicing", f, vec![ANY], vec![]));
    }
    // Finite differences: two slices of one axis have one derived length.
    let f = build("forward_difference", &[("x", shape(1, n))], |f, p| {
        let a = sl(f, p[0], &[(Start(1), End(0), 1)]);
        let b = sl(f, p[0], &[(Start(0), End(1), 1)]);
        vec![f.push(Op::Binary(BinaryOp::Sub), &[a, b]).unwrap()]
    });
    cases.push(case("slicing", f, vec![ANY], vec![]));
    // A slice of a computed value (its operand gets a buffer).
    let f = build("slice_of_product", &[("x", shape(2, n))], |f, p| {
        let two = f.full_like(2.0, p[0]);
        let y = f.push(Op::Binary(BinaryOp::Mul), &[p[0], two]).unwrap();
        let y = f
            .push(Op::Unary(oxla_core::ops::elementwise::UnaryOp::Sin), &[y])
            .unwrap();
        vec![sl(f, y, &[(End(2), End(0), 1), (Start(1), End(0), 1)])]
    });
    cases.push(case("slicing", f, vec![ANY], vec![]));
    let concats: Vec<(&str, Vec<Shape>, usize)> = vec![
        ("concat_vectors", vec![shape(1, n), shape(1, n)], 0),
        // The third part's offset `n + n` is a derived size only a kernel names.
        (
            "concat_three_vectors",
            vec![shape(1, n), shape(1, n), shape(1, n)],
            0,
        ),
        (
            "concat_rows_const",
            vec![shape(2, n), sh(&[d2.clone(), d3.clone()])],
            0,
        ),
        (
            "concat_three_cols",
            vec![shape(2, n), sh(&[n.clone(), d2.clone()]), shape(2, n)],
            1,
        ),
        ("concat_3d_mid", vec![r3.clone(), r3.clone()], 1),
    ];
    for (name, shapes, axis) in concats {
        let params: Vec<(&str, Shape)> = ["a", "b", "c"].into_iter().zip(shapes).collect();
        let ranges = vec![ANY; params.len()];
        let f = build(name, &params, |f, p| vec![concatenate(f, p, axis)]);
        cases.push(case("slicing", f, ranges, vec![]));
    }
    // stack = a new unit axis on each operand, then concatenate.
    let f = build(
        "stack_axis_1",
        &[("a", shape(1, n)), ("b", shape(1, n))],
        |f, p| {
            let r: Vec<Var> = p
                .iter()
                .map(|x| {
                    let s = sh(&[n.clone(), Dim::Const(1)]);
                    f.push(Op::Reshape { shape: s }, &[*x]).unwrap()
                })
                .collect();
            vec![concatenate(f, &r, 1)]
        },
    );
    cases.push(case("slicing", f, vec![ANY, ANY], vec![]));
    // Pads on their own (they are also every slice's transpose).
    let f = build(
        "pad_rows_step_2",
        &[("x", sh(&[d2.clone(), n.clone()]))],
        |f, p| {
            let out = sh(&[Dim::Const(5), n.clone()]);
            vec![pad(
                f,
                p[0],
                out,
                vec![Dim::Const(1), Dim::Const(0)],
                vec![2, 1],
            )]
        },
    );
    cases.push(case("slicing", f, vec![ANY], vec![]));
    let f = build(
        "pad_const_step_3",
        &[("x", sh(std::slice::from_ref(&d3)))],
        |f, p| {
            vec![pad(
                f,
                p[0],
                sh(&[Dim::Const(8)]),
                vec![Dim::Const(1)],
                vec![3],
            )]
        },
    );
    cases.push(case("slicing", f, vec![ANY], vec![]));
    // A concatenation feeding a reduction, then sliced again.
    let f = build(
        "concat_then_slice_sum",
        &[("a", shape(1, n)), ("b", shape(1, n))],
        |f, p| {
            let sq = f.push(Op::Binary(BinaryOp::Mul), &[p[0], p[0]]).unwrap();
            let c = concatenate(f, &[sq, p[1]], 0);
            let s = sl(f, c, &[(Start(1), End(1), 2)]);
            vec![sum_all(f, s)]
        },
    );
    cases.push(case("slicing", f, vec![ANY, ANY], vec![]));
    cases
}
