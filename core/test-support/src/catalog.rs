//! The op catalog: every op on inputs of rank 0/1/2 where it allows, the
//! n-dimensional ops, composites, broadcasting and the ops without
//! derivatives, each case with its parameters' input domains.

use oxla_core::ops::elementwise::{BinaryOp, CmpOp, Rounding, UnaryOp};
use oxla_core::ops::special::SpecialFn;
use oxla_core::*;

mod gather_cases;
mod slicing_cases;
pub use gather_cases::gather_cases;
pub use slicing_cases::slicing_cases;
mod scan_cases;
pub use scan_cases::scan_cases;
mod cond_cases;
pub use cond_cases::cond_cases;

pub const F: DType = DType::F64;

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
/// Inside (-1, 1), away from the poles of `erf_inv`'s derivative.
pub(crate) const UNIT: (f64, f64) = (-0.9, 0.9);

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
    for op in SpecialFn::ALL {
        // No catch-all: a new special function needs its domain here.
        let range = match op {
            SpecialFn::ErfInv => UNIT,
        };
        for rank in 0..3 {
            let f = build(
                &format!("{}_r{rank}", op.name()),
                &[("x", shape(rank, n))],
                |f, p| vec![f.push(Op::Special(op), &[p[0]]).unwrap()],
            );
            cases.push(case("special", f, vec![range], vec![]));
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
