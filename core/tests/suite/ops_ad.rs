//! Automatic differentiation of every op: JVP against central finite
//! differences, VJP against JVP through ⟨u, J v⟩ = ⟨Jᵀu, v⟩, `grad` against
//! finite differences per coordinate, and higher derivatives by composition.

use crate::common;

use common::*;
use oxla_core::ops::elementwise::UnaryOp;
use oxla_core::transforms::{grad, jvp, value_and_grad, vjp};
use oxla_core::*;

/// The difference step for f64: the central difference's truncation error
/// is h²·|f'''|/6 ≲ 1e-12 and its rounding error eps·|f|/h ≈ 2e-10·|f|
/// for the values here (|f| ≲ 10² at the largest shapes), both far
/// below `FD_RTOL`.
const H: f64 = 1e-6;
const FD_RTOL: f64 = 1e-6;

/// Every derivative element finite; where a primal output element is
/// infinite (a max or min over no elements) its tangent exactly 0: the
/// value is a constant there, and a 0/0 would be garbage.
#[track_caller]
fn assert_sane_tangents(ctx: &str, primal: &[Tensor], tangents: &[Tensor]) {
    for (k, (p, t)) in primal.iter().zip(tangents).enumerate() {
        assert_eq!(p.shape, t.shape, "{ctx}: output {k} tangent shape");
        for (i, (pv, tv)) in p.data.iter().zip(&t.data).enumerate() {
            if pv.is_infinite() {
                assert_eq!(*tv, 0.0, "{ctx}: output {k}[{i}] = {pv}: tangent {tv}");
            } else {
                assert!(tv.is_finite(), "{ctx}: output {k}[{i}]: tangent {tv}");
            }
        }
    }
}

/// (a) JVP vs finite differences, (b) VJP vs JVP, (c) grad and
/// value_and_grad of a weighted sum vs finite differences, with the
/// symbols of `case` bound by `env`.
fn check_case(case: &Case, seed: u64, env: &std::collections::BTreeMap<String, usize>) {
    let f = &case.f;
    let name = &format!("{} at {env:?}", case.name);
    let mut rng = rng(seed);
    let env = env.clone();
    let args = random_args(case, &mut rng, &env);
    let primal = eval(f, &args);
    let np = f.params.len();
    let nout = f.outs.len();
    for (k, (o, p)) in f.outs.iter().zip(&primal).enumerate() {
        assert_eq!(
            p.shape,
            concrete(f.shape(*o), &env),
            "{name}: output {k} shape"
        );
    }

    // (a) JVP along random directions.
    let jf = jvp(f);
    verify::verify(&jf).unwrap();
    assert_eq!(jf.params.len(), 2 * np, "{name}: jvp params");
    assert_eq!(jf.outs.len(), 2 * nout, "{name}: jvp outputs");
    for (k, p) in f.param_names.iter().enumerate() {
        assert_eq!(
            jf.param_names[np + k],
            format!("t_{p}"),
            "{name}: tangent names"
        );
    }
    let mut last = None;
    for _ in 0..2 {
        let dir = random_like(&mut rng, &args);
        let mut jargs = args.clone();
        jargs.extend(dir.iter().cloned());
        let jout = eval(&jf, &jargs);
        assert_tensors_close(
            &format!("{name}: jvp primal"),
            &jout[..nout],
            &primal,
            1e-14,
        );
        let mut fd = fd_jvp(f, &args, &dir, H);
        // Differences of an infinite (constant) value are NaN; its
        // derivative is 0 (`assert_sane_tangents` checks it exactly).
        for (d, p) in fd.iter_mut().zip(&primal) {
            for (d, p) in d.iter_mut().zip(&p.data) {
                if p.is_infinite() {
                    *d = 0.0;
                }
            }
        }
        for k in 0..nout {
            assert_eq!(
                jout[nout + k].shape,
                primal[k].shape,
                "{name}: tangent shape"
            );
            assert_close(
                &format!("{name}: jvp output {k} vs finite differences"),
                &jout[nout + k].data,
                &fd[k],
                FD_RTOL,
            );
        }
        assert_sane_tangents(&format!("{name}: jvp"), &primal, &jout[nout..]);
        last = Some((dir, jout[nout..].to_vec()));
    }

    // (b) VJP: <u, J v> = <J^T u, v>.
    let (dir, jv) = last.unwrap();
    let vf = vjp(f);
    verify::verify(&vf).unwrap();
    assert_eq!(vf.params.len(), np + nout, "{name}: vjp params");
    assert_eq!(vf.outs.len(), nout + np, "{name}: vjp outputs");
    let u = random_for_outputs(&mut rng, f, &env);
    let mut vargs = args.clone();
    vargs.extend(u.iter().cloned());
    let vout = eval(&vf, &vargs);
    assert_tensors_close(
        &format!("{name}: vjp primal"),
        &vout[..nout],
        &primal,
        1e-14,
    );
    for i in 0..np {
        assert_eq!(
            vout[nout + i].shape,
            args[i].shape,
            "{name}: cotangent shape"
        );
        assert!(
            vout[nout + i].data.iter().all(|v| v.is_finite()),
            "{name}: cotangent {i} not finite: {:?}",
            vout[nout + i].data
        );
    }
    let lhs = inner(&u, &jv);
    let rhs = inner(&vout[nout..], &dir);
    assert_close(
        &format!("{name}: <u, Jv> = <J^T u, v>"),
        &[rhs],
        &[lhs],
        1e-12,
    );

    // (c) grad of a scalar composition, per coordinate.
    let g = weighted_sum(f);
    let wrt: Vec<usize> = (0..np).collect();
    let gf = grad(&g, &wrt).unwrap();
    let mut gargs = args.clone();
    gargs.extend(random_for_outputs(&mut rng, f, &env));
    let gout = eval(&gf, &gargs);
    assert_eq!(gout.len(), np);
    for (i, gi) in gout.iter().enumerate() {
        assert_eq!(gi.shape, args[i].shape, "{name}: grad {i} shape");
        assert!(
            gi.data.iter().all(|v| v.is_finite()),
            "{name}: grad {i} not finite: {:?}",
            gi.data
        );
        let fd = fd_grad(&g, &gargs, i, 0, H);
        assert_close(
            &format!(
                "{name}: grad wrt `{}` vs finite differences",
                f.param_names[i]
            ),
            &gi.data,
            &fd,
            FD_RTOL,
        );
    }
    let vg = value_and_grad(&g, &wrt).unwrap();
    let vgout = eval(&vg, &gargs);
    assert_eq!(vgout.len(), np + 1);
    assert_tensors_close(
        &format!("{name}: value_and_grad value"),
        &vgout[..1],
        &eval(&g, &gargs),
        1e-14,
    );
    assert_tensors_close(
        &format!("{name}: value_and_grad grads"),
        &vgout[1..],
        &gout,
        1e-14,
    );
}

fn check_family(family: &str) {
    let cases: Vec<Case> = catalog(&Dim::sym("n"))
        .into_iter()
        .filter(|c| c.family == family)
        .collect();
    assert!(!cases.is_empty());
    for (i, c) in cases.iter().enumerate() {
        // Every size of `SHAPE_SIZES` for each symbol (0 and 1 included).
        for (j, env) in shape_envs(&c.f, i as u64).iter().enumerate() {
            check_case(c, 1000 + 10 * i as u64 + j as u64, env);
        }
    }
}

// One test per op family of the catalog.
common::family_tests!(check_family);

// ---- higher derivatives ---------------------------------------------------

fn scalar_fn(name: &str, body: impl FnOnce(&mut Function, Var) -> Var) -> Function {
    build(name, &[("x", Shape::scalar())], |f, p| vec![body(f, p[0])])
}

fn at(f: &Function, x: f64) -> f64 {
    eval(f, &[Tensor::scalar(F, x)])[0].data[0]
}

/// f, f', f'', f''' by repeated `grad`.
fn derivatives(f: &Function) -> Vec<Function> {
    let mut ds = vec![f.clone()];
    for _ in 0..3 {
        let d = grad(ds.last().unwrap(), &[0]).unwrap();
        verify::verify(&d).unwrap();
        ds.push(d);
    }
    ds
}

/// Each derivative against a central difference of the one below it, and
/// forward-over-reverse (`jvp` of the derivative, tangent 1) against the
/// next `grad`.
fn check_against_fd(ds: &[Function], xs: &[f64]) {
    let fwd: Vec<Function> = ds[1..].iter().map(jvp).collect();
    for &x in xs {
        for k in 1..ds.len() - 1 {
            let t = eval(&fwd[k - 1], &[Tensor::scalar(F, x), Tensor::scalar(F, 1.0)]);
            assert_close(
                &format!("{}: jvp of derivative {k} at {x}", ds[0].name),
                &t[1].data,
                &[at(&ds[k + 1], x)],
                1e-13,
            );
        }
        for k in 1..ds.len() {
            let h = 1e-5;
            let fd = (at(&ds[k - 1], x + h) - at(&ds[k - 1], x - h)) / (2.0 * h);
            assert_close(
                &format!("{}: derivative {k} at {x}", ds[0].name),
                &[at(&ds[k], x)],
                &[fd],
                1e-6,
            );
        }
    }
}

#[test]
fn sin_third_derivative() {
    let ds = derivatives(&scalar_fn("sin", |f, x| f.unary(UnaryOp::Sin, x)));
    let x = 1.0f64;
    let want = [x.sin(), x.cos(), -x.sin(), -x.cos()];
    for (k, w) in want.iter().enumerate() {
        assert_close(
            &format!("sin derivative {k}"),
            &[at(&ds[k], x)],
            &[*w],
            1e-14,
        );
    }
    check_against_fd(&ds, &[-1.3, 0.2, 2.5]);
}

#[test]
fn tanh_gauss_derivatives() {
    let f = scalar_fn("tanh_gauss", |f, x| {
        let t = f.unary(UnaryOp::Tanh, x);
        let x2 = f.mul(x, x);
        let m = f.neg(x2);
        let e = f.unary(UnaryOp::Exp, m);
        f.mul(t, e)
    });
    let ds = derivatives(&f);
    for x in [-1.1f64, 0.3, 0.9] {
        let (t, e) = (x.tanh(), (-x * x).exp());
        let d1 = (1.0 - t * t) * e - 2.0 * x * t * e;
        assert_close("tanh_gauss'", &[at(&ds[1], x)], &[d1], 1e-13);
    }
    check_against_fd(&ds, &[-1.1, 0.3, 0.9]);
}

#[test]
fn cube_over_sqrt_derivatives() {
    let f = scalar_fn("cube_over_sqrt", |f, x| {
        let c = f.unary(UnaryOp::Powi(3), x);
        let r = f.unary(UnaryOp::Sqrt, x);
        f.div(c, r)
    });
    let ds = derivatives(&f);
    // x^3 / sqrt(x) = x^2.5.
    for x in [0.5f64, 1.0, 1.7] {
        let want = [
            x.powf(2.5),
            2.5 * x.powf(1.5),
            3.75 * x.powf(0.5),
            1.875 * x.powf(-0.5),
        ];
        for (k, w) in want.iter().enumerate() {
            assert_close(
                &format!("(x^3/sqrt x) derivative {k} at {x}"),
                &[at(&ds[k], x)],
                &[*w],
                1e-12,
            );
        }
    }
    check_against_fd(&ds, &[0.6, 1.3]);
}

#[test]
fn powi_second_derivatives() {
    for n in [-2, 0, 1, 2, 3] {
        let ds = derivatives(&scalar_fn("p", |f, x| f.unary(UnaryOp::Powi(n), x)));
        let x = 1.3f64;
        let nf = n as f64;
        let want = [
            x.powi(n),
            nf * x.powi(n - 1),
            nf * (nf - 1.0) * x.powi(n - 2),
            nf * (nf - 1.0) * (nf - 2.0) * x.powi(n - 3),
        ];
        for (k, w) in want.iter().enumerate() {
            assert_close(
                &format!("powi[{n}] derivative {k}"),
                &[at(&ds[k], x)],
                &[*w],
                1e-12,
            );
        }
    }
}

/// Hessian-vector products three ways: forward-over-reverse (`jvp` of
/// `grad`), reverse-over-reverse (`grad` of ⟨grad, v⟩), finite differences of
/// `grad`; of a weighted sum of the outputs of every catalog case (weights
/// held fixed), at every size of `shape_envs`.
#[test]
fn hessian_vector_products() {
    let n = Dim::sym("n");
    for (i, case) in catalog(&n).iter().enumerate() {
        // g(params, weights): Hessians with respect to the params.
        let f = weighted_sum(&case.f);
        let np = case.f.params.len();
        let wrt: Vec<usize> = (0..np).collect();
        let g = grad(&f, &wrt).unwrap();
        let fg = jvp(&g);
        // Reverse over reverse: grad_x <grad g(x, w), v>.
        let mut h = Function::new("hv");
        let xs: Vec<Var> = f
            .params
            .iter()
            .zip(&f.param_names)
            .map(|(p, n)| h.add_param(n, f.ty(*p).clone()))
            .collect();
        let vs: Vec<Var> = f.params[..np]
            .iter()
            .zip(&f.param_names)
            .map(|(p, n)| h.add_param(&format!("v_{n}"), f.ty(*p).clone()))
            .collect();
        let gs = inline(&mut h, &g, &xs);
        let mut acc = None;
        for (gi, vi) in gs.iter().zip(&vs) {
            let m = h.mul(*gi, *vi);
            let s = sum_all(&mut h, m);
            acc = Some(match acc {
                Some(a) => h.add(a, s),
                None => s,
            });
        }
        h.outs = vec![acc.unwrap()];
        let hr = grad(&h, &wrt).unwrap();
        for (e, env) in shape_envs(&case.f, i as u64).iter().enumerate() {
            let name = format!("{} at {env:?}", case.name);
            let mut rng = rng(50 + 10 * i as u64 + e as u64);
            let mut x = random_args(case, &mut rng, env);
            x.extend(random_for_outputs(&mut rng, &case.f, env));
            let v = random_like(&mut rng, &x[..np]);
            // The direction: v in the params, 0 in the weights.
            let mut dir = v.clone();
            dir.extend(
                x[np..]
                    .iter()
                    .map(|w| Tensor::new(w.dtype, w.shape.clone(), vec![0.0; w.numel()])),
            );

            // Forward over reverse.
            let mut a = x.clone();
            a.extend(dir.iter().cloned());
            let hv_fwd = eval(&fg, &a)[np..].to_vec();

            let mut b = x.clone();
            b.extend(v.iter().cloned());
            let hv_rev = eval(&hr, &b);

            let fd = fd_jvp(&g, &x, &dir, H);
            for k in 0..np {
                assert_close(
                    &format!("{name}: Hv forward-over-reverse vs reverse-over-reverse, param {k}"),
                    &hv_fwd[k].data,
                    &hv_rev[k].data,
                    1e-12,
                );
                assert_close(
                    &format!("{name}: Hv vs finite differences of grad, param {k}"),
                    &hv_fwd[k].data,
                    &fd[k],
                    FD_RTOL,
                );
            }
        }
    }
}

/// `jvp(vjp(f))` against finite differences of `vjp(f)` along a direction
/// in both primals and cotangents: the JVPs of the transpose rules, for
/// every catalog case at every size of `shape_envs`.
#[test]
fn jvp_of_vjp() {
    let n = Dim::sym("n");
    for (i, case) in catalog(&n).iter().enumerate() {
        let vf = vjp(&case.f);
        let jvf = jvp(&vf);
        verify::verify(&jvf).unwrap();
        for (e, env) in shape_envs(&case.f, i as u64).iter().enumerate() {
            let name = format!("{} at {env:?}", case.name);
            let mut rng = rng(70 + 10 * i as u64 + e as u64);
            let mut a = random_args(case, &mut rng, env);
            a.extend(random_for_outputs(&mut rng, &case.f, env));
            let d = random_like(&mut rng, &a);
            let mut ja = a.clone();
            ja.extend(d.iter().cloned());
            let out = eval(&jvf, &ja);
            let nv = vf.outs.len();
            assert_eq!(out.len(), 2 * nv);
            assert_sane_tangents(&format!("{name}: jvp(vjp)"), &out[..nv], &out[nv..]);
            let fd = fd_jvp(&vf, &a, &d, H);
            for k in 0..nv {
                // An infinite value (a max over no elements) is constant:
                // its differences are NaN, its tangent 0 (checked above).
                let fd_k: Vec<f64> = fd[k]
                    .iter()
                    .zip(&out[k].data)
                    .map(|(d, v)| if v.is_infinite() { 0.0 } else { *d })
                    .collect();
                assert_close(
                    &format!("{name}: jvp(vjp) output {k} vs finite differences"),
                    &out[nv + k].data,
                    &fd_k,
                    FD_RTOL,
                );
            }
        }
    }
}

/// Per-example logistic-loss gradient against its closed form.
#[test]
fn logistic_grad_closed_form() {
    let n = Dim::sym("n");
    let f = logistic(&n);
    let g = value_and_grad(&f, &[0, 1, 2]).unwrap();
    let mut rng = rng(7);
    let env = env_all(&f, 5);
    let args = random_args_for(&f, &[(-1.0, 1.0); 3], &[], &mut rng, &env);
    let out = eval(&g, &args);
    let (w, x, y) = (&args[0].data, &args[1].data, args[2].data[0]);
    let z = -y * dotv(w, x);
    let s = 1.0 / (1.0 + (-z).exp()); // sigmoid(z)
    assert_close("loss", &out[0].data, &[z.exp().ln_1p()], 1e-14);
    let gw: Vec<f64> = x.iter().map(|xi| -y * xi * s).collect();
    let gx: Vec<f64> = w.iter().map(|wi| -y * wi * s).collect();
    assert_close("d/dw", &out[1].data, &gw, 1e-14);
    assert_close("d/dx", &out[2].data, &gx, 1e-14);
    assert_close("d/dy", &out[3].data, &[-dotv(w, x) * s], 1e-14);
}

#[test]
fn grad_wrt_subset_and_errors() {
    let n = Dim::sym("n");
    let f = logistic(&n);
    let all = grad(&f, &[0, 1, 2]).unwrap();
    let sub = grad(&f, &[2, 0]).unwrap();
    assert_eq!(sub.outs.len(), 2);
    let mut rng = rng(8);
    let env = env_all(&f, 4);
    let args = random_args_for(&f, &[(-1.0, 1.0); 3], &[], &mut rng, &env);
    let a = eval(&all, &args);
    let s = eval(&sub, &args);
    assert_tensors_close("grad wrt [2, 0]", &s, &[a[2].clone(), a[0].clone()], 1e-15);

    let multi = composites(&n)
        .into_iter()
        .find(|c| c.name == "multi_out")
        .unwrap();
    assert!(grad(&multi.f, &[0]).is_err(), "grad of several outputs");
    let vec_out = catalog(&n)
        .into_iter()
        .find(|c| c.name == "exp_r1")
        .unwrap();
    assert!(grad(&vec_out.f, &[0]).is_err(), "grad of a vector output");
    assert!(grad(&f, &[3]).is_err(), "grad wrt a missing param");
    let e = grad(&f, &[5]).unwrap_err();
    assert!(e.contains("5"), "{e}");
}

/// A `bool` parameter (a select predicate): no tangent param for it in
/// `jvp`, a zero cotangent of its type from `vjp`, and the float params
/// differentiated as usual.
#[test]
fn bool_predicate_param() {
    let n = Dim::sym("n");
    let mut f = Function::new("bool_select");
    let p = f.add_param("p", Type::new(DType::Bool, shape(1, &n)));
    let a = f.add_param("a", Type::new(F, shape(1, &n)));
    let b = f.add_param("b", Type::new(F, shape(1, &n)));
    let ab = f.mul(a, b);
    let s = f.unary(UnaryOp::Sin, a);
    f.outs = vec![f.select(p, ab, s)];
    let mut rng = rng(90);
    let env = env_all(&f, 6);
    let pred = Tensor::vector(DType::Bool, &[1.0, 0.0, 0.0, 1.0, 1.0, 0.0]);
    let mut args = vec![pred.clone()];
    args.extend(random_args_for(
        &build("ab", &[("a", shape(1, &n)), ("b", shape(1, &n))], |_, p| {
            p.to_vec()
        }),
        &[(-2.0, 2.0); 2],
        &[],
        &mut rng,
        &env,
    ));
    let jf = jvp(&f);
    assert_eq!(jf.param_names, vec!["p", "a", "b", "t_a", "t_b"]);
    let dir = random_like(&mut rng, &args[1..]);
    let mut ja = args.clone();
    ja.extend(dir.iter().cloned());
    let jv = eval(&jf, &ja)[1].clone();
    // Finite differences along the float params only.
    let mut full_dir = vec![Tensor::new(DType::Bool, vec![6], vec![0.0; 6])];
    full_dir.extend(dir.iter().cloned());
    let fd = fd_jvp(&f, &args, &full_dir, H);
    assert_close("jvp with a bool param", &jv.data, &fd[0], FD_RTOL);
    // The select picks a*b where p holds, sin(a) elsewhere.
    for i in 0..6 {
        let (x, y) = (args[1].data[i], args[2].data[i]);
        let (dx, dy) = (dir[0].data[i], dir[1].data[i]);
        let want = if pred.data[i] != 0.0 {
            dx * y + x * dy
        } else {
            x.cos() * dx
        };
        assert_close("jvp closed form", &[jv.data[i]], &[want], 1e-14);
    }
    let vf = vjp(&f);
    let u = random_for_outputs(&mut rng, &f, &env);
    let mut va = args.clone();
    va.extend(u.iter().cloned());
    let vout = eval(&vf, &va);
    // Cotangents of the float params only: the predicate carries none.
    assert_eq!(
        vout.len(),
        3,
        "the output and one cotangent per float param"
    );
    let lhs = inner(&u, &[jv]);
    let rhs = inner(&vout[1..], &dir);
    assert_close(
        "<u, Jv> = <J^T u, v> with a bool param",
        &[rhs],
        &[lhs],
        1e-12,
    );
    assert!(grad(&weighted_sum(&f), &[0]).is_err(), "grad wrt a bool");
}

/// A max or min over no elements is the constant ∓inf: its tangent is 0
/// (it was 0/0 = NaN: the chooser rule divided by a count of 0). A row
/// whose max is NaN has no position equal to it either: tangent 0 there
/// too, as `max(a, b)` of a NaN result has.
#[test]
fn max_of_nan_has_nan_tangent_as_jax() {
    // JAX's `_reduce_chooser_jvp_rule`: sum(t · (x == ans)) / sum(x == ans),
    // 0/0 = NaN where the result is NaN.
    for max in [true, false] {
        let f = build(
            "choose",
            &[("x", Shape(vec![Dim::Const(3), Dim::sym("n")]))],
            |f, p| {
                let axes = vec![1];
                let op = if max {
                    Op::ReduceMax { axes }
                } else {
                    Op::ReduceMin { axes }
                };
                vec![f.push(op, &[p[0]]).unwrap()]
            },
        );
        let jf = jvp(&f);
        // Row 1 holds a NaN: its result and tangent are NaN; the other
        // rows' tangents are those of their chosen elements.
        let x = Tensor::new(F, vec![3, 2], vec![1.0, 2.0, f64::NAN, 0.5, -1.0, -3.0]);
        let t = Tensor::new(F, vec![3, 2], vec![10.0, 20.0, 30.0, 40.0, 50.0, 60.0]);
        let out = eval(&jf, &[x, t]);
        assert!(out[0].data[1].is_nan());
        assert!(out[1].data[1].is_nan(), "max {max}");
        let want = if max { [20.0, 50.0] } else { [10.0, 60.0] };
        assert_eq!([out[1].data[0], out[1].data[2]], want, "max {max}");
    }
}

/// Every op kind, unary, binary and comparison op appears in some catalog
/// function, so every op gets the checks above (and the batching, Jacobian
/// and backend checks that run the catalog). A new `Op` variant fails to
/// compile in `op_kind` until it is named; a new `UnaryOp` in
/// `unary_variants`; new binary and comparison ops are in their `ALL`.
#[test]
fn catalog_covers_every_op() {
    let cases = catalog(&Dim::sym("n"));
    let used: Vec<Op> = cases
        .iter()
        .flat_map(|c| c.f.eqns.iter().map(|e| e.op.clone()))
        .collect();
    let kinds: std::collections::BTreeSet<&str> = used.iter().map(op_kind).collect();
    for k in &kinds {
        assert!(OP_KINDS.contains(k), "op kind `{k}` missing from OP_KINDS");
    }
    for k in OP_KINDS {
        assert!(
            kinds.contains(k),
            "no catalog case uses an op of kind `{k}`"
        );
    }
    for u in unary_variants() {
        assert!(
            used.iter()
                .any(|o| matches!(o, Op::Unary(v) if same_unary_variant(*v, u))),
            "no catalog case uses {}",
            u.name()
        );
    }
    for b in oxla_core::ops::elementwise::BinaryOp::ALL {
        assert!(
            used.contains(&Op::Binary(b)),
            "no catalog case uses {}",
            b.name()
        );
    }
    for c in oxla_core::ops::elementwise::CmpOp::ALL {
        assert!(
            used.contains(&Op::Cmp(c)),
            "no catalog case uses {}",
            c.name()
        );
    }
}
