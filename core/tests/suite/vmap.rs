//! `vmap` against a loop over examples of the unbatched function.

use crate::common;

use common::*;
use oxla_core::tensor::unravel;
use oxla_core::transforms::{grad, vmap, vmap_axes};
use oxla_core::*;
use std::collections::BTreeMap;

/// Batching reorders no arithmetic today, so results agree exactly; loosen
/// to ~1e-13 if a batching rule ever reassociates a sum.
const RTOL: f64 = 0.0;

/// Every in_axes mix with at least one batched param (all of them for up
/// to three params; otherwise all-batched and each single param unbatched).
fn axes_mixes(np: usize) -> Vec<Vec<Option<usize>>> {
    let masks: Vec<u32> = if np <= 3 {
        (1..(1u32 << np)).collect()
    } else {
        let all = (1u32 << np) - 1;
        std::iter::once(all)
            .chain((0..np).map(|i| all & !(1 << i)))
            .collect()
    };
    masks
        .into_iter()
        .map(|m| {
            (0..np)
                .map(|i| if m & (1 << i) != 0 { Some(0) } else { None })
                .collect()
        })
        .collect()
}

/// Arguments for the vmapped function: an example argument per param and
/// per example, stacked along a new leading axis for the batched params.
fn stack(examples: &[Vec<Tensor>], like: &[Tensor], axes: &[Option<usize>]) -> Vec<Tensor> {
    (0..like.len())
        .map(|p| match axes[p] {
            None => like[p].clone(),
            Some(_) => {
                let mut shape = vec![examples.len()];
                shape.extend(like[p].shape.iter().copied());
                let data = examples
                    .iter()
                    .flat_map(|e| e[p].data.iter().copied())
                    .collect();
                Tensor::new(like[p].dtype, shape, data)
            }
        })
        .collect()
}

/// Check `vmap(f, axes)` on `batch` examples against a loop of `f`, with
/// the symbols of `f` bound by `env`.
fn check_vmap(
    f: &Function,
    ranges: &[(f64, f64)],
    sep: &[(usize, usize)],
    axes: &[Option<usize>],
    batch: usize,
    seed: u64,
    env: &BTreeMap<String, usize>,
) {
    let ctx = format!("vmap({}, {axes:?}) batch {batch} at {env:?}", f.name);
    let v = vmap(f, axes).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    verify::verify(&v).unwrap();
    assert_eq!(v.outs.len(), f.outs.len(), "{ctx}");
    let mut rng = rng(seed);
    // Unbatched params take one value; batched ones a value per example.
    let shared = random_args_for(f, ranges, sep, &mut rng, env);
    let examples: Vec<Vec<Tensor>> = (0..batch)
        .map(|_| {
            let e = random_args_for(f, ranges, sep, &mut rng, env);
            e.into_iter()
                .zip(&shared)
                .zip(axes)
                .map(|((e, s), a)| if a.is_some() { e } else { s.clone() })
                .collect()
        })
        .collect();
    let out = eval(&v, &stack(&examples, &shared, axes));
    let expect: Vec<Vec<Tensor>> = examples.iter().map(|e| eval(f, e)).collect();
    for (k, o) in f.outs.iter().enumerate() {
        let mut shape = vec![batch];
        shape.extend(concrete(f.shape(*o), env));
        assert_eq!(out[k].shape, shape, "{ctx}: output {k} shape");
        for (b, e) in expect.iter().enumerate() {
            assert_close(
                &format!("{ctx}: output {k} example {b}"),
                &slice0(&out[k], b).data,
                &e[k].data,
                RTOL,
            );
        }
    }
}

fn check_family(family: &str) {
    let n = Dim::sym("n");
    let cases: Vec<Case> = catalog(&n)
        .into_iter()
        .filter(|c| c.family == family)
        .collect();
    assert!(!cases.is_empty());
    for (i, c) in cases.iter().enumerate() {
        // Sizes of the case's symbols from `shape_envs` (0 and 1 among
        // them), a different one for each mix and batch size.
        let envs = shape_envs(&c.f, i as u64);
        for (j, axes) in axes_mixes(c.f.params.len()).iter().enumerate() {
            for (l, batch) in [0, 1, 3].into_iter().enumerate() {
                let seed = (i * 100 + j * 10 + batch) as u64;
                let env = &envs[(3 * j + l) % envs.len()];
                check_vmap(&c.f, &c.ranges, &c.sep, axes, batch, seed, env);
            }
        }
        check_axes_anywhere(c, 7000 + 100 * i as u64);
    }
}

// One test per op family of the catalog.
common::family_tests!(check_family);

/// vmap of grad: per-example gradients of every composite (as a weighted
/// sum), the weights shared by all examples.
#[test]
fn vmap_of_grad() {
    let n = Dim::sym("n");
    for (i, c) in composites(&n).iter().enumerate() {
        let g = weighted_sum(&c.f);
        let np = c.f.params.len();
        let gf = grad(&g, &(0..np).collect::<Vec<_>>()).unwrap();
        let mut ranges = c.ranges.clone();
        ranges.extend(vec![(-1.0, 1.0); c.f.outs.len()]);
        let mut axes = vec![Some(0); np];
        axes.extend(vec![None; c.f.outs.len()]);
        check_vmap(
            &gf,
            &ranges,
            &c.sep,
            &axes,
            3,
            300 + i as u64,
            &env_all(&gf, 3),
        );
        // And with only the first param batched.
        let mut axes1 = vec![None; np + c.f.outs.len()];
        axes1[0] = Some(0);
        check_vmap(
            &gf,
            &ranges,
            &c.sep,
            &axes1,
            2,
            400 + i as u64,
            &env_all(&gf, 3),
        );
    }
}

/// Per-example gradients of the logistic loss wrt the weights, against the
/// closed form −y·x·σ(−y·w·x).
#[test]
fn per_example_logistic_gradients() {
    let n = Dim::sym("n");
    let f = logistic(&n);
    let g = grad(&f, &[0]).unwrap();
    let axes = [None, Some(0), Some(0)];
    check_vmap(&g, &[(-1.0, 1.0); 3], &[], &axes, 4, 11, &env_all(&g, 3));
    let v = vmap(&g, &axes).unwrap();
    let mut rng = rng(12);
    let (batch, len) = (5, 4);
    let w = random_tensor(&mut rng, F, vec![len], (-1.0, 1.0));
    let x = random_tensor(&mut rng, F, vec![batch, len], (-1.0, 1.0));
    let y = random_tensor(&mut rng, F, vec![batch], (-1.0, 1.0));
    let out = eval(&v, &[w.clone(), x.clone(), y.clone()]);
    assert_eq!(out[0].shape, vec![batch, len]);
    for b in 0..batch {
        let xb = &x.data[b * len..(b + 1) * len];
        let yb = y.data[b];
        let z = -yb * dotv(&w.data, xb);
        let s = 1.0 / (1.0 + (-z).exp());
        let want: Vec<f64> = xb.iter().map(|xi| -yb * xi * s).collect();
        assert_close(
            &format!("example {b}"),
            &out[0].data[b * len..(b + 1) * len],
            &want,
            1e-14,
        );
    }
}

/// vmap of vmap: two batch axes, every mix of inner and outer in_axes.
#[test]
fn nested_vmap() {
    let n = Dim::sym("n");
    let names = [
        "mul_r1",
        "dot",
        "reduce_sum_r2_a1",
        "broadcast_n_to_n3",
        "select_lt_r2",
        "mlp",
        "softmax",
        "multi_out",
        "logistic",
    ];
    let cases: Vec<Case> = catalog(&n)
        .into_iter()
        .filter(|c| names.contains(&c.name.as_str()))
        .collect();
    assert_eq!(cases.len(), names.len());
    let (b_out, b_in) = (2usize, 3usize);
    for (i, c) in cases.iter().enumerate() {
        let f = &c.f;
        let np = f.params.len();
        for inner in axes_mixes(np) {
            let v1 = vmap(f, &inner).unwrap();
            assert!(v1.symbols().contains("b"));
            for outer in axes_mixes(np) {
                let v2 = vmap(&v1, &outer).unwrap();
                verify::verify(&v2).unwrap();
                let ctx = format!("vmap(vmap({}, {inner:?}), {outer:?})", f.name);
                let mut rng = rng(500 + i as u64);
                let env = env_all(f, 3);
                // One example argument per (outer, inner) index pair.
                let ex: Vec<Vec<Vec<Tensor>>> = (0..b_out)
                    .map(|_| {
                        (0..b_in)
                            .map(|_| random_args_for(f, &c.ranges, &c.sep, &mut rng, &env))
                            .collect()
                    })
                    .collect();
                // The argument actually seen at (i, j): index 0 along any
                // unbatched level.
                let seen = |p: usize, i: usize, j: usize| -> Tensor {
                    let i = if outer[p].is_some() { i } else { 0 };
                    let j = if inner[p].is_some() { j } else { 0 };
                    ex[i][j][p].clone()
                };
                let args: Vec<Tensor> = (0..np)
                    .map(|p| {
                        let mut shape = Vec::new();
                        let (ni, nj) = (
                            if outer[p].is_some() { b_out } else { 1 },
                            if inner[p].is_some() { b_in } else { 1 },
                        );
                        if outer[p].is_some() {
                            shape.push(b_out);
                        }
                        if inner[p].is_some() {
                            shape.push(b_in);
                        }
                        shape.extend(ex[0][0][p].shape.iter().copied());
                        let mut data = Vec::new();
                        for i in 0..ni {
                            for j in 0..nj {
                                data.extend(seen(p, i, j).data);
                            }
                        }
                        Tensor::new(F, shape, data)
                    })
                    .collect();
                let out = eval(&v2, &args);
                for i in 0..b_out {
                    for j in 0..b_in {
                        let a: Vec<Tensor> = (0..np).map(|p| seen(p, i, j)).collect();
                        let want = eval(f, &a);
                        for k in 0..want.len() {
                            assert_eq!(out[k].shape[..2], [b_out, b_in], "{ctx}");
                            let got = slice0(&slice0(&out[k], i), j);
                            assert_close(
                                &format!("{ctx}: output {k} at ({i}, {j})"),
                                &got.data,
                                &want[k].data,
                                RTOL,
                            );
                        }
                    }
                }
            }
        }
    }
}

/// An output that does not depend on the batched argument is broadcast
/// along the batch axis.
#[test]
fn unbatched_outputs_are_broadcast() {
    let n = Dim::sym("n");
    let f = build(
        "mixed",
        &[("x", shape(1, &n)), ("c", shape(1, &n))],
        |f, p| {
            let s = f.reduce_sum(p[0], vec![0]);
            let two = f.full(2.0, F, &shape(1, &n));
            let c2 = f.mul(p[1], two);
            let k = f.literal(0.5, F);
            vec![s, c2, k, p[1]]
        },
    );
    let axes = [Some(0), None];
    check_vmap(&f, &[(-1.0, 1.0); 2], &[], &axes, 3, 21, &env_all(&f, 3));
    let v = vmap(&f, &axes).unwrap();
    let b = Dim::sym("b");
    assert_eq!(v.shape(v.outs[1]), &Shape(vec![b.clone(), n.clone()]));
    assert_eq!(v.shape(v.outs[2]), &Shape(vec![b.clone()]));
    let mut rng = rng(22);
    let x = random_tensor(&mut rng, F, vec![4, 3], (-1.0, 1.0));
    let c = random_tensor(&mut rng, F, vec![3], (-1.0, 1.0));
    let out = eval(&v, &[x, c.clone()]);
    for e in 0..4 {
        let twice: Vec<f64> = c.data.iter().map(|v| 2.0 * v).collect();
        assert_eq!(slice0(&out[1], e).data, twice);
        assert_eq!(out[2].data[e], 0.5);
        assert_eq!(slice0(&out[3], e).data, c.data);
    }
}

#[test]
fn batch_symbol_avoids_existing_symbols() {
    let f = build("uses_b", &[("x", Shape(vec![Dim::sym("b")]))], |f, p| {
        vec![f.unary(oxla_core::ops::elementwise::UnaryOp::Sin, p[0])]
    });
    let v = vmap(&f, &[Some(0)]).unwrap();
    assert_eq!(
        v.shape(v.params[0]),
        &Shape(vec![Dim::sym("b1"), Dim::sym("b")])
    );
    check_vmap(&f, &[(-1.0, 1.0)], &[], &[Some(0)], 2, 31, &env_all(&f, 3));
}

#[test]
fn vmap_errors() {
    let f = logistic(&Dim::sym("n"));
    assert!(vmap(&f, &[Some(0)]).is_err(), "wrong number of in_axes");
    assert!(vmap(&f, &[None, None, None]).is_err(), "nothing batched");
    assert!(
        vmap(&f, &[Some(2), None, None]).is_err(),
        "axis 2 of a rank-1 param"
    );
    let err = vmap_axes(&f, &[Some(0), None, None], &[Some(1)]).unwrap_err();
    assert!(err.contains("out of range"), "{err}");
}

/// `t` with a batch axis of `examples.len()` inserted at `axis`, example
/// `b` at coordinate `b` of that axis.
fn stack_at(examples: &[Tensor], like: &Tensor, axis: usize) -> Tensor {
    let mut shape = like.shape.clone();
    shape.insert(axis, examples.len());
    let n: usize = shape.iter().product();
    let strides = like.strides();
    let data = (0..n)
        .map(|i| {
            let mut c = unravel(i, &shape);
            let b = c.remove(axis);
            let j: usize = c.iter().zip(&strides).map(|(c, s)| c * s).sum();
            examples[b].data[j]
        })
        .collect();
    Tensor::new(like.dtype, shape, data)
}

/// Example `b` of `t`, whose batch axis is `axis`.
fn take_at(t: &Tensor, axis: usize, b: usize) -> Tensor {
    let mut shape = t.shape.clone();
    shape.remove(axis);
    let strides = t.strides();
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|i| {
            let mut c = unravel(i, &shape);
            c.insert(axis, b);
            t.data[c.iter().zip(&strides).map(|(c, s)| c * s).sum::<usize>()]
        })
        .collect();
    Tensor::new(t.dtype, shape, data)
}

/// Where a batch axis goes in a value of rank `r`: variant 0 leading, 1
/// last, 2 in the middle.
fn axis_at(variant: usize, r: usize) -> usize {
    [0, r, r / 2][variant % 3]
}

/// `c` batched with its batch axes anywhere, at every binding of
/// `shape_envs`: each param's batch axis leading, last, in the middle, or
/// mixed (param `p` at `axis_at(p)`, the first param unbatched when there
/// are several), each result's at an `out_axes` position that varies, batch
/// sizes 0 to 3; against a loop over examples.
fn check_axes_anywhere(c: &Case, seed: u64) {
    let f = &c.f;
    let np = f.params.len();
    for (j, env) in shape_envs(f, seed).iter().enumerate() {
        for variant in 0..4 {
            let in_axes: Vec<Option<usize>> = f
                .params
                .iter()
                .enumerate()
                .map(|(p, v)| {
                    let r = f.shape(*v).rank();
                    match variant {
                        3 if p == 0 && np > 1 => None,
                        3 => Some(axis_at(p, r)),
                        _ => Some(axis_at(variant, r)),
                    }
                })
                .collect();
            let out_axes: Vec<Option<usize>> = f
                .outs
                .iter()
                .enumerate()
                .map(|(k, o)| Some(axis_at(j + variant + k, f.shape(*o).rank())))
                .collect();
            let batch = (j + variant) % 4;
            let ctx = format!(
                "vmap_axes({}, {in_axes:?}, {out_axes:?}) batch {batch} at {env:?}",
                f.name
            );
            let v = vmap_axes(f, &in_axes, &out_axes).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            verify::verify(&v).unwrap();
            let mut rng = rng(seed + 10 * j as u64 + variant as u64);
            // Unbatched params take one value; batched ones one per example.
            let shared = random_args_for(f, &c.ranges, &c.sep, &mut rng, env);
            let examples: Vec<Vec<Tensor>> = (0..batch)
                .map(|_| {
                    let e = random_args_for(f, &c.ranges, &c.sep, &mut rng, env);
                    e.into_iter()
                        .zip(&shared)
                        .zip(&in_axes)
                        .map(|((e, s), a)| if a.is_some() { e } else { s.clone() })
                        .collect()
                })
                .collect();
            let args: Vec<Tensor> = (0..np)
                .map(|p| match in_axes[p] {
                    None => shared[p].clone(),
                    Some(axis) => {
                        let per: Vec<Tensor> = examples.iter().map(|e| e[p].clone()).collect();
                        stack_at(&per, &shared[p], axis)
                    }
                })
                .collect();
            let out = eval(&v, &args);
            for k in 0..f.outs.len() {
                let mut shape = concrete(f.shape(f.outs[k]), env);
                shape.insert(out_axes[k].unwrap(), batch);
                assert_eq!(out[k].shape, shape, "{ctx}: output {k} shape");
            }
            for (b, e) in examples.iter().enumerate() {
                let want = eval(f, e);
                for k in 0..f.outs.len() {
                    let got = take_at(&out[k], out_axes[k].unwrap(), b);
                    assert_eq!(got.shape, want[k].shape, "{ctx}: output {k} shape");
                    assert_close(
                        &format!("{ctx}: output {k} example {b}"),
                        &got.data,
                        &want[k].data,
                        RTOL,
                    );
                }
            }
        }
    }
}

#[test]
fn unbatched_result_with_out_axes_none() {
    let f = logistic(&Dim::sym("n"));
    // `y` alone is batched; the result depends on it, so None is refused.
    let err = vmap_axes(&f, &[None, None, Some(0)], &[None]).unwrap_err();
    assert!(err.contains("depends on a batched argument"), "{err}");
}
