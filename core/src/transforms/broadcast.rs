//! numpy broadcasting of an argument axis that is 1 at the call.
//!
//! The macros unify the sizes of operands combined elementwise (`x - mu`
//! gives `mu` the symbols of `x`), so a compiled program expects `mu` at
//! the full size. When a call passes `mu` with size 1 on such an axis,
//! `size_one_params` specializes the original function: the parameter
//! becomes size 1 there and is broadcast back to the full shape as its
//! first use, which is what numpy and JAX do at the first elementwise op
//! that meets a full-size operand. The transforms are then applied again
//! to the specialized function, so its gradient sums over the broadcast
//! axis (the transpose of the broadcast).
//!
//! That is exact only if nothing sees the narrow parameter before it meets
//! a full-size operand: in JAX, `sum(mu)` sums one row, `mu * 2.0` has one
//! row, `mu.len()` is 1, and the unified program cannot tell those apart
//! from `sum(x)`, `x * 2.0` and `x.len()`. So each value's axes of the
//! broadcast sizes are classified: `Full` (known to be the full size, as in
//! JAX), `Narrow` (size 1 in JAX: the parameter, and elementwise results of
//! narrow operands), or `Unknown` (a size written into an op, such as a
//! broadcast literal's, which might have come from either). A value that
//! is not full reaching anything but an elementwise op, a size the program
//! reads (`dim_size`, slice bounds) that is one of the broadcast sizes, or
//! a result that is not full or narrow is an error naming the op; a narrow
//! result is returned narrow (its first row), as JAX returns it.

use crate::ir::{Function, Type, Var};
use crate::ops::elementwise::BinaryOp;
use crate::ops::Op;
use crate::shape::{Dim, Shape};
use crate::text::nested_functions;
use std::collections::BTreeSet;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Axis {
    /// Not one of the broadcast sizes.
    Other,
    Full,
    Narrow,
    Unknown,
}

/// What is known of a value's axes, or that its value itself may differ
/// from JAX's (a size the program reads).
#[derive(Clone, Debug)]
enum State {
    Axes(Vec<Axis>),
    Differs(String),
}

/// An equation's results: one result's axes, every result's broadcast-size
/// axes alike, or values that may differ.
enum Verdict {
    One(Vec<Axis>),
    Every(Axis),
    Differs(String),
}

/// `f` with parameter axes `ones` (parameter index, axis) of size 1,
/// broadcast to their full size before any use; an error when that would
/// not compute what numpy's broadcasting computes (see the module docs).
pub fn size_one_params(f: &Function, ones: &[(usize, usize)]) -> Result<Function, String> {
    let mut syms = BTreeSet::new();
    for &(p, a) in ones {
        let name = f
            .param_names
            .get(p)
            .ok_or_else(|| format!("`{}` has no parameter {p}", f.name))?;
        match f.shape(f.params[p]).0.get(a) {
            Some(Dim::Sym(s)) => {
                syms.insert(s.clone());
            }
            _ => {
                return Err(format!(
                    "axis {a} of `{name}` is not a size bound at the call"
                ))
            }
        }
    }
    let outs_narrow = check(f, ones, &syms)?;
    Ok(specialize(f, ones, &outs_narrow))
}

/// The classification of the module docs; `Ok` with each result's narrow
/// axes when the specialization is exact.
fn check(
    f: &Function,
    ones: &[(usize, usize)],
    syms: &BTreeSet<String>,
) -> Result<Vec<Vec<usize>>, String> {
    let is_sym = |d: &Dim| matches!(d, Dim::Sym(s) if syms.contains(s));
    let mentions = |d: &Dim| {
        let mut base = Vec::new();
        crate::shape::derived::base_symbols(d, &mut base);
        base.iter().any(|b| syms.contains(b))
    };
    let axes_of = |ty: &Type, known: Axis| -> Vec<Axis> {
        ty.shape
            .0
            .iter()
            .map(|d| if is_sym(d) { known } else { Axis::Other })
            .collect()
    };
    let mut state: Vec<Option<State>> = vec![None; f.types.len()];
    for (i, p) in f.params.iter().enumerate() {
        let mut axes = axes_of(f.ty(*p), Axis::Full);
        for &(q, a) in ones {
            if q == i {
                axes[a] = Axis::Narrow;
            }
        }
        state[p.index()] = Some(State::Axes(axes));
    }
    let ambiguous = |ax: &[Axis]| ax.iter().any(|a| matches!(a, Axis::Narrow | Axis::Unknown));
    // A mean: `sum(v) / (n·m…)` where the sizes are those of the axes the
    // sum reduced, all full. The sizes read are then `v`'s, not the
    // argument's. Per value: the sizes whose product it is (`dim_size`s
    // multiplied, broadcast), and the sizes a full-size `reduce_sum`
    // reduced.
    let mut size_of: Vec<Option<Vec<Dim>>> = vec![None; f.types.len()];
    let mut sum_over: Vec<Option<Vec<Dim>>> = vec![None; f.types.len()];
    for e in f.eqns.iter() {
        let ins: Vec<&State> = e
            .ins
            .iter()
            .map(|v| state[v.index()].as_ref().expect("operand defined"))
            .collect();
        let sizes = |i: usize| size_of[e.ins[i].index()].clone();
        match &e.op {
            Op::DimSize { dim, .. } => size_of[e.outs[0].index()] = Some(vec![dim.clone()]),
            Op::Binary(BinaryOp::Mul) => {
                if let (Some(a), Some(b)) = (sizes(0), sizes(1)) {
                    size_of[e.outs[0].index()] = Some([a, b].concat());
                }
            }
            Op::Broadcast { .. } => size_of[e.outs[0].index()] = sizes(0),
            Op::ReduceSum { axes } => {
                if let State::Axes(ax) = ins[0] {
                    if axes
                        .iter()
                        .all(|a| ax[*a] != Axis::Narrow && ax[*a] != Axis::Unknown)
                    {
                        let dims = &f.shape(e.ins[0]).0;
                        sum_over[e.outs[0].index()] =
                            Some(axes.iter().map(|a| dims[*a].clone()).collect());
                    }
                }
            }
            Op::Binary(BinaryOp::Div) => {
                let over = sum_over[e.ins[0].index()].clone();
                if let (Some(mut over), Some(mut count), State::Axes(a)) = (over, sizes(1), ins[0])
                {
                    let key = |d: &Dim| d.to_string();
                    over.sort_by_key(key);
                    count.sort_by_key(key);
                    if over == count {
                        state[e.outs[0].index()] = Some(State::Axes(a.clone()));
                        continue;
                    }
                }
            }
            _ => {}
        }
        if let Some(State::Differs(why)) = ins.iter().find(|s| matches!(s, State::Differs(_))) {
            let why = why.clone();
            for o in &e.outs {
                state[o.index()] = Some(State::Differs(why.clone()));
            }
            continue;
        }
        let axes = |s: &State| match s {
            State::Axes(a) => a.clone(),
            State::Differs(_) => unreachable!("handled above"),
        };
        let out_ty = f.ty(e.outs[0]);
        let elementwise = matches!(
            e.op,
            Op::Unary(_)
                | Op::Special(_)
                | Op::Binary(_)
                | Op::Cmp(_)
                | Op::Select
                | Op::Convert { .. }
                | Op::StopGradient
        ) && e.ins.iter().all(|v| f.shape(*v) == &out_ty.shape);
        let result = if elementwise {
            let mut out = axes_of(out_ty, Axis::Full);
            for (k, slot) in out.iter_mut().enumerate() {
                if *slot == Axis::Other {
                    continue;
                }
                let at: Vec<Axis> = ins.iter().map(|s| axes(s)[k]).collect();
                *slot = if at.contains(&Axis::Full) {
                    Axis::Full
                } else if at.iter().all(|a| *a == Axis::Narrow) {
                    Axis::Narrow
                } else {
                    Axis::Unknown
                };
            }
            Verdict::One(out)
        } else if let Op::Broadcast { dims, .. } = &e.op {
            // Mapped axes keep the operand's verdict; new ones have a
            // size written into the op.
            let src = axes(ins[0]);
            let mut out = axes_of(out_ty, Axis::Unknown);
            for (i, d) in dims.iter().enumerate() {
                if out[*d] != Axis::Other && src[i] != Axis::Other {
                    out[*d] = src[i];
                }
            }
            Verdict::One(out)
        } else {
            if let Some(i) = ins.iter().position(|s| ambiguous(&axes(s))) {
                return Err(format!(
                    "{} before it meets an array of the full size (`{}` reads {})",
                    describe_use(&e.op),
                    e.op,
                    describe_value(f, e.ins[i])
                ));
            }
            let mut written = Vec::new();
            let values = collect_written(&e.op, &mut written);
            if values.iter().any(&mentions) {
                // A size the program computes with (`dim_size`, a slice's
                // start, a loop's bounds): its value may be the argument's.
                Verdict::Differs(format!(
                    "`{}` reads a size that may be the argument's",
                    e.op
                ))
            } else if written.iter().any(&mentions) {
                // A shape written into the op: the same values, at a size
                // not known to be full.
                Verdict::Every(Axis::Unknown)
            } else {
                Verdict::Every(Axis::Full)
            }
        };
        for o in &e.outs {
            state[o.index()] = Some(match &result {
                Verdict::One(a) => State::Axes(a.clone()),
                Verdict::Every(k) => State::Axes(axes_of(f.ty(*o), *k)),
                Verdict::Differs(why) => State::Differs(why.clone()),
            });
        }
    }
    let mut narrow = Vec::new();
    for (i, o) in f.outs.iter().enumerate() {
        match state[o.index()].as_ref().expect("result defined") {
            State::Differs(why) => {
                return Err(format!("result {i} depends on a size: {why}"));
            }
            State::Axes(ax) => {
                if ax.contains(&Axis::Unknown) {
                    return Err(format!(
                        "the size of result {i} ({}) could be the argument's or the full one",
                        f.shape(*o)
                    ));
                }
                narrow.push(
                    ax.iter()
                        .enumerate()
                        .filter(|(_, a)| **a == Axis::Narrow)
                        .map(|(k, _)| k)
                        .collect(),
                );
            }
        }
    }
    Ok(narrow)
}

/// Collect into `shapes` the sizes `op` writes into result shapes, and
/// return the sizes it computes with (a `dim_size`, slice starts), including
/// inside its nested functions (a loop's body, a cond's branches), where
/// every written size counts as computed with.
fn collect_written(op: &Op, shapes: &mut Vec<Dim>) -> Vec<Dim> {
    let mut values = Vec::new();
    match op {
        Op::Broadcast { shape, .. }
        | Op::Reshape { shape }
        | Op::Iota { shape, .. }
        | Op::ScatterAdd { shape, .. } => shapes.extend(shape.0.iter().cloned()),
        Op::Slice { shape, starts, .. } | Op::Pad { shape, starts, .. } => {
            shapes.extend(shape.0.iter().cloned());
            values.extend(starts.iter().cloned());
        }
        Op::DimSize { dim, .. } => values.push(dim.clone()),
        _ => {}
    }
    for g in nested_functions(op) {
        for e in g.eqns.iter() {
            let mut inner = Vec::new();
            values.extend(collect_written(&e.op, &mut inner));
            values.extend(inner);
        }
    }
    values
}

fn describe_use(op: &Op) -> String {
    let what = match op {
        Op::ReduceSum { .. }
        | Op::ReduceMax { .. }
        | Op::ReduceMin { .. }
        | Op::ReduceProd { .. } => "it is reduced",
        Op::Dot | Op::DotGeneral(_) => "it is in a matrix or vector product",
        Op::Loop(_) | Op::LoopReverse(_) | Op::Cond(_) => "it enters a loop or a branch",
        Op::Reshape { .. } | Op::Transpose { .. } | Op::Slice { .. } | Op::Pad { .. } => {
            "it is reshaped, transposed or sliced"
        }
        _ => "it is used by an op that is not elementwise",
    };
    what.to_string()
}

fn describe_value(f: &Function, v: Var) -> String {
    match f.params.iter().position(|p| *p == v) {
        Some(i) => format!("`{}`", f.param_names[i]),
        None => format!("a value of shape {}", f.shape(v)),
    }
}

/// The specialized function: parameters `ones` of size 1, broadcast back as
/// their first use; results `narrow[i]` sliced to their first row.
fn specialize(f: &Function, ones: &[(usize, usize)], narrow: &[Vec<usize>]) -> Function {
    let mut g = Function::new(&f.name);
    let mut map: Vec<Option<Var>> = vec![None; f.types.len()];
    let mut widen = Vec::new();
    for (i, (p, name)) in f.params.iter().zip(&f.param_names).enumerate() {
        let ty = f.ty(*p).clone();
        let axes: Vec<usize> = ones.iter().filter(|o| o.0 == i).map(|o| o.1).collect();
        if axes.is_empty() {
            map[p.index()] = Some(g.add_param(name, ty));
            continue;
        }
        let mut shape = ty.shape.clone();
        for a in &axes {
            shape.0[*a] = Dim::Const(1);
        }
        let q = g.add_param(name, Type::new(ty.dtype, shape));
        widen.push((*p, q, axes, ty.shape));
    }
    for (p, q, axes, full) in widen {
        let kept: Vec<usize> = (0..full.rank()).filter(|a| !axes.contains(a)).collect();
        let squeezed = Shape(kept.iter().map(|a| full.0[*a].clone()).collect());
        let r = crate::ops::layout::reshape(&mut g, q, squeezed);
        map[p.index()] = Some(g.broadcast(r, full, kept));
    }
    for e in f.eqns.iter() {
        g.copy_eqn(e, &mut map);
    }
    g.outs = f
        .outs
        .iter()
        .zip(narrow)
        .map(|(o, axes)| {
            let v = map[o.index()].expect("result defined");
            if axes.is_empty() {
                return v;
            }
            let mut shape = g.shape(v).clone();
            for a in axes {
                shape.0[*a] = Dim::Const(1);
            }
            let rank = shape.rank();
            crate::ops::slicing::slice(&mut g, v, shape, vec![Dim::Const(0); rank], vec![1; rank])
        })
        .collect();
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::eval;
    use crate::ir::Type;
    use crate::tensor::Tensor;
    use crate::transforms::Step;
    use crate::DType;

    fn matrix(f: &mut Function, name: &str) -> Var {
        let shape = Shape(vec![Dim::sym("n"), Dim::sym("m")]);
        f.add_param(name, Type::new(DType::F64, shape))
    }

    fn t(shape: &[usize], data: &[f64]) -> Tensor {
        Tensor::new(DType::F64, shape.to_vec(), data.to_vec())
    }

    /// sum((x - mu)²), the parameters' sizes unified as the macros do.
    fn centered_square_sum() -> Function {
        let mut f = Function::new("f");
        let x = matrix(&mut f, "x");
        let mu = matrix(&mut f, "mu");
        let d = f.sub(x, mu);
        let sq = f.mul(d, d);
        let s = f.reduce_sum(sq, vec![0, 1]);
        f.outs = vec![s];
        f
    }

    const X: [f64; 6] = [0.5, -1.25, 2.0, 3.5, 0.75, -0.125];
    const MU: [f64; 3] = [0.25, 1.5, -2.0];

    #[test]
    fn a_size_one_row_is_broadcast_and_its_gradient_sums_the_rows() {
        let f = centered_square_sum();
        let g = size_one_params(&f, &[(1, 0)]).unwrap();
        assert_eq!(g.shape(g.params[1]).to_string(), "[1,m]");
        let args = [t(&[2, 3], &X), t(&[1, 3], &MU)];
        let value = eval(&g, &args).unwrap()[0].data[0];
        let want: f64 = (0..6).map(|i| (X[i] - MU[i % 3]).powi(2)).sum();
        assert_eq!(value, want);
        // The gradient, derived from the specialized function: d/dmu_j of
        // sum_i (x_ij - mu_j)² = -2 sum_i (x_ij - mu_j), one row.
        let dg = Step::apply_all(&[Step::Grad(vec![0, 1])], &g, "dg").unwrap();
        let out = eval(&dg, &args).unwrap();
        assert_eq!(out[1].shape, vec![1, 3]);
        for j in 0..3 {
            let want = -2.0 * (0..2).map(|i| X[3 * i + j] - MU[j]).sum::<f64>();
            assert!(
                (out[1].data[j] - want).abs() < 1e-12,
                "{j}: {:?}",
                out[1].data
            );
        }
        for i in 0..6 {
            assert!((out[0].data[i] - 2.0 * (X[i] - MU[i % 3])).abs() < 1e-12);
        }
    }

    #[test]
    fn a_narrow_parameter_reduced_on_its_own_is_refused() {
        // sum(x - mu) + sum(mu): JAX sums one row of `mu`; the unified
        // program would sum two.
        let mut f = centered_square_sum();
        let mu = f.params[1];
        let s = f.reduce_sum(mu, vec![0, 1]);
        let total = f.add(f.outs[0], s);
        f.outs = vec![total];
        let e = size_one_params(&f, &[(1, 0)]).unwrap_err();
        assert!(e.contains("reduced") && e.contains("`mu`"), "{e}");
    }

    #[test]
    fn a_result_computed_from_the_narrow_parameter_alone_stays_narrow() {
        // (x - mu, mu * mu): JAX returns the second with one row.
        let mut f = Function::new("f");
        let x = matrix(&mut f, "x");
        let mu = matrix(&mut f, "mu");
        let d = f.sub(x, mu);
        let sq = f.mul(mu, mu);
        f.outs = vec![d, sq];
        let g = size_one_params(&f, &[(1, 0)]).unwrap();
        let out = eval(&g, &[t(&[2, 3], &X), t(&[1, 3], &MU)]).unwrap();
        assert_eq!(out[0].shape, vec![2, 3]);
        assert_eq!(out[1].shape, vec![1, 3]);
        let want: Vec<f64> = MU.iter().map(|m| m * m).collect();
        assert_eq!(out[1].data, want);
    }

    #[test]
    fn a_size_read_from_the_unified_symbol_is_refused() {
        // mean over rows: divides by a size that is `x`'s or `mu`'s.
        let mut f = centered_square_sum();
        let n = f
            .push(
                Op::DimSize {
                    dim: Dim::sym("n"),
                    dtype: DType::F64,
                },
                &[],
            )
            .unwrap();
        let m = f.div(f.outs[0], n);
        f.outs = vec![m];
        let e = size_one_params(&f, &[(1, 0)]).unwrap_err();
        assert!(e.contains("size"), "{e}");
    }

    #[test]
    fn a_mean_divides_by_the_sizes_it_summed_over() {
        let mut f = centered_square_sum();
        let size = |f: &mut Function, d: &str| {
            f.push(
                Op::DimSize {
                    dim: Dim::sym(d),
                    dtype: DType::F64,
                },
                &[],
            )
            .unwrap()
        };
        let n = size(&mut f, "n");
        let m = size(&mut f, "m");
        let count = f.mul(n, m);
        let mean = f.div(f.outs[0], count);
        f.outs = vec![mean];
        let g = size_one_params(&f, &[(1, 0)]).unwrap();
        let value = eval(&g, &[t(&[2, 3], &X), t(&[1, 3], &MU)]).unwrap()[0].data[0];
        let want: f64 = (0..6).map(|i| (X[i] - MU[i % 3]).powi(2)).sum::<f64>() / 6.0;
        assert_eq!(value, want);
    }

    #[test]
    fn a_literal_broadcast_to_the_unified_shape_is_fine_once_it_meets_a_full_array() {
        // sum((x - 2·mu)²): `2` is broadcast to [n, m], which could be
        // either size, until it meets `x`.
        let mut f = Function::new("f");
        let x = matrix(&mut f, "x");
        let mu = matrix(&mut f, "mu");
        let two = f.literal(2.0, DType::F64);
        let shape = f.shape(mu).clone();
        let two = f.broadcast(two, shape, vec![]);
        let m2 = f.mul(two, mu);
        let d = f.sub(x, m2);
        let sq = f.mul(d, d);
        let s = f.reduce_sum(sq, vec![0, 1]);
        f.outs = vec![s];
        let g = size_one_params(&f, &[(1, 0)]).unwrap();
        let value = eval(&g, &[t(&[2, 3], &X), t(&[1, 3], &MU)]).unwrap()[0].data[0];
        let want: f64 = (0..6).map(|i| (X[i] - 2.0 * MU[i % 3]).powi(2)).sum();
        assert_eq!(value, want);
        // Returned before it meets `x`, its size is unknown: refused.
        f.outs = vec![s, m2];
        let e = size_one_params(&f, &[(1, 0)]).unwrap_err();
        assert!(e.contains("result 1"), "{e}");
    }
}
