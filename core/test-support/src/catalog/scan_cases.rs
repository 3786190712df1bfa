//! Catalog cases of products and scans: `reduce_prod` over one, several and
//! all axes, `linear_scan` in both directions along each axis, `cumsum` and
//! `cumprod`, and products at points with exactly one and exactly two zeros
//! along the reduced axis (a parameter whose range is the single value 0,
//! so its derivatives are taken at 0). A zero-length axis comes from the
//! size 0 every symbol takes.

use super::{build, case, reduction_shapes, shape, sum_all, Case, ANY};
use oxla_core::ops::elementwise::CmpOp;
use oxla_core::ops::scan::{cumprod, cumsum, linear_scan, reduce_prod};
use oxla_core::*;

/// Exactly 0.
const ZERO: (f64, f64) = (0.0, 0.0);
/// Contracting coefficients keep long scans well conditioned.
const COEF: (f64, f64) = (-1.0, 1.0);

/// `x` with the positions `at` along `axis` replaced by the scalars `zs`.
fn with_values(f: &mut Function, x: Var, axis: usize, at: &[(f64, Var)]) -> Var {
    let ty = f.ty(x).clone();
    let index = f
        .push(
            Op::Iota {
                shape: ty.shape.clone(),
                axis,
                dtype: ty.dtype,
            },
            &[],
        )
        .unwrap();
    let mut v = x;
    for (pos, z) in at {
        let p = f.full(*pos, ty.dtype, &ty.shape);
        let here = f.cmp(CmpOp::Eq, index, p);
        let z = f.broadcast(*z, ty.shape.clone(), vec![]);
        v = f.select(here, z, v);
    }
    v
}

pub fn scan_cases(n: &Dim) -> Vec<Case> {
    let mut cases = Vec::new();
    let r3 = Shape(vec![Dim::Const(2), n.clone(), Dim::Const(3)]);
    for (s, axes) in reduction_shapes(n) {
        let axes_name: String = axes.iter().map(|a| a.to_string()).collect();
        let f = build(
            &format!("reduce_prod_r{}_a{axes_name}", s.rank()),
            &[("x", s.clone())],
            |f, p| vec![reduce_prod(f, p[0], axes.clone())],
        );
        cases.push(case("scan", f, vec![ANY], vec![]));
    }
    // Exactly one zero (position 1) and exactly two (positions 1 and 2)
    // along the reduced axis, for n >= 3; fewer zeros at smaller n.
    let f = build(
        "reduce_prod_one_zero",
        &[("x", shape(1, n)), ("z", Shape::scalar())],
        |f, p| {
            let v = with_values(f, p[0], 0, &[(1.0, p[1])]);
            vec![reduce_prod(f, v, vec![0])]
        },
    );
    cases.push(case("scan", f, vec![ANY, ZERO], vec![]));
    let f = build(
        "reduce_prod_two_zeros",
        &[
            ("x", shape(1, n)),
            ("z", Shape::scalar()),
            ("w", Shape::scalar()),
        ],
        |f, p| {
            let v = with_values(f, p[0], 0, &[(1.0, p[1]), (2.0, p[2])]);
            vec![reduce_prod(f, v, vec![0])]
        },
    );
    cases.push(case("scan", f, vec![ANY, ZERO, ZERO], vec![]));
    let f = build(
        "reduce_prod_r2_a0_one_zero",
        &[("x", shape(2, n)), ("z", Shape::scalar())],
        |f, p| {
            let v = with_values(f, p[0], 0, &[(0.0, p[1])]);
            vec![reduce_prod(f, v, vec![0])]
        },
    );
    cases.push(case("scan", f, vec![ANY, ZERO], vec![]));
    let f = build(
        "cumprod_one_zero",
        &[("x", shape(1, n)), ("z", Shape::scalar())],
        |f, p| {
            let v = with_values(f, p[0], 0, &[(1.0, p[1])]);
            vec![cumprod(f, v, 0)]
        },
    );
    cases.push(case("scan", f, vec![ANY, ZERO], vec![]));
    for (s, axis) in [
        (shape(1, n), 0),
        (shape(2, n), 0),
        (shape(2, n), 1),
        (r3, 1),
    ] {
        for reverse in [false, true] {
            let dir = if reverse { "_rev" } else { "" };
            let f = build(
                &format!("linear_scan_r{}_a{axis}{dir}", s.rank()),
                &[("a", s.clone()), ("b", s.clone())],
                |f, p| vec![linear_scan(f, p[0], p[1], axis, reverse)],
            );
            cases.push(case("scan", f, vec![COEF, ANY], vec![]));
        }
        let f = build(
            &format!("cumsum_r{}_a{axis}", s.rank()),
            &[("x", s.clone())],
            |f, p| vec![cumsum(f, p[0], axis)],
        );
        cases.push(case("scan", f, vec![ANY], vec![]));
        let f = build(
            &format!("cumprod_r{}_a{axis}", s.rank()),
            &[("x", s.clone())],
            |f, p| vec![cumprod(f, p[0], axis)],
        );
        cases.push(case("scan", f, vec![ANY], vec![]));
    }
    // A scan whose operands are fused expressions, summed.
    let f = build("linear_scan_fused_sum", &[("x", shape(2, n))], |f, p| {
        let a = f.unary(oxla_core::ops::elementwise::UnaryOp::Tanh, p[0]);
        let b = f.mul(p[0], p[0]);
        let y = linear_scan(f, a, b, 0, false);
        vec![sum_all(f, y)]
    });
    cases.push(case("scan", f, vec![ANY], vec![]));
    cases
}
