//! Shared helpers for the core test suite: a catalog of small functions (one
//! or more per op, plus composites), random inputs in each op's domain,
//! finite differences and tolerance comparison.
#![allow(dead_code)]

use oxla_core::ops::elementwise::{BinaryOp, CmpOp, Rounding, UnaryOp};
use oxla_core::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

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

const POS: (f64, f64) = (0.5, 2.0);
const ANY: (f64, f64) = (-2.0, 2.0);

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

fn case(
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
    cases.extend(composites(n));
    cases
}

/// The n-dimensional ops: reduce_max/min over axes, transpose and reshape,
/// and dot_general in its numpy forms and with unsorted and non-leading
/// contracting and batch axes.
pub fn nd_cases(n: &Dim) -> Vec<Case> {
    let mut cases = Vec::new();
    let (d2, d3, d6) = (Dim::Const(2), Dim::Const(3), Dim::Const(6));
    let sh = |d: &[&Dim]| Shape(d.iter().map(|d| (*d).clone()).collect());
    let r3 = sh(&[&d2, n, &d3]);
    let reductions: Vec<(Shape, Vec<usize>)> = vec![
        (shape(1, n), vec![0]),
        (shape(2, n), vec![0]),
        (shape(2, n), vec![1]),
        (shape(2, n), vec![0, 1]),
        (r3.clone(), vec![0, 2]),
        (r3.clone(), vec![1]),
    ];
    for (s, axes) in reductions {
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
        map[e.out.index()] = Some(g.push(e.op.clone(), &ins).unwrap());
    }
    f.outs.iter().map(|o| map[o.index()].unwrap()).collect()
}

// ---- inputs ---------------------------------------------------------------

/// Bind every symbol to `size`.
pub fn env_all(f: &Function, size: usize) -> BTreeMap<String, usize> {
    f.symbols().into_iter().map(|s| (s, size)).collect()
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
    let data = (0..n).map(|_| rng.gen_range(r.0..r.1)).collect();
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
/// and checking bounds; the outputs as tensors.
pub fn run_program(p: &exec::Program, args: &[Tensor]) -> Vec<Tensor> {
    let f = &p.function;
    let bufs: Vec<Buffer> = args.iter().map(Tensor::to_buffer).collect();
    let lens: Vec<usize> = bufs.iter().map(Buffer::len).collect();
    let sizes = p
        .bind(&lens)
        .unwrap_or_else(|e| panic!("bind `{}`: {e}", f.name));
    p.check_bounds(&sizes)
        .unwrap_or_else(|e| panic!("check_bounds `{}` at {sizes:?}: {e}", f.name));
    let env: BTreeMap<String, u64> = p.symbols.iter().cloned().zip(sizes).collect();
    let out = p
        .run(&exec::InterpLauncher(&p.kernels), &bufs)
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
    };
}
#[allow(unused_imports)]
pub(crate) use family_tests;
