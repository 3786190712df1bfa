//! `conv` (`lax.conv_general_dilated` in the op's one layout): the fused
//! program (its im2col + gemm host step) against the reference
//! interpreter; JVP against central differences; VJP (JAX's transposes,
//! lhs and rhs) against the JVP through ⟨u, J v⟩ = ⟨Jᵀu, v⟩; `vmap` over
//! the input, the kernel and both against a loop; the text form.

use crate::common;

use common::*;
use oxla_core::ops::conv::{conv, dilated_params, ConvParams, Padding};
use oxla_core::transforms::{jvp, vjp, vmap};
use oxla_core::*;

fn ty(dims: &[usize]) -> Type {
    Type::new(
        DType::F64,
        Shape(dims.iter().map(|d| Dim::Const(*d as u64)).collect()),
    )
}

/// A case: input dimensions, kernel dimensions, parameters.
struct Case {
    name: &'static str,
    x: Vec<usize>,
    w: Vec<usize>,
    p: ConvParams,
}

/// The parameters of `lax.conv_general_dilated` for inputs of `x` and
/// kernels of `w` (NCHW / OIHW).
#[allow(clippy::too_many_arguments)]
fn params(
    x: &[usize],
    w: &[usize],
    strides: &[u64],
    padding: &[(i64, i64)],
    lhs_dilation: &[u64],
    rhs_dilation: &[u64],
    feature_groups: u64,
    batch_groups: u64,
) -> ConvParams {
    let d = |v: &[usize]| -> Vec<Dim> { v[2..].iter().map(|n| Dim::Const(*n as u64)).collect() };
    let mut p = dilated_params(
        &d(x),
        &d(w),
        strides,
        &Padding::Explicit(padding.to_vec()),
        lhs_dilation,
        rhs_dilation,
        feature_groups,
    )
    .unwrap();
    p.batch_groups = batch_groups;
    p
}

fn plain(x: &[usize], w: &[usize]) -> ConvParams {
    let s = x.len() - 2;
    params(
        x,
        w,
        &vec![1; s],
        &vec![(0, 0); s],
        &vec![1; s],
        &vec![1; s],
        1,
        1,
    )
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "2d_plain",
            x: vec![2, 3, 5, 4],
            w: vec![4, 3, 3, 2],
            p: plain(&[2, 3, 5, 4], &[4, 3, 3, 2]),
        },
        Case {
            name: "2d_strided_padded_dilated",
            x: vec![2, 2, 7, 6],
            w: vec![3, 2, 3, 3],
            p: params(
                &[2, 2, 7, 6],
                &[3, 2, 3, 3],
                &[2, 1],
                &[(1, 2), (2, 0)],
                &[1, 1],
                &[2, 1],
                1,
                1,
            ),
        },
        Case {
            name: "2d_lhs_dilation_negative_padding",
            x: vec![1, 2, 4, 5],
            w: vec![2, 2, 2, 3],
            p: params(
                &[1, 2, 4, 5],
                &[2, 2, 2, 3],
                &[1, 2],
                &[(-1, 1), (0, 1)],
                &[2, 1],
                &[1, 2],
                1,
                1,
            ),
        },
        Case {
            name: "1d_strided",
            x: vec![3, 2, 9],
            w: vec![2, 2, 4],
            p: params(&[3, 2, 9], &[2, 2, 4], &[3], &[(1, 1)], &[1], &[1], 1, 1),
        },
        Case {
            name: "3d",
            x: vec![1, 2, 4, 3, 4],
            w: vec![2, 2, 2, 2, 3],
            p: params(
                &[1, 2, 4, 3, 4],
                &[2, 2, 2, 2, 3],
                &[1, 1, 2],
                &[(1, 0), (0, 1), (1, 1)],
                &[1, 1, 1],
                &[1, 1, 1],
                1,
                1,
            ),
        },
        Case {
            name: "2d_feature_groups",
            x: vec![2, 4, 5, 5],
            w: vec![6, 2, 3, 3],
            p: params(
                &[2, 4, 5, 5],
                &[6, 2, 3, 3],
                &[1, 2],
                &[(1, 1), (1, 1)],
                &[1, 1],
                &[1, 1],
                2,
                1,
            ),
        },
        Case {
            name: "2d_depthwise",
            x: vec![1, 3, 4, 4],
            w: vec![3, 1, 2, 2],
            p: params(
                &[1, 3, 4, 4],
                &[3, 1, 2, 2],
                &[1, 1],
                &[(0, 1), (0, 1)],
                &[1, 1],
                &[1, 1],
                3,
                1,
            ),
        },
        Case {
            name: "2d_batch_groups",
            x: vec![4, 2, 5, 4],
            w: vec![6, 2, 2, 2],
            p: params(
                &[4, 2, 5, 4],
                &[6, 2, 2, 2],
                &[1, 1],
                &[(1, 0), (0, 0)],
                &[1, 1],
                &[1, 2],
                1,
                2,
            ),
        },
    ]
}

fn random(r: &mut rand::rngs::StdRng, dims: &[usize]) -> Tensor {
    random_tensor(r, DType::F64, dims.to_vec(), (-1.0, 1.0))
}

/// `conv(x, w)` alone.
fn conv_fn(c: &Case) -> Function {
    let mut f = Function::new(c.name);
    let x = f.add_param("x", ty(&c.x));
    let w = f.add_param("w", ty(&c.w));
    let y = conv(&mut f, x, w, c.p.clone());
    f.outs = vec![y];
    verify::verify(&f).unwrap();
    f
}

/// The fused program (im2col + gemm) against the reference interpreter.
fn run_both(f: &Function, args: &[Tensor]) -> Vec<Tensor> {
    let want = eval(f, args);
    let p = kernel::fusion::fuse(f).unwrap();
    let got = run_program(&p, args);
    assert_tensors_close(&format!("{}: program", f.name), &got, &want, 1e-12);
    want
}

#[test]
fn conv_program_matches_the_interpreter() {
    let mut r = rng(1);
    for c in cases() {
        let f = conv_fn(&c);
        let args = [random(&mut r, &c.x), random(&mut r, &c.w)];
        run_both(&f, &args);
    }
}

/// A direct sum over the definition, for one case: output (n, o, i, j) of
/// a strided, padded 2-D convolution.
#[test]
fn conv_reference_is_the_definition() {
    let c = &cases()[1];
    let mut r = rng(2);
    let (x, w) = (random(&mut r, &c.x), random(&mut r, &c.w));
    let out = eval(&conv_fn(c), &[x.clone(), w.clone()]).remove(0);
    let [_, ci, h, wd] = c.x[..] else { panic!() };
    let [_, _, kh, kw] = c.w[..] else { panic!() };
    let at = |t: &Tensor, i: [usize; 4]| {
        let s = &t.shape;
        t.data[((i[0] * s[1] + i[1]) * s[2] + i[2]) * s[3] + i[3]]
    };
    for n in 0..out.shape[0] {
        for o in 0..out.shape[1] {
            for i in 0..out.shape[2] {
                for j in 0..out.shape[3] {
                    let mut sum = 0.0;
                    for c_ in 0..ci {
                        for a in 0..kh {
                            for b in 0..kw {
                                // strides (2, 1), low padding (1, 2), rhs dilation (2, 1).
                                let y = (i * 2 + a * 2) as i64 - 1;
                                let z = (j + b) as i64 - 2;
                                if y < 0 || z < 0 || y >= h as i64 || z >= wd as i64 {
                                    continue;
                                }
                                sum +=
                                    at(&x, [n, c_, y as usize, z as usize]) * at(&w, [o, c_, a, b]);
                            }
                        }
                    }
                    let got = at(&out, [n, o, i, j]);
                    assert!(
                        (got - sum).abs() < 1e-12,
                        "({n},{o},{i},{j}): {got} vs {sum}"
                    );
                }
            }
        }
    }
}

/// JVP against central differences, and VJP (both transposes) against the
/// JVP: ⟨u, J v⟩ = ⟨Jᵀ u, v⟩. The VJP runs as a fused program too.
#[test]
fn conv_jvp_and_transposes() {
    let mut r = rng(3);
    for c in cases() {
        let f = conv_fn(&c);
        let args = vec![random(&mut r, &c.x), random(&mut r, &c.w)];
        let dir = vec![random(&mut r, &c.x), random(&mut r, &c.w)];
        let jf = jvp(&f);
        verify::verify(&jf).unwrap();
        let mut jargs = args.clone();
        jargs.extend(dir.iter().cloned());
        let jout = eval(&jf, &jargs);
        let fd = fd_jvp(&f, &args, &dir, 1e-6);
        assert_close(&format!("{}: jvp", c.name), &jout[1].data, &fd[0], 1e-7);

        let vf = vjp(&f);
        verify::verify(&vf).unwrap();
        let u = random(&mut r, &jout[0].shape);
        let mut vargs = args.clone();
        vargs.push(u.clone());
        let vout = run_both(&vf, &vargs);
        let cts = &vout[vout.len() - 2..];
        assert_eq!(cts[0].shape, c.x, "{}: lhs cotangent shape", c.name);
        assert_eq!(cts[1].shape, c.w, "{}: rhs cotangent shape", c.name);
        let lhs = dotv(&u.data, &jout[1].data);
        let rhs = inner(cts, &dir);
        assert_close(
            &format!("{}: <u, Jv> = <J^T u, v>", c.name),
            &[lhs],
            &[rhs],
            1e-12,
        );
    }
}

/// Second order: the VJP's own JVP against central differences of the VJP
/// (the transposes of the transposes, batch groups included).
#[test]
fn conv_second_derivatives() {
    let mut r = rng(4);
    for c in cases() {
        let f = conv_fn(&c);
        let vf = vjp(&f);
        let out = eval(&f, &[random(&mut r, &c.x), random(&mut r, &c.w)]).remove(0);
        let args = vec![
            random(&mut r, &c.x),
            random(&mut r, &c.w),
            random(&mut r, &out.shape),
        ];
        let dir = vec![
            random(&mut r, &c.x),
            random(&mut r, &c.w),
            random(&mut r, &out.shape),
        ];
        let jf = jvp(&vf);
        verify::verify(&jf).unwrap();
        let mut jargs = args.clone();
        jargs.extend(dir.iter().cloned());
        let jout = eval(&jf, &jargs);
        let fd = fd_jvp(&vf, &args, &dir, 1e-6);
        let n = vf.outs.len();
        for k in 0..n {
            assert_close(
                &format!("{}: jvp of vjp, result {k}", c.name),
                &jout[n + k].data,
                &fd[k],
                1e-7,
            );
        }
    }
}

/// `vmap` over the input, the kernel, and both, against a loop.
#[test]
fn vmap_of_conv_is_a_loop_over_examples() {
    let mut r = rng(5);
    let b = 3;
    for c in cases() {
        let f = conv_fn(&c);
        for axes in [[Some(0), None], [None, Some(0)], [Some(0), Some(0)]] {
            let bf = vmap(&f, &axes).unwrap();
            verify::verify(&bf).unwrap();
            let stacked = |dims: &[usize], on: bool, r: &mut rand::rngs::StdRng| {
                if on {
                    let mut d = vec![b];
                    d.extend(dims);
                    random(r, &d)
                } else {
                    random(r, dims)
                }
            };
            let xs = stacked(&c.x, axes[0].is_some(), &mut r);
            let ws = stacked(&c.w, axes[1].is_some(), &mut r);
            let got = run_both(&bf, &[xs.clone(), ws.clone()]).remove(0);
            for e in 0..b {
                let x = if axes[0].is_some() {
                    slice0(&xs, e)
                } else {
                    xs.clone()
                };
                let w = if axes[1].is_some() {
                    slice0(&ws, e)
                } else {
                    ws.clone()
                };
                let one = eval(&f, &[x, w]).remove(0);
                assert_close(
                    &format!("{} {axes:?}: example {e}", c.name),
                    &slice0(&got, e).data,
                    &one.data,
                    1e-12,
                );
            }
        }
    }
}

/// `vmap` of the VJP (the transposes of a conv with leading axes, summed
/// over the axes an operand lacks) and `vmap` of `vmap`, against loops.
#[test]
fn vmap_of_vjp_and_nested_vmap() {
    let mut r = rng(6);
    let b = 2;
    let with_batch = |dims: &[usize]| {
        let mut d = vec![b];
        d.extend(dims);
        d
    };
    for c in cases() {
        let f = conv_fn(&c);
        let vf = vjp(&f);
        let out_dims = eval(&f, &[random(&mut r, &c.x), random(&mut r, &c.w)])
            .remove(0)
            .shape;
        for axes in [
            [Some(0), None, Some(0)],
            [None, Some(0), Some(0)],
            [Some(0), Some(0), None],
        ] {
            let bf = vmap(&vf, &axes).unwrap();
            verify::verify(&bf).unwrap();
            let dims = [&c.x, &c.w, &out_dims];
            let args: Vec<Tensor> = (0..3)
                .map(|k| {
                    if axes[k].is_some() {
                        random(&mut r, &with_batch(dims[k]))
                    } else {
                        random(&mut r, dims[k])
                    }
                })
                .collect();
            let got = run_both(&bf, &args);
            for e in 0..b {
                let one_args: Vec<Tensor> = (0..3)
                    .map(|k| {
                        if axes[k].is_some() {
                            slice0(&args[k], e)
                        } else {
                            args[k].clone()
                        }
                    })
                    .collect();
                let one = eval(&vf, &one_args);
                for (k, o) in one.iter().enumerate() {
                    assert_close(
                        &format!("{} {axes:?}: example {e}, result {k}", c.name),
                        &slice0(&got[k], e).data,
                        &o.data,
                        1e-12,
                    );
                }
            }
        }
        // vmap of vmap: the input batched twice, the kernel once (outer).
        let inner = vmap(&f, &[Some(0), None]).unwrap();
        let outer = vmap(&inner, &[Some(0), Some(0)]).unwrap();
        let xs = random(&mut r, &with_batch(&with_batch(&c.x)));
        let ws = random(&mut r, &with_batch(&c.w));
        let got = run_both(&outer, &[xs.clone(), ws.clone()]).remove(0);
        for e in 0..b {
            for g in 0..b {
                let one = eval(&f, &[slice0(&slice0(&xs, e), g), slice0(&ws, e)]).remove(0);
                assert_close(
                    &format!("{}: nested vmap ({e}, {g})", c.name),
                    &slice0(&slice0(&got, e), g).data,
                    &one.data,
                    1e-12,
                );
            }
        }
    }
}

/// Sizes known only at the call (batch, features, spatial and window
/// sizes all symbols): the output length is a derived dimension
/// (`(D|K|s|lo|hi|ld|rd)`), the transposes take the operands' lengths.
#[test]
fn conv_with_symbolic_sizes() {
    let sym = |names: &[&str]| {
        Type::new(
            DType::F64,
            Shape(names.iter().map(|n| Dim::sym(n)).collect()),
        )
    };
    let mut f = Function::new("symbolic");
    let x = f.add_param("x", sym(&["n", "c", "h", "v"]));
    let w = f.add_param("w", sym(&["o", "c", "kh", "kv"]));
    let sp = |names: &[&str]| -> Vec<Dim> { names.iter().map(|n| Dim::sym(n)).collect() };
    let p = dilated_params(
        &sp(&["h", "v"]),
        &sp(&["kh", "kv"]),
        &[2, 1],
        &Padding::Explicit(vec![(1, 1), (0, 2)]),
        &[1, 1],
        &[1, 2],
        1,
    )
    .unwrap();
    let y = conv(&mut f, x, w, p);
    f.outs = vec![y];
    verify::verify(&f).unwrap();
    assert!(f.shape(y).0[2].to_string().contains('|'), "{}", f.ty(y));
    let vf = vjp(&f);
    verify::verify(&vf).unwrap();
    let mut r = rng(9);
    for (xd, wd) in [([2, 3, 7, 6], [4, 3, 3, 2]), ([1, 2, 4, 5], [2, 2, 2, 3])] {
        let (xt, wt) = (random(&mut r, &xd), random(&mut r, &wd));
        let y = run_both(&f, &[xt.clone(), wt.clone()]).remove(0);
        let fixed = conv_fn(&Case {
            name: "fixed",
            x: xd.to_vec(),
            w: wd.to_vec(),
            p: params(&xd, &wd, &[2, 1], &[(1, 1), (0, 2)], &[1, 1], &[1, 2], 1, 1),
        });
        let want = eval(&fixed, &[xt.clone(), wt.clone()]).remove(0);
        assert_eq!(y.shape, want.shape);
        assert_close("symbolic conv", &y.data, &want.data, 1e-14);
        let u = random(&mut r, &y.shape);
        let got = run_both(&vf, &[xt.clone(), wt.clone(), u.clone()]);
        let want = eval(&vjp(&fixed), &[xt, wt, u]);
        for k in 1..3 {
            assert_close("symbolic vjp", &got[k].data, &want[k].data, 1e-12);
        }
    }
}

/// "SAME" padding over sizes known only at the call (stride 2, a dilated
/// window): the low padding computed at the call, equal to the constant
/// padding of the same sizes, through the transposes too.
#[test]
fn same_padding_at_the_call() {
    let sym = |names: &[&str]| {
        Type::new(
            DType::F64,
            Shape(names.iter().map(|n| Dim::sym(n)).collect()),
        )
    };
    let build = |x_ty: Type, w_ty: Type| {
        let mut f = Function::new("same");
        let x = f.add_param("x", x_ty);
        let w = f.add_param("w", w_ty);
        let (xs, ws) = (f.shape(x).0[2..].to_vec(), f.shape(w).0[2..].to_vec());
        let p = dilated_params(&xs, &ws, &[2, 3], &Padding::Same, &[1, 1], &[1, 2], 1).unwrap();
        let y = conv(&mut f, x, w, p);
        f.outs = vec![y];
        verify::verify(&f).unwrap();
        f
    };
    let f = build(sym(&["n", "c", "h", "v"]), sym(&["o", "c", "kh", "kv"]));
    let text = text::print(&f);
    assert!(text.contains("same:"), "{text}");
    assert_eq!(text::print(&text::parse(&text).unwrap()), text);
    let vf = vjp(&f);
    let mut r = rng(10);
    for (xd, wd) in [([2, 2, 7, 8], [3, 2, 3, 2]), ([1, 3, 6, 5], [2, 3, 2, 3])] {
        let fixed = build(ty(&xd), ty(&wd));
        let (xt, wt) = (random(&mut r, &xd), random(&mut r, &wd));
        let y = run_both(&f, &[xt.clone(), wt.clone()]).remove(0);
        let want = eval(&fixed, &[xt.clone(), wt.clone()]).remove(0);
        assert_eq!(y.shape, want.shape);
        assert_close("same at the call", &y.data, &want.data, 1e-14);
        let u = random(&mut r, &y.shape);
        let got = run_both(&vf, &[xt.clone(), wt.clone(), u.clone()]);
        let want = eval(&vjp(&fixed), &[xt, wt, u]);
        for k in 1..3 {
            assert_close("same vjp", &got[k].data, &want[k].data, 1e-12);
        }
    }
}

#[test]
fn conv_text_round_trips() {
    for c in cases() {
        let f = conv_fn(&c);
        let text = text::print(&f);
        assert!(text.contains("conv["), "{text}");
        let g = text::parse(&text).unwrap();
        assert_eq!(text::print(&g), text);
        assert_eq!(g.eqns[0].op, f.eqns[0].op);
        // With leading axes (vmap's) and through the transposes.
        let b = vjp(&vmap(&f, &[Some(0), None]).unwrap());
        let text = text::print(&b);
        assert_eq!(text::print(&text::parse(&text).unwrap()), text);
    }
}

#[test]
fn conv_shape_errors_name_the_mismatch() {
    let mut f = Function::new("bad");
    let x = f.add_param("x", ty(&[1, 3, 4, 4]));
    let w = f.add_param("w", ty(&[2, 2, 3, 3]));
    let e = f
        .push(Op::Conv(plain(&[1, 3, 4, 4], &[2, 2, 3, 3])), &[x, w])
        .unwrap_err();
    assert!(e.contains("3 features"), "{e}");
    let e = f
        .push(Op::Conv(plain(&[1, 3, 4], &[2, 2, 3])), &[x, w])
        .unwrap_err();
    assert!(e.contains("rank 3"), "{e}");
}

// ---- pooling (`ops::pool`, built on conv) -----------------------------------

use oxla_core::ops::pool::{reduce_window, WindowReduce};
use oxla_core::transforms::grad;

/// `sum(reduce_window(x)²)` (a scalar for gradients) and the pool itself.
fn pool_fns(
    dims: &[usize],
    how: WindowReduce,
    window: &[u64],
    strides: &[u64],
    padding: &Padding,
) -> (Function, Function) {
    let make = |square: bool| {
        let mut f = Function::new("pool");
        let x = f.add_param("x", ty(dims));
        let y = reduce_window(&mut f, x, how, window, strides, padding).unwrap();
        f.outs = vec![if square {
            let y2 = f.mul(y, y);
            sum_all(&mut f, y2)
        } else {
            y
        }];
        verify::verify(&f).unwrap();
        f
    };
    (make(false), make(true))
}

/// Input dimensions, window, strides, padding.
type PoolCase = (Vec<usize>, Vec<u64>, Vec<u64>, Padding);

fn pool_cases() -> Vec<PoolCase> {
    vec![
        (
            vec![2, 3, 6, 6],
            vec![1, 1, 2, 2],
            vec![1, 1, 2, 2],
            Padding::Valid,
        ),
        (
            vec![1, 2, 5, 4],
            vec![1, 1, 3, 3],
            vec![1, 1, 2, 1],
            Padding::Same,
        ),
        (
            vec![2, 5, 3],
            vec![1, 2, 1],
            vec![1, 2, 1],
            Padding::Explicit(vec![(0, 0), (1, 0), (0, 0)]),
        ),
    ]
}

/// Each window's reduction by a direct loop over it (the definition).
fn pool_by_loop(
    x: &Tensor,
    how: WindowReduce,
    window: &[u64],
    strides: &[u64],
    pads: &[(i64, i64)],
    out: &[usize],
) -> Vec<f64> {
    let n: usize = out.iter().product();
    let taps: Vec<usize> = window.iter().map(|w| *w as usize).collect();
    let t: usize = taps.iter().product();
    (0..n)
        .map(|e| {
            let o = oxla_core::tensor::unravel(e, out);
            let mut acc = match how {
                WindowReduce::Max => f64::NEG_INFINITY,
                _ => 0.0,
            };
            for k in 0..t {
                let tap = oxla_core::tensor::unravel(k, &taps);
                let mut idx = 0;
                let mut inside = true;
                for a in 0..x.shape.len() {
                    let p = (o[a] * strides[a] as usize + tap[a]) as i64 - pads[a].0;
                    if p < 0 || p >= x.shape[a] as i64 {
                        inside = false;
                    }
                    idx = idx * x.shape[a] + p.max(0) as usize;
                }
                if inside {
                    let v = x.data[idx];
                    acc = match how {
                        WindowReduce::Max => acc.max(v),
                        _ => acc + v,
                    };
                }
            }
            if how == WindowReduce::Mean {
                acc / t as f64
            } else {
                acc
            }
        })
        .collect()
}

#[test]
fn pools_match_their_definition_and_the_program() {
    let mut r = rng(7);
    for (dims, window, strides, padding) in pool_cases() {
        for how in [WindowReduce::Sum, WindowReduce::Max, WindowReduce::Mean] {
            let (f, _) = pool_fns(&dims, how, &window, &strides, &padding);
            let x = random(&mut r, &dims);
            let y = run_both(&f, std::slice::from_ref(&x)).remove(0);
            let d: Vec<Dim> = dims.iter().map(|d| Dim::Const(*d as u64)).collect();
            let win: Vec<Dim> = window.iter().map(|d| Dim::Const(*d)).collect();
            let pads = padding.pairs(&d, &win, &strides).unwrap();
            let want = pool_by_loop(&x, how, &window, &strides, &pads, &y.shape);
            assert_close(&format!("{how:?} {dims:?}"), &y.data, &want, 1e-12);
        }
    }
}

#[test]
fn pool_gradients_against_finite_differences_and_vmap() {
    let mut r = rng(8);
    for (dims, window, strides, padding) in pool_cases() {
        for how in [WindowReduce::Sum, WindowReduce::Max, WindowReduce::Mean] {
            let (f, s) = pool_fns(&dims, how, &window, &strides, &padding);
            // Distinct values (no ties): the max is differentiable.
            let x = random(&mut r, &dims);
            let g = grad(&s, &[0]).unwrap();
            let got = run_both(&g, std::slice::from_ref(&x));
            let fd = fd_grad(&s, std::slice::from_ref(&x), 0, 0, 1e-6);
            assert_close(&format!("grad {how:?} {dims:?}"), &got[0].data, &fd, 1e-7);
            let b = vmap(&f, &[Some(0)]).unwrap();
            let mut bd = vec![2];
            bd.extend(&dims);
            let xs = random(&mut r, &bd);
            let got = run_both(&b, std::slice::from_ref(&xs)).remove(0);
            for e in 0..2 {
                let one = eval(&f, &[slice0(&xs, e)]).remove(0);
                assert_close(
                    &format!("vmap {how:?}"),
                    &slice0(&got, e).data,
                    &one.data,
                    1e-12,
                );
            }
        }
    }
}

/// Ties: the whole cotangent of a window goes to its first maximum
/// (row-major), as `select_and_scatter_add`.
#[test]
fn max_pool_gradient_goes_to_the_first_maximum() {
    let (f, _) = pool_fns(
        &[1, 1, 2, 4],
        WindowReduce::Max,
        &[1, 1, 2, 2],
        &[1, 1, 2, 2],
        &Padding::Valid,
    );
    let x = Tensor::new(
        DType::F64,
        vec![1, 1, 2, 4],
        vec![1.0, 3.0, 2.0, 2.0, 3.0, 3.0, 2.0, 2.0],
    );
    let vf = vjp(&f);
    let ct = Tensor::new(DType::F64, vec![1, 1, 1, 2], vec![10.0, 20.0]);
    let out = run_both(&vf, &[x, ct]);
    assert_eq!(out[0].data, [3.0, 2.0]);
    assert_eq!(out[1].data, [0.0, 10.0, 20.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
}
