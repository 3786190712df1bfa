//! Shared helpers for the core test suite: a catalog of small functions (one
//! or more per op, plus composites), random inputs in each op's domain,
//! finite differences and tolerance comparison.
#![allow(dead_code)]

pub mod cond;
pub mod loops;
pub mod nd;

use oxla_core::ops::elementwise::{BinaryOp, CmpOp, Rounding, UnaryOp};
use oxla_core::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

mod gather_cases;
mod slicing_cases;
pub use gather_cases::gather_cases;
pub use slicing_cases::slicing_cases;
mod scan_cases;
pub use scan_cases::scan_cases;
mod cond_cases;
pub use cond_cases::cond_cases;

pub const F: DType = DType::F64;

pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// A test function with the input domain of each parameter.
#[derive(Clone)]
pub struct Case {
    pub name: String,
    /// The op family (`unary`, `powi`, `binary`, `select`, `broadcast`,
    /// `reduce_sum`, `dot`, `composite`).
    pub family: &'static str,
    pub f: Function,
    /// Range of the values of each parameter.
    pub ranges: Vec<(f64, f64)>,
    /// Pairs of parameters `(a, b)` kept at least `SEP` apart elementwise
    /// (no ties in max/min/comparisons, also under finite differences).
    pub sep: Vec<(usize, usize)>,
}

pub const SEP: f64 = 0.1;

pub(crate) const POS: (f64, f64) = (0.5, 2.0);
pub(crate) const ANY: (f64, f64) = (-2.0, 2.0);

/// Shape of rank 0, 1 (`[n]`) or 2 (`[n,3]`).
pub fn shape(rank: usize, n: &Dim) -> Shape {
    match rank {
        0 => Shape::scalar(),
        1 => Shape(vec![n.clone()]),
        2 => Shape(vec![n.clone(), Dim::Const(3)]),
        _ => unreachable!(),
    }
}

fn ty(s: Shape) -> Type {
    Type::new(F, s)
}

/// Build a function from params and a body.
pub fn build(
    name: &str,
    params: &[(&str, Shape)],
    body: impl FnOnce(&mut Function, &[Var]) -> Vec<Var>,
) -> Function {
    let mut f = Function::new(name);
    let ps: Vec<Var> = params
        .iter()
        .map(|(n, s)| f.add_param(n, ty(s.clone())))
        .collect();
    let outs = body(&mut f, &ps);
    f.outs = outs;
    verify::verify(&f).unwrap_or_else(|e| panic!("test function `{name}` invalid: {e}"));
    f
}

pub(crate) fn case(
    family: &'static str,
    f: Function,
    ranges: Vec<(f64, f64)>,
    sep: Vec<(usize, usize)>,
) -> Case {
    assert_eq!(ranges.len(), f.params.len());
    Case {
        name: f.name.clone(),
        family,
        f,
        ranges,
        sep,
    }
}

/// Sum of every element.
pub fn sum_all(f: &mut Function, x: Var) -> Var {
    let axes = (0..f.shape(x).rank()).collect();
    f.reduce_sum(x, axes)
}

/// The catalog: every op (each unary incl. powi, each binary, select with
/// comparison predicates, broadcast patterns, reduce_sum axes, dot) on
/// inputs of rank 0/1/2 where the op allows, plus composites. Symbolic
/// shapes use the dimension `n` (pass `Dim::Const` for fixed shapes).
pub fn catalog(n: &Dim) -> Vec<Case> {
    let mut cases = Vec::new();
    let unary: Vec<(UnaryOp, (f64, f64))> = vec![
        (UnaryOp::Neg, ANY),
        (UnaryOp::Exp, ANY),
        (UnaryOp::Log, POS),
        (UnaryOp::Sin, ANY),
        (UnaryOp::Cos, ANY),
        (UnaryOp::Tanh, ANY),
        (UnaryOp::Sqrt, POS),
        (UnaryOp::ExpM1, ANY),
        (UnaryOp::Erf, ANY),
        // Piecewise constant: random points are almost surely off the jumps,
        // where central differences see a zero slope.
        (UnaryOp::Round(Rounding::Floor), ANY),
        (UnaryOp::Round(Rounding::Ceil), ANY),
        (UnaryOp::Round(Rounding::Trunc), ANY),
        (UnaryOp::Round(Rounding::HalfAway), ANY),
        (UnaryOp::Round(Rounding::HalfEven), ANY),
        (UnaryOp::Sign, ANY),
        (UnaryOp::Signum, ANY),
    ];
    for (op, range) in unary {
        for rank in 0..3 {
            let f = build(
                &format!("{}_r{rank}", op.name()),
                &[("x", shape(rank, n))],
                |f, p| vec![f.unary(op, p[0])],
            );
            cases.push(case("unary", f, vec![range], vec![]));
        }
    }
    for k in [-2, 0, 1, 2, 3] {
        // Negative powers away from 0; the others on both signs.
        let range = if k < 0 { POS } else { ANY };
        for rank in 0..3 {
            let f = build(
                &format!("powi{}_r{rank}", k.to_string().replace('-', "m")),
                &[("x", shape(rank, n))],
                |f, p| vec![f.unary(UnaryOp::Powi(k), p[0])],
            );
            cases.push(case("powi", f, vec![range], vec![]));
        }
    }
    for op in BinaryOp::ALL {
        let (ranges, sep) = match op {
            BinaryOp::Div => (vec![ANY, POS], vec![]),
            BinaryOp::Max | BinaryOp::Min => (vec![ANY, ANY], vec![(0, 1)]),
            // Non-integer powers of a negative base are NaN.
            BinaryOp::Pow => (vec![POS, ANY], vec![]),
            _ => (vec![ANY, ANY], vec![]),
        };
        for rank in 0..3 {
            let s = shape(rank, n);
            let f = build(
                &format!("{}_r{rank}", op.name()),
                &[("a", s.clone()), ("b", s)],
                |f, p| vec![f.binary(op, p[0], p[1])],
            );
            cases.push(case("binary", f, ranges.clone(), sep.clone()));
        }
    }
    // Powers of a base of either sign by integer exponents (NaN-free), and
    // the exponent 0, whose slope in x is 0 by definition.
    for k in [3.0, 2.0, -1.0, 0.0] {
        let f = build(
            &format!("pow_int_exponent_{}", k.to_string().replace('-', "m")),
            &[("x", shape(1, n))],
            |f, p| {
                let y = f.full_like(k, p[0]);
                vec![f.binary(BinaryOp::Pow, p[0], y)]
            },
        );
        let range = if k < 0.0 { POS } else { ANY };
        cases.push(case("binary", f, vec![range], vec![]));
    }
    // The same operand twice.
    for op in [BinaryOp::Mul, BinaryOp::Div, BinaryOp::Sub] {
        let f = build(
            &format!("{}_self", op.name()),
            &[("x", shape(1, n))],
            |f, p| vec![f.binary(op, p[0], p[0])],
        );
        cases.push(case("binary", f, vec![POS], vec![]));
    }
    for c in CmpOp::ALL {
        for rank in 0..3 {
            let s = shape(rank, n);
            let f = build(
                &format!("select_{}_r{rank}", c.name()),
                &[("a", s.clone()), ("b", s)],
                |f, p| {
                    let pred = f.cmp(c, p[0], p[1]);
                    let ab = f.mul(p[0], p[1]);
                    let sa = f.unary(UnaryOp::Sin, p[0]);
                    vec![f.select(pred, ab, sa)]
                },
            );
            cases.push(case("select", f, vec![ANY, ANY], vec![(0, 1)]));
        }
    }
    {
        // A predicate that is always true (`eq` of a value with itself).
        let f = build(
            "select_eq_self",
            &[("a", shape(1, n)), ("b", shape(1, n))],
            |f, p| {
                let pred = f.cmp(CmpOp::Eq, p[0], p[0]);
                let e = f.unary(UnaryOp::Exp, p[0]);
                vec![f.select(pred, e, p[1])]
            },
        );
        cases.push(case("select", f, vec![ANY, ANY], vec![]));
    }
    // Broadcast: (input shape, output shape, dims). A target shape with a
    // symbol its input lacks takes an `anchor` param that fixes the symbol.
    let d3 = Dim::Const(3);
    let d2 = Dim::Const(2);
    let patterns: Vec<(&str, Shape, Shape, Vec<usize>)> = vec![
        ("s_to_n", Shape::scalar(), shape(1, n), vec![]),
        ("s_to_n3", Shape::scalar(), shape(2, n), vec![]),
        ("n_to_n3", shape(1, n), shape(2, n), vec![0]),
        ("3_to_n3", Shape(vec![d3.clone()]), shape(2, n), vec![1]),
        (
            "n_to_2n3",
            shape(1, n),
            Shape(vec![d2.clone(), n.clone(), d3.clone()]),
            vec![1],
        ),
        (
            "n3_to_n23",
            shape(2, n),
            Shape(vec![n.clone(), d2.clone(), d3.clone()]),
            vec![0, 2],
        ),
        (
            "n3_to_2n3",
            shape(2, n),
            Shape(vec![d2.clone(), n.clone(), d3.clone()]),
            vec![1, 2],
        ),
        ("n_to_n", shape(1, n), shape(1, n), vec![0]),
    ];
    for (name, from, to, dims) in patterns {
        let needs_anchor = !from.symbols().any(|_| true) && to.symbols().any(|_| true);
        let mut params = vec![("x", from)];
        if needs_anchor {
            params.push(("anchor", shape(1, n)));
        }
        let np = params.len();
        let f = build(&format!("broadcast_{name}"), &params, |f, p| {
            let mut outs = vec![f.broadcast(p[0], to, dims)];
            if np == 2 {
                outs.push(p[1]);
            }
            outs
        });
        cases.push(case("broadcast", f, vec![ANY; np], vec![]));
    }
    let r3 = Shape(vec![d2.clone(), n.clone(), d3.clone()]);
    let reductions: Vec<(Shape, Vec<usize>)> = vec![
        (Shape::scalar(), vec![]),
        (shape(1, n), vec![0]),
        (shape(1, n), vec![]),
        (shape(2, n), vec![0]),
        (shape(2, n), vec![1]),
        (shape(2, n), vec![0, 1]),
        (r3.clone(), vec![0, 2]),
        (r3.clone(), vec![1]),
        (r3, vec![0, 1, 2]),
    ];
    for (s, axes) in reductions {
        let axes_name: Vec<String> = axes.iter().map(|a| a.to_string()).collect();
        let f = build(
            &format!("reduce_sum_r{}_a{}", s.rank(), axes_name.join("")),
            &[("x", s)],
            |f, p| vec![f.reduce_sum(p[0], axes)],
        );
        cases.push(case("reduce_sum", f, vec![ANY], vec![]));
    }
    let f = build("dot", &[("a", shape(1, n)), ("b", shape(1, n))], |f, p| {
        vec![f.dot(p[0], p[1])]
    });
    cases.push(case("dot", f, vec![ANY, ANY], vec![]));
    let f = build("dot_self", &[("a", shape(1, n))], |f, p| {
        vec![f.dot(p[0], p[0])]
    });
    cases.push(case("dot", f, vec![ANY], vec![]));
    cases.extend(nd_cases(n));
    cases.extend(slicing_cases(n));
    cases.extend(gather_cases(n));
    cases.extend(scan_cases(n));
    cases.extend(cond_cases(n));
    cases.extend(composites(n));
    cases.extend(unit_broadcasts(n));
    cases.extend(special_ops(n));
    cases.extend(two_sizes(n));
    cases
}

/// The shapes and axes every reduction family is checked over: ranks 1–3,
/// one axis, several, all.
pub fn reduction_shapes(n: &Dim) -> Vec<(Shape, Vec<usize>)> {
    let r3 = Shape(vec![Dim::Const(2), n.clone(), Dim::Const(3)]);
    vec![
        (shape(1, n), vec![0]),
        (shape(2, n), vec![0]),
        (shape(2, n), vec![1]),
        (shape(2, n), vec![0, 1]),
        (r3.clone(), vec![0, 2]),
        (r3, vec![1]),
    ]
}

/// The n-dimensional ops: reduce_max/min over axes, transpose and reshape,
/// and dot_general in its numpy forms and with unsorted and non-leading
/// contracting and batch axes.
pub fn nd_cases(n: &Dim) -> Vec<Case> {
    let mut cases = Vec::new();
    let (d2, d3, d6) = (Dim::Const(2), Dim::Const(3), Dim::Const(6));
    let sh = |d: &[&Dim]| Shape(d.iter().map(|d| (*d).clone()).collect());
    let r3 = sh(&[&d2, n, &d3]);
    for (s, axes) in reduction_shapes(n) {
        let axes_name: Vec<String> = axes.iter().map(|a| a.to_string()).collect();
        for max in [true, false] {
            let name = if max { "reduce_max" } else { "reduce_min" };
            let axes = axes.clone();
            let f = build(
                &format!("{name}_r{}_a{}", s.rank(), axes_name.join("")),
                &[("x", s.clone())],
                |f, p| {
                    let op = if max {
                        Op::ReduceMax { axes }
                    } else {
                        Op::ReduceMin { axes }
                    };
                    vec![f.push(op, &[p[0]]).unwrap()]
                },
            );
            cases.push(case("reduce_max_min", f, vec![ANY], vec![]));
        }
    }
    let layouts: Vec<(&str, Shape, Op)> = vec![
        (
            "transpose_10",
            shape(2, n),
            Op::Transpose { perm: vec![1, 0] },
        ),
        (
            "transpose_201",
            r3.clone(),
            Op::Transpose {
                perm: vec![2, 0, 1],
            },
        ),
        (
            "transpose_102",
            r3.clone(),
            Op::Transpose {
                perm: vec![1, 0, 2],
            },
        ),
        (
            "reshape_n_to_n1",
            shape(1, n),
            Op::Reshape {
                shape: sh(&[n, &Dim::Const(1)]),
            },
        ),
        (
            "reshape_s_to_11",
            Shape::scalar(),
            Op::Reshape {
                shape: sh(&[&Dim::Const(1), &Dim::Const(1)]),
            },
        ),
        (
            "reshape_2n3_to_n6",
            r3.clone(),
            Op::Reshape {
                shape: sh(&[n, &d6]),
            },
        ),
        (
            "reshape_2n3_to_3n2",
            r3.clone(),
            Op::Reshape {
                shape: sh(&[&d3, n, &d2]),
            },
        ),
    ];
    for (name, s, op) in layouts {
        let f = build(name, &[("x", s)], |f, p| vec![f.push(op, &[p[0]]).unwrap()]);
        cases.push(case("layout", f, vec![ANY], vec![]));
    }
    let dd = |lc: &[usize], rc: &[usize], lb: &[usize], rb: &[usize]| DotDims {
        lhs_contract: lc.to_vec(),
        rhs_contract: rc.to_vec(),
        lhs_batch: lb.to_vec(),
        rhs_batch: rb.to_vec(),
    };
    let products: Vec<(&str, Shape, Shape, DotDims)> = vec![
        (
            "matmul",
            shape(2, n),
            sh(&[&d3, &d2]),
            dd(&[1], &[0], &[], &[]),
        ),
        ("matvec", shape(2, n), sh(&[&d3]), dd(&[1], &[0], &[], &[])),
        ("vecmat", shape(1, n), shape(2, n), dd(&[0], &[0], &[], &[])),
        ("outer", shape(1, n), sh(&[&d3]), dd(&[], &[], &[], &[])),
        (
            "inner2",
            shape(2, n),
            shape(2, n),
            dd(&[0, 1], &[0, 1], &[], &[]),
        ),
        (
            "batched",
            r3.clone(),
            sh(&[&d2, &d3, n]),
            dd(&[2], &[1], &[0], &[0]),
        ),
        (
            "unsorted_contract",
            r3.clone(),
            sh(&[&d3, n]),
            dd(&[2, 1], &[0, 1], &[], &[]),
        ),
        (
            "trailing_batch",
            sh(&[n, &d3, &d2]),
            sh(&[&d2, &d3]),
            dd(&[1], &[1], &[2], &[0]),
        ),
    ];
    for (name, a, b, d) in products {
        let f = build(
            &format!("dot_general_{name}"),
            &[("a", a), ("b", b)],
            |f, p| vec![f.push(Op::DotGeneral(d), &[p[0], p[1]]).unwrap()],
        );
        cases.push(case("dot_general", f, vec![ANY, ANY], vec![]));
    }
    let f = build("dot_general_gram", &[("a", shape(2, n))], |f, p| {
        vec![f
            .push(Op::DotGeneral(dd(&[0], &[0], &[], &[])), &[p[0], p[0]])
            .unwrap()]
    });
    cases.push(case("dot_general", f, vec![ANY], vec![]));
    cases
}

/// `sum(x * 2 * y + z)`, the fusion example.
pub fn fused_sum(n: &Dim) -> Function {
    let s = shape(1, n);
    build(
        "fused_sum",
        &[("x", s.clone()), ("y", s.clone()), ("z", s.clone())],
        |f, p| {
            let two = f.full(2.0, F, &s);
            let a = f.mul(p[0], two);
            let b = f.mul(a, p[1]);
            let c = f.add(b, p[2]);
            vec![f.reduce_sum(c, vec![0])]
        },
    )
}

/// `log(1 + exp(-y * dot(w, x)))`.
pub fn logistic(n: &Dim) -> Function {
    build(
        "logistic",
        &[
            ("w", shape(1, n)),
            ("x", shape(1, n)),
            ("y", Shape::scalar()),
        ],
        |f, p| {
            let d = f.dot(p[0], p[1]);
            let yd = f.mul(p[2], d);
            let m = f.neg(yd);
            let e = f.unary(UnaryOp::Exp, m);
            let one = f.literal(1.0, F);
            let s = f.add(one, e);
            vec![f.unary(UnaryOp::Log, s)]
        },
    )
}

pub fn composites(n: &Dim) -> Vec<Case> {
    let mut cases = Vec::new();
    let s1 = shape(1, n);
    let s2 = shape(2, n);
    cases.push(case("composite", fused_sum(n), vec![ANY; 3], vec![]));
    cases.push(case("composite", logistic(n), vec![ANY, ANY, ANY], vec![]));
    let f = build("tanh_gauss", &[("x", s1.clone())], |f, p| {
        let t = f.unary(UnaryOp::Tanh, p[0]);
        let x2 = f.unary(UnaryOp::Powi(2), p[0]);
        let m = f.neg(x2);
        let e = f.unary(UnaryOp::Exp, m);
        vec![f.mul(t, e)]
    });
    cases.push(case("composite", f, vec![ANY], vec![]));
    let f = build("cube_over_sqrt", &[("x", s1.clone())], |f, p| {
        let c = f.unary(UnaryOp::Powi(3), p[0]);
        let r = f.unary(UnaryOp::Sqrt, p[0]);
        vec![f.div(c, r)]
    });
    cases.push(case("composite", f, vec![POS], vec![]));
    let f = build("softmax", &[("x", s1.clone())], |f, p| {
        let e = f.unary(UnaryOp::Exp, p[0]);
        let s = f.reduce_sum(e, vec![0]);
        let sb = f.broadcast(s, s1.clone(), vec![]);
        vec![f.div(e, sb)]
    });
    cases.push(case("composite", f, vec![ANY], vec![]));
    let f = build("row_normalize", &[("x", s2.clone())], |f, p| {
        let sq = f.mul(p[0], p[0]);
        let r = f.reduce_sum(sq, vec![1]);
        let nr = f.unary(UnaryOp::Sqrt, r);
        let b = f.broadcast(nr, s2.clone(), vec![0]);
        vec![f.div(p[0], b)]
    });
    cases.push(case("composite", f, vec![POS], vec![]));
    for axis in [0usize, 1] {
        let f = build(
            &format!("chain_reduce_a{axis}"),
            &[("x", s2.clone()), ("y", s2.clone())],
            |f, p| {
                let e = f.unary(UnaryOp::Exp, p[0]);
                let m = f.mul(e, p[1]);
                let d = f.sub(m, p[0]);
                vec![f.reduce_sum(d, vec![axis])]
            },
        );
        cases.push(case("composite", f, vec![ANY, ANY], vec![]));
    }
    let f = build(
        "mlp",
        &[
            ("x", s2.clone()),
            ("w", Shape(vec![Dim::Const(3)])),
            ("b", Shape::scalar()),
        ],
        |f, p| {
            let wb = f.broadcast(p[1], s2.clone(), vec![1]);
            let bb = f.broadcast(p[2], s2.clone(), vec![]);
            let xw = f.mul(p[0], wb);
            let z = f.add(xw, bb);
            let t = f.unary(UnaryOp::Tanh, z);
            vec![sum_all(f, t)]
        },
    );
    cases.push(case("composite", f, vec![ANY, ANY, ANY], vec![]));
    let f = build("reuse", &[("x", s1.clone())], |f, p| {
        let y = f.unary(UnaryOp::Sin, p[0]);
        let yy = f.mul(y, y);
        vec![f.add(yy, y)]
    });
    cases.push(case("composite", f, vec![ANY], vec![]));
    let f = build(
        "multi_out",
        &[("x", s1.clone()), ("y", s1.clone())],
        |f, p| {
            let a = f.mul(p[0], p[1]);
            let s = f.reduce_sum(p[0], vec![0]);
            let c = f.unary(UnaryOp::Cos, p[1]);
            vec![a, s, c]
        },
    );
    cases.push(case("composite", f, vec![ANY, ANY], vec![]));
    let f = build("dot_sin", &[("x", s1.clone())], |f, p| {
        let s = f.unary(UnaryOp::Sin, p[0]);
        vec![f.dot(p[0], s)]
    });
    cases.push(case("composite", f, vec![ANY], vec![]));
    let f = build(
        "clamp_mix",
        &[("x", s1.clone()), ("y", s1.clone())],
        |f, p| {
            let hi = f.binary(BinaryOp::Max, p[0], p[1]);
            let lo = f.binary(BinaryOp::Min, p[0], p[1]);
            let e = f.unary(UnaryOp::Exp, lo);
            vec![f.mul(hi, e)]
        },
    );
    cases.push(case("composite", f, vec![ANY, ANY], vec![(0, 1)]));
    // An output that is a parameter and one that is a constant.
    let f = build("param_and_const_out", &[("x", s1.clone())], |f, p| {
        let c = f.full(2.5, F, &s1);
        let s = f.unary(UnaryOp::Sin, p[0]);
        vec![p[0], c, s]
    });
    cases.push(case("composite", f, vec![ANY], vec![]));
    // A parameter that does not reach the output.
    let f = build(
        "unused_param",
        &[("x", s1.clone()), ("u", s1.clone())],
        |f, p| vec![f.unary(UnaryOp::Exp, p[0])],
    );
    cases.push(case("composite", f, vec![ANY, ANY], vec![]));
    cases
}

/// `g(params…, w_k…) = Σ_k sum(out_k(params) * w_k)`: a scalar function of
/// `f`'s params, with one weight param per output of `f`.
pub fn weighted_sum(f: &Function) -> Function {
    let mut g = Function::new(&format!("{}_wsum", f.name));
    let ps: Vec<Var> = f
        .params
        .iter()
        .zip(&f.param_names)
        .map(|(p, n)| g.add_param(n, f.ty(*p).clone()))
        .collect();
    let ws: Vec<Var> = f
        .outs
        .iter()
        .enumerate()
        .map(|(k, o)| g.add_param(&format!("w{k}"), f.ty(*o).clone()))
        .collect();
    let outs = inline(&mut g, f, &ps);
    let mut acc: Option<Var> = None;
    for (o, w) in outs.iter().zip(&ws) {
        let m = g.mul(*o, *w);
        let s = sum_all(&mut g, m);
        acc = Some(match acc {
            Some(a) => g.add(a, s),
            None => s,
        });
    }
    g.outs = vec![acc.expect("an output")];
    verify::verify(&g).unwrap();
    g
}

/// Copy the equations of `f` into `g`, with `args` for its params; returns
/// the values of `f`'s outputs.
pub fn inline(g: &mut Function, f: &Function, args: &[Var]) -> Vec<Var> {
    let mut map: Vec<Option<Var>> = vec![None; f.types.len()];
    for (p, a) in f.params.iter().zip(args) {
        map[p.index()] = Some(*a);
    }
    for e in &f.eqns {
        let ins: Vec<Var> = e.ins.iter().map(|v| map[v.index()].unwrap()).collect();
        let outs = g.push_all(e.op.clone(), &ins).unwrap();
        for (o, v) in e.outs.iter().zip(outs) {
            map[o.index()] = Some(v);
        }
    }
    f.outs.iter().map(|o| map[o.index()].unwrap()).collect()
}

// ---- inputs ---------------------------------------------------------------

/// Bind every symbol to `size`.
pub fn env_all(f: &Function, size: usize) -> BTreeMap<String, usize> {
    try_env_all(f, size).unwrap_or_else(|e| panic!("`{}` at size {size}: {e}", f.name))
}

/// Every base symbol bound to `size`, and the derived ones computed from
/// them; an error when a slice does not fit at that size.
pub fn try_env_all(f: &Function, size: usize) -> Result<BTreeMap<String, usize>, String> {
    use oxla_core::shape::derived;
    let symbols = f.symbols();
    let mut env: BTreeMap<String, u64> = symbols
        .iter()
        .filter(|s| !derived::is_derived(s))
        .map(|s| (s.clone(), size as u64))
        .collect();
    derived::bind_derived(symbols.iter().map(String::as_str), &mut env)?;
    Ok(env.into_iter().map(|(k, v)| (k, v as usize)).collect())
}

pub fn concrete(shape: &Shape, env: &BTreeMap<String, usize>) -> Vec<usize> {
    shape
        .0
        .iter()
        .map(|d| match d {
            Dim::Const(c) => *c as usize,
            Dim::Sym(s) => *env.get(s).unwrap_or_else(|| panic!("unbound `{s}`")),
        })
        .collect()
}

pub fn random_tensor(rng: &mut StdRng, dtype: DType, shape: Vec<usize>, r: (f64, f64)) -> Tensor {
    let n = shape.iter().product();
    // A range of one value (a point such as 0) is that value.
    let data = (0..n)
        .map(|_| {
            if r.0 == r.1 {
                r.0
            } else {
                rng.gen_range(r.0..r.1)
            }
        })
        .collect();
    Tensor::new(dtype, shape, data)
}

/// Random arguments for `f` (params in `ranges`, pairs in `sep` kept apart).
pub fn random_args_for(
    f: &Function,
    ranges: &[(f64, f64)],
    sep: &[(usize, usize)],
    rng: &mut StdRng,
    env: &BTreeMap<String, usize>,
) -> Vec<Tensor> {
    let mut args: Vec<Tensor> = f
        .params
        .iter()
        .zip(ranges)
        .map(|(p, r)| random_tensor(rng, f.dtype(*p), concrete(f.shape(*p), env), *r))
        .collect();
    for (a, b) in sep {
        // (Skipped where the shapes differ, as after a partial vmap.)
        if args[*a].shape != args[*b].shape {
            continue;
        }
        for i in 0..args[*a].numel() {
            let (x, y) = (args[*a].data[i], args[*b].data[i]);
            if (x - y).abs() < SEP {
                let d = if rng.gen_bool(0.5) { SEP } else { -SEP };
                args[*b].data[i] = x + d;
            }
        }
    }
    args
}

pub fn random_args(case: &Case, rng: &mut StdRng, env: &BTreeMap<String, usize>) -> Vec<Tensor> {
    random_args_for(&case.f, &case.ranges, &case.sep, rng, env)
}

/// Random tensors in [-1, 1] of the shapes and dtypes of `like`.
pub fn random_like(rng: &mut StdRng, like: &[Tensor]) -> Vec<Tensor> {
    like.iter()
        .map(|t| random_tensor(rng, t.dtype, t.shape.clone(), (-1.0, 1.0)))
        .collect()
}

/// Random tensors for the outputs of `f` (cotangents, weights).
pub fn random_for_outputs(
    rng: &mut StdRng,
    f: &Function,
    env: &BTreeMap<String, usize>,
) -> Vec<Tensor> {
    f.outs
        .iter()
        .map(|o| random_tensor(rng, f.dtype(*o), concrete(f.shape(*o), env), (-1.0, 1.0)))
        .collect()
}

// ---- evaluation and finite differences ------------------------------------

/// Fuse's program run with the kernel interpreter, after binding the sizes
/// (from the arguments' dimensions, as the macros pass them, so that an
/// empty argument binds too) and checking bounds; the outputs as tensors.
pub fn run_program(p: &exec::Program, args: &[Tensor]) -> Vec<Tensor> {
    let f = &p.function;
    let bufs: Vec<Buffer> = args.iter().map(Tensor::to_buffer).collect();
    let raw: Vec<exec::RawArg> = bufs
        .iter()
        .zip(args)
        .map(|(b, t)| exec::RawArg {
            dtype: b.dtype(),
            ptr: b.as_ptr(),
            len: b.len(),
            dims: exec::ArgDims::new(&t.shape).expect("rank within MAX_RANK"),
        })
        .collect();
    let dims: Vec<(usize, exec::ArgDims)> = raw.iter().map(|a| (a.len, a.dims)).collect();
    let sizes = p
        .bind_dims(&dims)
        .unwrap_or_else(|e| panic!("bind `{}`: {e}", f.name));
    p.check_bounds(&sizes)
        .unwrap_or_else(|e| panic!("check_bounds `{}` at {sizes:?}: {e}", f.name));
    // A max or min over no elements is an error at the call (JAX raises;
    // `fusion_nd::empty_max_and_min_are_errors_at_the_call`): the call is
    // refused with that error, and there is nothing to compare, so the
    // reference's own values stand in (the callers compare with them).
    if let Err(e) = p.check_nonempty(&sizes) {
        assert!(e.contains("no identity"), "{e}");
        return oxla_core::interp::eval(f, args).expect("the reference runs");
    }
    let env: BTreeMap<String, u64> = p.symbols.iter().cloned().zip(sizes).collect();
    p.check_schedule()
        .unwrap_or_else(|e| panic!("check_schedule `{}`: {e}", f.name));
    // SAFETY: `raw` points into `bufs`, alive for the call; the launcher
    // runs this program's kernels; the schedule was checked.
    let out = unsafe { p.execute(&exec::InterpLauncher(&p.kernels), &raw) }
        .unwrap_or_else(|e| panic!("run `{}`: {e}", f.name));
    out.iter()
        .zip(&f.outs)
        .map(|(b, o)| {
            let shape = f.shape(*o).concrete(&env).unwrap();
            Tensor::from_buffer(shape, b)
        })
        .collect()
}

pub fn eval(f: &Function, args: &[Tensor]) -> Vec<Tensor> {
    interp::eval(f, args).unwrap_or_else(|e| panic!("eval of `{}`: {e}", f.name))
}

/// `x + h * d`, elementwise over the argument list.
pub fn axpy(x: &[Tensor], d: &[Tensor], h: f64) -> Vec<Tensor> {
    x.iter()
        .zip(d)
        .map(|(x, d)| {
            let data = x.data.iter().zip(&d.data).map(|(a, b)| a + h * b).collect();
            Tensor::new(x.dtype, x.shape.clone(), data)
        })
        .collect()
}

/// Central finite difference of every output of `f` along `dir`.
pub fn fd_jvp(f: &Function, args: &[Tensor], dir: &[Tensor], h: f64) -> Vec<Vec<f64>> {
    let p = eval(f, &axpy(args, dir, h));
    let m = eval(f, &axpy(args, dir, -h));
    p.iter()
        .zip(&m)
        .map(|(p, m)| {
            p.data
                .iter()
                .zip(&m.data)
                .map(|(a, b)| (a - b) / (2.0 * h))
                .collect()
        })
        .collect()
}

/// Central finite-difference gradient of the scalar output `out` of `f` with
/// respect to every element of param `i`.
pub fn fd_grad(f: &Function, args: &[Tensor], i: usize, out: usize, h: f64) -> Vec<f64> {
    (0..args[i].numel())
        .map(|j| {
            let mut plus = args.to_vec();
            plus[i].data[j] += h;
            let mut minus = args.to_vec();
            minus[i].data[j] -= h;
            let a = eval(f, &plus)[out].data[0];
            let b = eval(f, &minus)[out].data[0];
            (a - b) / (2.0 * h)
        })
        .collect()
}

pub fn dotv(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Σ over a list of tensors of ⟨a_k, b_k⟩.
pub fn inner(a: &[Tensor], b: &[Tensor]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| dotv(&x.data, &y.data)).sum()
}

/// Assert `|got - want| <= rtol * max(1, |want|)` elementwise (so `rtol` is
/// absolute for values below 1 in magnitude).
#[track_caller]
pub fn assert_close(ctx: &str, got: &[f64], want: &[f64], rtol: f64) {
    assert_eq!(got.len(), want.len(), "{ctx}: lengths differ");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if g == w {
            true // also equal infinities
        } else {
            (g - w).abs() <= rtol * w.abs().max(1.0)
        };
        assert!(
            ok,
            "{ctx}: element {i}: got {g:e}, want {w:e} (diff {:e}, rtol {rtol:e})",
            (g - w).abs()
        );
    }
}

#[track_caller]
pub fn assert_tensors_close(ctx: &str, got: &[Tensor], want: &[Tensor], rtol: f64) {
    assert_eq!(got.len(), want.len(), "{ctx}: number of outputs");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.dtype, w.dtype, "{ctx}: output {k} dtype");
        assert_eq!(g.shape, w.shape, "{ctx}: output {k} shape");
        assert_close(&format!("{ctx}: output {k}"), &g.data, &w.data, rtol);
    }
}

/// Slice `t` at index `i` of its leading axis.
pub fn slice0(t: &Tensor, i: usize) -> Tensor {
    let inner: usize = t.shape[1..].iter().product();
    Tensor::new(
        t.dtype,
        t.shape[1..].to_vec(),
        t.data[i * inner..(i + 1) * inner].to_vec(),
    )
}

/// One `#[test]` per family of the catalog, each calling `$check(family)`.
#[allow(unused_macros)] // not every test file uses it
macro_rules! family_tests {
    ($check:ident) => {
        #[test]
        fn unary_ops() {
            $check("unary");
        }
        #[test]
        fn powi() {
            $check("powi");
        }
        #[test]
        fn binary_ops() {
            $check("binary");
        }
        #[test]
        fn select_with_comparisons() {
            $check("select");
        }
        #[test]
        fn broadcast() {
            $check("broadcast");
        }
        #[test]
        fn reduce_sum() {
            $check("reduce_sum");
        }
        #[test]
        fn dot() {
            $check("dot");
        }
        #[test]
        fn reduce_max_min() {
            $check("reduce_max_min");
        }
        #[test]
        fn layout() {
            $check("layout");
        }
        #[test]
        fn dot_general() {
            $check("dot_general");
        }
        #[test]
        fn composite_functions() {
            $check("composite");
        }
        #[test]
        fn unit_axis_broadcasting() {
            $check("unit_broadcast");
        }
        #[test]
        fn iota_dim_size_stop_gradient_convert() {
            $check("special");
        }
        /// Families of the catalog not in `FAMILIES` still get checked.
        #[test]
        fn other_families() {
            for family in common::unlisted_families() {
                $check(family);
            }
        }
        #[test]
        fn slicing() {
            $check("slicing");
        }
        #[test]
        fn gather() {
            $check("gather");
        }
        #[test]
        fn products_and_scans() {
            $check("scan");
        }
        #[test]
        fn conds() {
            $check("cond");
        }
    };
}
#[allow(unused_imports)]
pub(crate) use family_tests;

// ---- size-1 broadcasting and the ops without derivatives ------------------

/// numpy broadcasting of `vs` as the macros emit it (`vocab::broadcast_all`
/// in the lowering): trailing axes aligned; an operand whose shape differs
/// from the common one first drops its stretched size-1 axes with a
/// `reshape`, then a `broadcast` puts its other axes at their positions.
/// Only a constant 1 stretches; other sizes must be equal.
pub fn np_broadcast(f: &mut Function, vs: &[Var]) -> Vec<Var> {
    let rank = vs.iter().map(|v| f.shape(*v).rank()).max().unwrap_or(0);
    let mut common = vec![Dim::Const(1); rank];
    for v in vs {
        let shape = f.shape(*v).clone();
        let off = rank - shape.rank();
        for (i, d) in shape.0.iter().enumerate() {
            if *d != Dim::Const(1) {
                assert!(
                    common[off + i] == Dim::Const(1) || common[off + i] == *d,
                    "np_broadcast: sizes {} and {d} at one axis",
                    common[off + i]
                );
                common[off + i] = d.clone();
            }
        }
    }
    let common = Shape(common);
    vs.iter()
        .map(|v| {
            let shape = f.shape(*v).clone();
            if shape == common {
                return *v;
            }
            let off = rank - shape.rank();
            let kept: Vec<usize> = (0..shape.rank())
                .filter(|i| shape.0[*i] == common.0[off + i])
                .collect();
            let mut x = *v;
            if kept.len() != shape.rank() {
                let squeezed = Shape(kept.iter().map(|i| shape.0[*i].clone()).collect());
                x = f.push(Op::Reshape { shape: squeezed }, &[x]).unwrap();
            }
            let dims = kept.iter().map(|i| off + i).collect();
            f.broadcast(x, common.clone(), dims)
        })
        .collect()
}

/// Binary ops whose operands have size-1 axes stretched against larger
/// ones (and ranks promoted), as `a + b` on arrays of shapes `[n, 1]` and
/// `[1, 3]` lowers: a `reshape` that removes the unit axes, then a
/// `broadcast`.
pub fn unit_broadcasts(n: &Dim) -> Vec<Case> {
    let mut cases = Vec::new();
    let (d1, d2, d3) = (Dim::Const(1), Dim::Const(2), Dim::Const(3));
    let sh = |d: &[&Dim]| Shape(d.iter().map(|d| (*d).clone()).collect());
    // (name, op, lhs shape, rhs shape)
    let pairs: Vec<(&str, BinaryOp, Shape, Shape)> = vec![
        ("n1_add_13", BinaryOp::Add, sh(&[n, &d1]), sh(&[&d1, &d3])),
        ("n1_mul_n3", BinaryOp::Mul, sh(&[n, &d1]), sh(&[n, &d3])),
        ("1n_sub_31", BinaryOp::Sub, sh(&[&d1, n]), sh(&[&d3, &d1])),
        ("n3_div_1", BinaryOp::Div, sh(&[n, &d3]), sh(&[&d1])),
        ("11_mul_n3", BinaryOp::Mul, sh(&[&d1, &d1]), sh(&[n, &d3])),
        (
            "213_mul_n1",
            BinaryOp::Mul,
            sh(&[&d2, &d1, &d3]),
            sh(&[n, &d1]),
        ),
        ("n_max_31", BinaryOp::Max, sh(&[n]), sh(&[&d3, &d1])),
        (
            "1n1_min_n3",
            BinaryOp::Min,
            sh(&[&d1, n, &d1]),
            sh(&[n, &d3]),
        ),
    ];
    for (name, op, a, b) in pairs {
        // Max/min operands of different shapes cannot be kept apart by
        // `sep`; continuous random values tie (within the difference
        // step) with probability ~1e-6 per element, and the seeds are fixed.
        let range_b = if op == BinaryOp::Div { POS } else { ANY };
        let f = build(
            &format!("unit_broadcast_{name}"),
            &[("a", a), ("b", b)],
            |f, p| {
                let ab = np_broadcast(f, p);
                vec![f.binary(op, ab[0], ab[1])]
            },
        );
        cases.push(case("unit_broadcast", f, vec![ANY, range_b], vec![]));
    }
    // A unit-axis operand in a chain: `sum(exp(x[n, 1] * w[1, 3]), 0)`.
    let f = build(
        "unit_broadcast_chain",
        &[("x", sh(&[n, &d1])), ("w", sh(&[&d1, &d3]))],
        |f, p| {
            let ab = np_broadcast(f, p);
            let m = f.mul(ab[0], ab[1]);
            let e = f.unary(UnaryOp::Exp, m);
            vec![f.reduce_sum(e, vec![0])]
        },
    );
    cases.push(case("unit_broadcast", f, vec![ANY, ANY], vec![]));
    cases
}

/// The ops with no derivative of their own, each where its role makes the
/// finite differences meaningful: `iota` and `dim_size` as constants,
/// `stop_gradient` on the max of a stable softmax (the value does not
/// depend on the max subtracted, so the derivative through the rest is
/// the true one), `convert` from a comparison's bool (zero derivative, away
/// from ties) and between floats (the identity here, f64 to f64).
pub fn special_ops(n: &Dim) -> Vec<Case> {
    let mut cases = Vec::new();
    let s1 = shape(1, n);
    let s2 = shape(2, n);
    let f = build("iota_weights", &[("x", s2.clone())], |f, p| {
        let rows = f
            .push(
                Op::Iota {
                    shape: s2.clone(),
                    axis: 0,
                    dtype: F,
                },
                &[],
            )
            .unwrap();
        let cols = f
            .push(
                Op::Iota {
                    shape: s2.clone(),
                    axis: 1,
                    dtype: F,
                },
                &[],
            )
            .unwrap();
        let w = f.sub(rows, cols);
        vec![f.mul(p[0], w)]
    });
    cases.push(case("special", f, vec![ANY], vec![]));
    let f = build("mean_by_dim_size", &[("x", s2.clone())], |f, p| {
        let s = f.reduce_sum(p[0], vec![0]);
        let len = f
            .push(
                Op::DimSize {
                    dim: n.clone(),
                    dtype: F,
                },
                &[],
            )
            .unwrap();
        // `n + 1`, so the mean of no rows is 0 and not 0/0.
        let one = f.literal(1.0, F);
        let len1 = f.add(len, one);
        let lb = f.broadcast(len1, Shape(vec![Dim::Const(3)]), vec![]);
        vec![f.div(s, lb)]
    });
    cases.push(case("special", f, vec![ANY], vec![]));
    let f = build("stable_softmax", &[("x", s1.clone())], |f, p| {
        let mx = f.push(Op::ReduceMax { axes: vec![0] }, &[p[0]]).unwrap();
        let sg = f.push(Op::StopGradient, &[mx]).unwrap();
        let mb = f.broadcast(sg, s1.clone(), vec![]);
        let d = f.sub(p[0], mb);
        let e = f.unary(UnaryOp::Exp, d);
        let z = f.reduce_sum(e, vec![0]);
        let zb = f.broadcast(z, s1.clone(), vec![]);
        vec![f.div(e, zb)]
    });
    cases.push(case("special", f, vec![ANY], vec![]));
    let f = build(
        "convert_mask",
        &[("x", s1.clone()), ("y", s1.clone())],
        |f, p| {
            let gt = f.cmp(CmpOp::Gt, p[0], p[1]);
            let m = f.push(Op::Convert { dtype: F }, &[gt]).unwrap();
            let xm = f.mul(p[0], m);
            let same = f.push(Op::Convert { dtype: F }, &[p[1]]).unwrap();
            vec![f.add(xm, same)]
        },
    );
    cases.push(case("special", f, vec![ANY, ANY], vec![(0, 1)]));
    cases
}

/// A second size beside `n`: the symbol `m` when `n` is a symbol (the
/// two then vary independently), else `n` itself.
pub fn second_dim(n: &Dim) -> Dim {
    match n {
        Dim::Sym(_) => Dim::sym("m"),
        fixed => fixed.clone(),
    }
}

/// Cases with two independent sizes `n` and `m` (see [`second_dim`]), so
/// that one axis can be empty or a unit while the other is not: an outer
/// sum by broadcasting, a product contracting `m`, a max over `m`, a
/// transpose.
pub fn two_sizes(n: &Dim) -> Vec<Case> {
    let mut cases = Vec::new();
    let m = second_dim(n);
    let (d1, d3) = (Dim::Const(1), Dim::Const(3));
    let sh = |d: &[&Dim]| Shape(d.iter().map(|d| (*d).clone()).collect());
    let nm = sh(&[n, &m]);
    let f = build(
        "unit_broadcast_n1_add_1m",
        &[("a", sh(&[n, &d1])), ("b", sh(&[&d1, &m]))],
        |f, p| {
            let ab = np_broadcast(f, p);
            vec![f.add(ab[0], ab[1])]
        },
    );
    cases.push(case("unit_broadcast", f, vec![ANY, ANY], vec![]));
    let f = build(
        "dot_general_nm_m3",
        &[("a", nm.clone()), ("b", sh(&[&m, &d3]))],
        |f, p| {
            let d = DotDims {
                lhs_contract: vec![1],
                rhs_contract: vec![0],
                lhs_batch: vec![],
                rhs_batch: vec![],
            };
            vec![f.push(Op::DotGeneral(d), &[p[0], p[1]]).unwrap()]
        },
    );
    cases.push(case("dot_general", f, vec![ANY, ANY], vec![]));
    let f = build("reduce_max_nm_a1", &[("x", nm.clone())], |f, p| {
        vec![f.push(Op::ReduceMax { axes: vec![1] }, &[p[0]]).unwrap()]
    });
    cases.push(case("reduce_max_min", f, vec![ANY], vec![]));
    let f = build("transpose_nm", &[("x", nm)], |f, p| {
        vec![f.push(Op::Transpose { perm: vec![1, 0] }, &[p[0]]).unwrap()]
    });
    cases.push(case("layout", f, vec![ANY], vec![]));
    cases
}

// ---- random shapes --------------------------------------------------------

/// The sizes a symbol takes in the shape-randomized checks: empty, a unit
/// axis (a broadcast that is not one), and small even and odd sizes.
pub const SHAPE_SIZES: [usize; 6] = [0, 1, 2, 3, 5, 7];

/// Bindings of the symbols of `f` for the shape-randomized checks: with at
/// most one symbol, every size of [`SHAPE_SIZES`]; otherwise every symbol
/// 0, every symbol 1, and four draws (each symbol independently) from
/// `seed`. Constant dimensions keep their sizes.
pub fn shape_envs(f: &Function, seed: u64) -> Vec<BTreeMap<String, usize>> {
    use oxla_core::shape::derived;
    let symbols = f.symbols();
    let syms: Vec<&String> = symbols.iter().filter(|s| !derived::is_derived(s)).collect();
    let same = |v: usize| -> BTreeMap<String, u64> {
        syms.iter().map(|s| ((*s).clone(), v as u64)).collect()
    };
    let bases: Vec<BTreeMap<String, u64>> = if syms.len() <= 1 {
        SHAPE_SIZES.iter().map(|&v| same(v)).collect()
    } else {
        let mut rng = rng(seed);
        let mut envs = vec![same(0), same(1)];
        for _ in 0..4 {
            envs.push(
                syms.iter()
                    .map(|s| {
                        (
                            (*s).clone(),
                            SHAPE_SIZES[rng.gen_range(0..SHAPE_SIZES.len())] as u64,
                        )
                    })
                    .collect(),
            );
        }
        envs
    };
    // Derived sizes (slices, concatenations) follow from the base ones; a
    // binding at which some slice does not fit is left out (the fusion
    // tests check that such a call is refused).
    // A max or min over no elements is an error at the call (JAX raises),
    // tested on its own (`fusion_nd::empty_max_and_min_are_errors`): such
    // bindings are left out here.
    let nonempty = oxla_core::ops::reduce::nonempty_reductions(f);
    bases
        .into_iter()
        .filter_map(|mut env| {
            derived::bind_derived(symbols.iter().map(String::as_str), &mut env).ok()?;
            let empty = nonempty.iter().any(|n| {
                n.dims.iter().any(|d| match d {
                    oxla_core::shape::Dim::Const(c) => *c == 0,
                    oxla_core::shape::Dim::Sym(s) => env.get(s) == Some(&0),
                })
            });
            if empty {
                return None;
            }
            Some(env.into_iter().map(|(k, v)| (k, v as usize)).collect())
        })
        .collect()
}

/// `f` with every parameter of rank ≥ 2 taken with its axes reversed and
/// transposed back before use: run by a backend, those operands are read
/// through non-unit (permuted) strides. `None` when `f` has no such
/// parameter.
pub fn with_transposed_params(f: &Function) -> Option<Function> {
    if f.params.iter().all(|p| f.shape(*p).rank() < 2) {
        return None;
    }
    let mut g = Function::new(&format!("{}_transposed", f.name));
    let args: Vec<Var> = f
        .params
        .iter()
        .zip(&f.param_names)
        .map(|(p, name)| {
            let ty = f.ty(*p).clone();
            let r = ty.shape.rank();
            if r < 2 {
                return g.add_param(name, ty);
            }
            let rev = Shape(ty.shape.0.iter().rev().cloned().collect());
            let q = g.add_param(&format!("{name}_t"), Type::new(ty.dtype, rev));
            let perm = (0..r).rev().collect();
            g.push(Op::Transpose { perm }, &[q]).unwrap()
        })
        .collect();
    g.outs = inline(&mut g, f, &args);
    verify::verify(&g).unwrap();
    Some(g)
}

// ---- op coverage ------------------------------------------------------------

/// The name of an op's kind. The `match` has no catch-all arm, so a new
/// `Op` variant does not compile until it is named here; name it in
/// [`OP_KINDS`] too and give the catalog a case that uses it.
pub fn op_kind(op: &Op) -> &'static str {
    match op {
        Op::Unary(_) => "unary",
        Op::Binary(_) => "binary",
        Op::Cmp(_) => "cmp",
        Op::Select => "select",
        Op::Literal { .. } => "literal",
        Op::Broadcast { .. } => "broadcast",
        Op::ReduceSum { .. } => "reduce_sum",
        Op::Dot => "dot",
        Op::ReduceMax { .. } => "reduce_max",
        Op::ReduceMin { .. } => "reduce_min",
        Op::Transpose { .. } => "transpose",
        Op::Reshape { .. } => "reshape",
        Op::DotGeneral(_) => "dot_general",
        Op::StopGradient => "stop_gradient",
        Op::DimSize { .. } => "dim_size",
        Op::Iota { .. } => "iota",
        Op::Convert { .. } => "convert",
        Op::Slice { .. } => "slice",
        Op::Pad { .. } => "pad",
        Op::Concatenate { .. } => "concatenate",
        Op::Gather { .. } => "gather",
        Op::ScatterAdd { .. } => "scatter_add",
        Op::ReduceProd { .. } => "reduce_prod",
        Op::LinearScan { .. } => "linear_scan",
        // Not in the catalog: loops do not run in kernels yet; their tests
        // are `core/tests/suite/loops.rs` and the facade's `tests/suite/loops.rs`.
        Op::Loop(_) => "loop",
        Op::LoopReverse(_) => "loop_reverse",
        Op::Cond(_) => "cond",
    }
}

/// Every kind [`op_kind`] names: the catalog must use each.
pub const OP_KINDS: &[&str] = &[
    "unary",
    "binary",
    "cmp",
    "select",
    "literal",
    "broadcast",
    "reduce_sum",
    "dot",
    "reduce_max",
    "reduce_min",
    "transpose",
    "reshape",
    "dot_general",
    "stop_gradient",
    "dim_size",
    "iota",
    "convert",
    "slice",
    "pad",
    "concatenate",
    "gather",
    "scatter_add",
    "reduce_prod",
    "linear_scan",
    "cond",
];

/// Every `UnaryOp`, one value per variant: `UnaryOp::SIMPLE` and a power.
/// The `match` has no catch-all arm, so a new variant does not compile
/// until it is named there; one outside `SIMPLE` must be added to the list.
pub fn unary_variants() -> Vec<UnaryOp> {
    let mut all = UnaryOp::SIMPLE.to_vec();
    all.push(UnaryOp::Powi(2));
    for op in &all {
        match op {
            UnaryOp::Neg
            | UnaryOp::Exp
            | UnaryOp::Log
            | UnaryOp::Sin
            | UnaryOp::Cos
            | UnaryOp::Tanh
            | UnaryOp::Sqrt
            | UnaryOp::ExpM1
            | UnaryOp::Erf
            | UnaryOp::Round(_)
            | UnaryOp::Sign
            | UnaryOp::Signum
            | UnaryOp::Powi(_) => {}
        }
    }
    all
}

/// Whether two unary ops are the same variant (any two powers match).
pub fn same_unary_variant(a: UnaryOp, b: UnaryOp) -> bool {
    std::mem::discriminant(&a) == std::mem::discriminant(&b)
}

/// The families of the catalog that [`family_tests`] gives a test of
/// their own; the others run in its `other_families` test.
pub const FAMILIES: &[&str] = &[
    "unary",
    "powi",
    "binary",
    "select",
    "broadcast",
    "reduce_sum",
    "dot",
    "reduce_max_min",
    "layout",
    "dot_general",
    "composite",
    "unit_broadcast",
    "special",
    "slicing",
    "gather",
    "scan",
    "cond",
];

/// The catalog's families missing from [`FAMILIES`] (added on another
/// branch without a test of their own).
pub fn unlisted_families() -> Vec<&'static str> {
    let mut fams: Vec<&'static str> = catalog(&Dim::sym("n"))
        .iter()
        .map(|c| c.family)
        .filter(|f| !FAMILIES.contains(f))
        .collect();
    fams.sort();
    fams.dedup();
    fams
}
