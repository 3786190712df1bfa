//! Conds (`ops::control::Cond`, JAX's `lax.cond`): values against each
//! branch inlined; JVP and gradients against central finite differences on
//! both sides of the predicate; VJP against JVP; Hessians (forward over
//! reverse) and reverse over reverse; batching with an unbatched and a
//! batched predicate against a loop over examples; a gradient that stays
//! finite where the untaken side is NaN; simplification inside branches;
//! the text form; the kernel interpreter on the fused programs.

use crate::common;

use common::cond::*;
use common::*;
use oxla_core::ops::control::Cond;
use oxla_core::transforms::{grad, hessian, jvp, simplify, vjp, vmap};
use oxla_core::*;

const H: f64 = 1e-6;
const Y: [f64; 3] = [0.4, -1.1, 0.7];
/// Points on both sides of the predicate `x > 0`.
const XS: [f64; 4] = [0.7, 1.6, -0.5, -1.3];

fn conds(f: &Function) -> Vec<&Cond> {
    f.eqns
        .iter()
        .filter_map(|e| match &e.op {
            Op::Cond(c) => Some(&**c),
            _ => None,
        })
        .collect()
}

#[test]
fn a_cond_gives_the_taken_branch_value() {
    for x in XS {
        let args = branchy_args(x, &Y);
        let want = eval(&branchy_side(x > 0.0), &args);
        assert_eq!(eval(&branchy(), &args), want, "x = {x}");
    }
    // The untaken side is NaN at x < 0 (ln), and does not reach the value.
    let v = eval(&branchy(), &branchy_args(-1.0, &Y))[0].data[0];
    assert!(v.is_finite());
}

#[test]
fn derivatives_match_finite_differences_on_both_sides() {
    let f = branchy();
    for (k, x) in XS.into_iter().enumerate() {
        let args = branchy_args(x, &Y);
        let ctx = format!("x = {x}");
        // JVP along a direction in both params.
        let dir = branchy_args(0.6, &[0.3, -0.8, 0.5]);
        let j = jvp(&f);
        let mut jargs = args.clone();
        jargs.extend(dir.iter().cloned());
        let jout = eval(&j, &jargs);
        assert_eq!(jout[0], eval(&f, &args)[0], "{ctx}: jvp's primal");
        let fd = fd_jvp(&f, &args, &dir, H);
        assert_close(&format!("{ctx}: jvp vs fd"), &jout[1].data, &fd[0], 1e-7);
        // The tangent equals the JVP of the inlined branch.
        let side = eval(&jvp(&branchy_side(x > 0.0)), &jargs);
        assert_close(
            &format!("{ctx}: jvp vs branch"),
            &jout[1].data,
            &side[1].data,
            1e-14,
        );
        // grad against finite differences per coordinate.
        let g = eval(&grad(&f, &[0, 1]).unwrap(), &args);
        for (i, gi) in g.iter().enumerate() {
            let fd = fd_grad(&f, &args, i, 0, H);
            assert_close(&format!("{ctx}: grad {i} vs fd"), &gi.data, &fd, 1e-7);
        }
        // ⟨ct, J·dir⟩ = ⟨Jᵀ·ct, dir⟩.
        let ct = 0.75;
        let mut vargs = args.clone();
        vargs.push(Tensor::scalar(DType::F64, ct));
        let vout = eval(&vjp(&f), &vargs);
        let rhs = inner(&vout[1..], &dir);
        assert_close(
            &format!("{ctx}: vjp vs jvp"),
            &[rhs],
            &[ct * jout[1].data[0]],
            1e-12,
        );
        // Hessian (forward over reverse) against differences of the gradient.
        let h = eval(&hessian(&f, 1).unwrap(), &args);
        let gf = grad(&f, &[1]).unwrap();
        let n = Y.len();
        for i in 0..n {
            let mut d = vec![0.0; n];
            d[i] = 1.0;
            let dirs = vec![
                Tensor::scalar(DType::F64, 0.0),
                Tensor::vector(DType::F64, &d),
            ];
            let col = fd_jvp(&gf, &args, &dirs, 1e-5);
            let got: Vec<f64> = (0..n).map(|r| h[0].data[r * n + i]).collect();
            assert_close(&format!("{ctx}: hessian column {i}"), &got, &col[0], 1e-6);
        }
        // Reverse over reverse: the gradient of a gradient's entry.
        let mut gsum = grad(&f, &[0]).unwrap();
        gsum.name = format!("dfdx{k}");
        let gg = eval(&grad(&gsum, &[0, 1]).unwrap(), &args);
        for (i, gi) in gg.iter().enumerate() {
            let fd = fd_grad(&gsum, &args, i, 0, 1e-5);
            assert_close(&format!("{ctx}: grad of grad {i}"), &gi.data, &fd, 1e-6);
        }
    }
}

/// `if x > 0 { ln(x) } else { 0 }`: its gradient at x <= 0 is 0 through a
/// cond; through a select of both sides it is the select's 0 times
/// `d ln(x) = 1/x`, which at x = 0 is 0·∞ = NaN.
#[test]
fn the_untaken_side_does_not_poison_the_gradient() {
    let f = log_or_zero(false);
    for x in [-1.0, 0.0, -1e-300] {
        let args = vec![Tensor::scalar(DType::F64, x)];
        assert_eq!(eval(&f, &args)[0].data[0], 0.0);
        let g = eval(&grad(&f, &[0]).unwrap(), &args)[0].data[0];
        assert_eq!(g, 0.0, "grad at {x}");
        let h = eval(&hessian(&f, 0).unwrap(), &args)[0].data[0];
        assert_eq!(h, 0.0, "hessian at {x}");
    }
    let s = log_or_zero(true);
    let gs = eval(&grad(&s, &[0]).unwrap(), &[Tensor::scalar(DType::F64, 0.0)])[0].data[0];
    assert!(gs.is_nan(), "the select form's grad at 0 is {gs}");
    let args = vec![Tensor::scalar(DType::F64, 2.0)];
    let g = eval(&grad(&f, &[0]).unwrap(), &args)[0].data[0];
    assert_eq!(g, 0.5);
    // Batched over both sides at once, the per-example select picks the
    // finite gradient of each branch.
    let gb = vmap(&grad(&f, &[0]).unwrap(), &[Some(0)]).unwrap();
    let out = eval(&gb, &[Tensor::vector(DType::F64, &[-1.0, 2.0, 0.0, 4.0])]);
    assert_eq!(out[0].data, [0.0, 0.5, 0.0, 0.25]);
}

/// vmap with the predicate unbatched (only `y` batched: still one cond)
/// and batched (`x` batched: both branches and a select), against a loop
/// over examples, for the function and its gradient.
#[test]
fn vmap_with_an_unbatched_or_a_batched_predicate_matches_a_loop() {
    let f = branchy();
    let gf = grad(&f, &[0, 1]).unwrap();
    let ys = [
        [0.4, -1.1, 0.7],
        [1.2, 0.3, -0.6],
        [-0.9, 0.5, 0.2],
        [0.1, 0.8, -1.4],
    ];
    let flat: Vec<f64> = ys.iter().flatten().copied().collect();
    let yb = Tensor::new(DType::F64, vec![4, 3], flat);
    for g in [&f, &gf] {
        // Unbatched predicate.
        let b = vmap(g, &[None, Some(0)]).unwrap();
        assert_eq!(conds(&b).len(), conds(g).len(), "`{}`: conds kept", g.name);
        for x in [0.8, -0.6] {
            let got = eval(&b, &[Tensor::scalar(DType::F64, x), yb.clone()]);
            for (e, y) in ys.iter().enumerate() {
                let want = eval(g, &branchy_args(x, y));
                for (o, w) in want.iter().enumerate() {
                    assert_eq!(
                        slice0(&got[o], e).data,
                        w.data,
                        "`{}` x={x} example {e}",
                        g.name
                    );
                }
            }
        }
        // Batched predicate: examples on both sides.
        let xs = [0.8, -0.6, 1.5, -0.2];
        let b = vmap(g, &[Some(0), Some(0)]).unwrap();
        assert!(
            conds(&b).is_empty(),
            "`{}`: a batched predicate selects",
            g.name
        );
        let got = eval(&b, &[Tensor::vector(DType::F64, &xs), yb.clone()]);
        for (e, (x, y)) in xs.iter().zip(&ys).enumerate() {
            let want = eval(g, &branchy_args(*x, y));
            for (o, w) in want.iter().enumerate() {
                assert_close(
                    &format!("`{}` batched x example {e} output {o}", g.name),
                    &slice0(&got[o], e).data,
                    &w.data,
                    1e-15,
                );
            }
        }
    }
}

#[test]
fn simplify_prunes_unused_results_and_constants() {
    // Of the second cond only its second result is used: the first result
    // goes, and with it the one read of `y`, so `y` is no longer an operand.
    let mut f = Function::new("first_only");
    let x = f.add_param("x", scalar());
    let y = f.add_param("y", vector("n"));
    let zero = f.literal(0.0, DType::F64);
    let p = f.cmp(oxla_core::ops::elementwise::CmpOp::Lt, zero, x);
    let b = branchy();
    let r = oxla_core::ops::control::push_cond(&mut f, p, &[x, y], b.clone(), b).unwrap();
    // `branchy` has one result; a second cond over two results:
    let mut t = Function::new("t");
    let tx = t.add_param("x", scalar());
    let ty = t.add_param("y", vector("n"));
    let s = t.reduce_sum(ty, vec![0]);
    t.outs = vec![s, tx];
    let mut e = Function::new("e");
    let ex = e.add_param("x", scalar());
    let _ = e.add_param("y", vector("n"));
    let sq = e.mul(ex, ex);
    e.outs = vec![ex, sq];
    let r2 = oxla_core::ops::control::push_cond(&mut f, p, &[x, y], t, e).unwrap();
    f.outs = vec![r[0], r2[1]];
    let g = simplify(&f);
    let cs = conds(&g);
    assert_eq!(cs.len(), 2);
    assert_eq!(cs[1].then.outs.len(), 1, "unused result pruned");
    assert_eq!(
        cs[1].n_consts(),
        1,
        "`y` is read by neither branch any more"
    );
    for x in [1.0, -2.0] {
        let args = branchy_args(x, &Y);
        assert_eq!(eval(&g, &args), eval(&f, &args));
    }
}

#[test]
fn a_cond_on_a_constant_predicate_simplifies_to_its_branch() {
    for (p, then) in [(1.0, true), (0.0, false)] {
        let mut f = Function::new("constant");
        let x = f.add_param("x", scalar());
        let y = f.add_param("y", vector("n"));
        let pred = f.literal(p, DType::Bool);
        let b = branchy_side(true);
        let mut e = b.clone();
        e.outs = vec![e.params[0]];
        let r = oxla_core::ops::control::push_cond(&mut f, pred, &[x, y], b, e).unwrap();
        f.outs = r;
        let g = simplify(&f);
        assert!(conds(&g).is_empty(), "{}", text::print(&g));
        let args = branchy_args(0.7, &Y);
        let want = if then {
            eval(&branchy_side(true), &args)
        } else {
            vec![args[0].clone()]
        };
        assert_eq!(eval(&g, &args), want);
    }
}

#[test]
fn branches_must_agree_on_their_result_types() {
    let mut t = Function::new("t");
    let tx = t.add_param("x", scalar());
    t.outs = vec![tx];
    let mut e = Function::new("e");
    let _ = e.add_param("x", scalar());
    e.outs = vec![e.literal(1.0, DType::F32)];
    let mut f = Function::new("bad");
    let x = f.add_param("x", scalar());
    let zero = f.literal(0.0, DType::F64);
    let p = f.cmp(oxla_core::ops::elementwise::CmpOp::Lt, zero, x);
    let err = oxla_core::ops::control::push_cond(&mut f, p, &[x], t.clone(), e).unwrap_err();
    assert!(err.contains("branches' results differ"), "{err}");
    // The predicate must be a bool scalar.
    let err = oxla_core::ops::control::push_cond(&mut f, x, &[x], t.clone(), t).unwrap_err();
    assert!(err.contains("predicate"), "{err}");
}

#[test]
fn the_text_form_round_trips_conds_and_their_derivatives() {
    for f in [branchy(), log_or_zero(false)] {
        for g in [
            f.clone(),
            jvp(&f),
            vjp(&f),
            grad(&f, &[0]).unwrap(),
            hessian(&f, 0).unwrap(),
            vmap(&grad(&f, &[0]).unwrap(), &vec![Some(0); f.params.len()]).unwrap(),
        ] {
            let t = text::print(&g);
            let back = text::parse(&t).unwrap_or_else(|e| panic!("{e}\n{t}"));
            assert_eq!(text::print(&back), t);
            assert_eq!(back, g, "{t}");
        }
    }
}

/// Conds on the kernel path, run by the kernel interpreter (the CPU
/// backend's tests run them compiled), against the reference.
#[test]
fn fused_conds_run_by_the_kernel_interpreter_match_the_reference() {
    use oxla_core::kernel::fusion::fuse;
    let f = branchy();
    for g in [
        f.clone(),
        grad(&f, &[0, 1]).unwrap(),
        hessian(&f, 0).unwrap(),
        vmap(&f, &[None, Some(0)]).unwrap(),
    ] {
        let p = fuse(&g).unwrap();
        assert!(
            !p.host_steps.is_empty(),
            "`{}`: no cond step\n{}",
            g.name,
            p.text()
        );
        for x in XS {
            let mut args = branchy_args(x, &Y);
            if g.name.ends_with("vmap") {
                args[1] = Tensor::new(DType::F64, vec![2, 3], [Y, Y].concat());
            }
            let want = eval(&g, &args);
            let got = run_program(&p, &args);
            for (k, (x, w)) in got.iter().zip(&want).enumerate() {
                assert_close(&format!("`{}` output {k}", g.name), &x.data, &w.data, 1e-14);
            }
        }
    }
}

/// `check_schedule` refuses a cond step that breaks the executor's
/// preconditions.
#[test]
fn malformed_cond_steps_are_refused() {
    use oxla_core::kernel::fusion::fuse;
    let p = fuse(&grad(&branchy(), &[0, 1]).unwrap()).unwrap();
    p.check_schedule().unwrap();
    assert!(p.host_steps.iter().all(|s| s.as_cond().is_some()));
    let refused = |what: &str, change: &dyn Fn(&mut oxla_core::exec::Program)| {
        let mut bad = p.clone();
        change(&mut bad);
        let e = bad.check_schedule().expect_err(what);
        assert!(e.contains("cond") || e.contains("loop"), "{what}: {e}");
    };
    let n_kernels = p.kernels.len();
    fn cond(q: &mut oxla_core::exec::Program, j: usize) -> &mut oxla_core::exec::CondStep {
        q.host_steps[j].as_cond_mut().expect("a cond step")
    }
    refused("a renumbered kernel that is another", &|q| {
        let n = &mut cond(q, 0).otherwise;
        n.kernels[0] = (n.kernels[0] + 1) % n_kernels;
    });
    refused("a result written into an operand", &|q| {
        let c = cond(q, 0);
        c.outs[0] = c.args[1];
    });
    refused("a result written into a parameter", &|q| {
        cond(q, 0).outs[0] = 0;
    });
    refused("a predicate of another type", &|q| {
        cond(q, 0).args.swap(0, 1);
    });
    refused("a missing operand", &|q| {
        cond(q, 0).args.pop();
    });
    refused("branches of different types", &|q| {
        let other = cond(q, 1).then.clone();
        cond(q, 0).then = other;
    });
}

/// A branch that gives a constant back unchanged, or a literal, has no
/// kernel of its own: the step copies the constant's buffer.
#[test]
fn a_branch_without_kernels_runs_on_the_kernel_path() {
    use oxla_core::kernel::fusion::fuse;
    let mut t = Function::new("scaled");
    let tx = t.add_param("x", vector("n"));
    let ts = t.add_param("s", scalar());
    let sb = t.broadcast(ts, Shape(vec![Dim::sym("n")]), vec![]);
    let r = t.mul(tx, sb);
    t.outs = vec![r, ts];
    let mut e = Function::new("same");
    let ex = e.add_param("x", vector("n"));
    let _ = e.add_param("s", scalar());
    e.outs = vec![ex, e.literal(2.0, DType::F64)];
    let mut f = Function::new("pass_through");
    let x = f.add_param("x", vector("n"));
    let s = f.add_param("s", scalar());
    let zero = f.literal(0.0, DType::F64);
    let p = f.cmp(oxla_core::ops::elementwise::CmpOp::Gt, s, zero);
    f.outs = oxla_core::ops::control::push_cond(&mut f, p, &[x, s], t, e).unwrap();
    let p = fuse(&f).unwrap();
    for s in [1.5, -1.0] {
        let args = vec![
            Tensor::vector(DType::F64, &Y),
            Tensor::scalar(DType::F64, s),
        ];
        assert_eq!(
            run_program(&p, &args),
            eval(&f, &args),
            "s = {s}\n{}",
            p.text()
        );
    }
}
