//! Custom derivative rules (`ops::control::Custom`, JAX's `custom_jvp` and
//! `custom_vjp`): each rule is deliberately not the primal's true
//! derivative, so every check below proves the rule is what the transforms
//! use. Values against the primal; JVP, gradient and Hessian against the
//! rule's closed form; VJP against JVP; batching against a loop over
//! examples; forward mode through a custom_vjp refused; the text form; the
//! fused program runs the primal.

use crate::common;

use common::cond::vector;
use common::*;
use oxla_core::kernel::fusion::fuse;
use oxla_core::ops::control::{self, FORWARD_OVER_CUSTOM_VJP};
use oxla_core::ops::elementwise::UnaryOp;
use oxla_core::transforms::{grad, hessian, jvp, simplify, vjp, vmap};
use oxla_core::*;

const XS: [f64; 4] = [0.3, -1.2, 2.0, 0.7];

fn vec_arg(x: &[f64]) -> Tensor {
    Tensor::vector(DType::F64, x)
}

/// `sin(x)`, elementwise, with the JVP rule `(sin(x), 3·x²·t)` (the
/// derivative of `x³`, not of `sin`).
fn custom_sin_rule() -> (Function, Function) {
    let mut p = Function::new("primal");
    let x = p.add_param("x", vector("n"));
    let s = p.unary(UnaryOp::Sin, x);
    p.outs = vec![s];
    let mut j = Function::new("rule");
    let x = j.add_param("x", vector("n"));
    let t = j.add_param("t_x", vector("n"));
    let s = j.unary(UnaryOp::Sin, x);
    let three = j.full(3.0, DType::F64, &Shape(vec![Dim::sym("n")]));
    let xx = j.mul(x, x);
    let d = j.mul(three, xx);
    let tout = j.mul(d, t);
    j.outs = vec![s, tout];
    (p, j)
}

/// `sum(custom_sin(x))`, with the custom JVP rule.
fn sum_custom_jvp() -> Function {
    let (p, j) = custom_sin_rule();
    let mut f = Function::new("f");
    let x = f.add_param("x", vector("n"));
    let y = control::push_custom_jvp(&mut f, &[x], p, j).unwrap();
    let s = f.reduce_sum(y[0], vec![0]);
    f.outs = vec![s];
    f
}

/// `sum(exp(x))`, whose custom VJP passes `½·exp(x)·ct` back (residual
/// `exp(x)`), not the true `exp(x)·ct`.
fn sum_custom_vjp() -> Function {
    let mut p = Function::new("primal");
    let x = p.add_param("x", vector("n"));
    let e = p.unary(UnaryOp::Exp, x);
    p.outs = vec![e];
    let mut fwd = Function::new("fwd");
    let x = fwd.add_param("x", vector("n"));
    let e = fwd.unary(UnaryOp::Exp, x);
    fwd.outs = vec![e, e];
    let mut bwd = Function::new("bwd");
    let r = bwd.add_param("r", vector("n"));
    let ct = bwd.add_param("ct", vector("n"));
    let half = bwd.full(0.5, DType::F64, &Shape(vec![Dim::sym("n")]));
    let rc = bwd.mul(r, ct);
    let back = bwd.mul(half, rc);
    bwd.outs = vec![back];
    let mut f = Function::new("f");
    let x = f.add_param("x", vector("n"));
    let y = control::push_custom_vjp(&mut f, &[x], p, fwd, bwd).unwrap();
    let s = f.reduce_sum(y[0], vec![0]);
    f.outs = vec![s];
    f
}

#[test]
fn a_custom_call_evaluates_its_primal() {
    let args = [vec_arg(&XS)];
    let want: f64 = XS.iter().map(|x| x.sin()).sum();
    assert_close(
        "jvp call",
        &eval(&sum_custom_jvp(), &args)[0].data,
        &[want],
        1e-15,
    );
    let want: f64 = XS.iter().map(|x| x.exp()).sum();
    assert_close(
        "vjp call",
        &eval(&sum_custom_vjp(), &args)[0].data,
        &[want],
        1e-15,
    );
}

#[test]
fn the_jvp_rule_gives_jvp_grad_vjp_and_hessian() {
    let f = sum_custom_jvp();
    let args = [vec_arg(&XS)];
    let dir = [0.5, -0.25, 1.0, 2.0];
    let rule: Vec<f64> = XS.iter().map(|x| 3.0 * x * x).collect();
    let out = eval(&jvp(&f), &[vec_arg(&XS), vec_arg(&dir)]);
    assert_close("jvp", &out[1].data, &[dotv(&rule, &dir)], 1e-14);
    let g = eval(&grad(&f, &[0]).unwrap(), &args);
    assert_close("grad", &g[0].data, &rule, 1e-14);
    // ⟨ct, J·dir⟩ = ⟨Jᵀ·ct, dir⟩.
    let v = eval(&vjp(&f), &[vec_arg(&XS), Tensor::scalar(DType::F64, 0.75)]);
    assert_close(
        "vjp vs jvp",
        &[dotv(&v[1].data, &dir)],
        &[0.75 * out[1].data[0]],
        1e-14,
    );
    // The Hessian differentiates the rule's own equations: diag(6x).
    let h = eval(&hessian(&f, 0).unwrap(), &args);
    let n = XS.len();
    let want: Vec<f64> = (0..n * n)
        .map(|k| if k / n == k % n { 6.0 * XS[k / n] } else { 0.0 })
        .collect();
    assert_close("hessian", &h[0].data, &want, 1e-13);
}

#[test]
fn the_vjp_rule_gives_grad_and_forward_over_reverse() {
    let f = sum_custom_vjp();
    let args = [vec_arg(&XS)];
    let half: Vec<f64> = XS.iter().map(|x| 0.5 * x.exp()).collect();
    let g = grad(&f, &[0]).unwrap();
    assert!(!control::has_custom_lin(&g));
    assert_close("grad", &eval(&g, &args)[0].data, &half, 1e-14);
    // Forward over reverse differentiates fwd and bwd: diag(½·exp(x)).
    let h = eval(&hessian(&f, 0).unwrap(), &args);
    let n = XS.len();
    let want: Vec<f64> = (0..n * n)
        .map(|k| if k / n == k % n { half[k / n] } else { 0.0 })
        .collect();
    assert_close("hessian", &h[0].data, &want, 1e-13);
    // Reverse over reverse: grad of the gradient's sum, ½·exp(x) again.
    let mut g0 = g.clone();
    let total = g0.reduce_sum(g0.outs[0], vec![0]);
    g0.outs = vec![total];
    let gg = eval(&grad(&g0, &[0]).unwrap(), &args);
    assert_close("grad of grad", &gg[0].data, &half, 1e-14);
}

#[test]
fn forward_mode_through_a_custom_vjp_is_refused() {
    let f = sum_custom_vjp();
    let j = jvp(&f);
    assert!(control::has_custom_lin(&j));
    let err = oxla_core::interp::eval(&j, &[vec_arg(&XS), vec_arg(&XS)]).unwrap_err();
    assert!(err.contains(FORWARD_OVER_CUSTOM_VJP), "{err}");
    assert!(fuse(&j).unwrap_err().contains(FORWARD_OVER_CUSTOM_VJP));
    // The JVP of a JVP (jacrev of jacfwd) is refused inside the rule.
    let refused = std::panic::catch_unwind(|| jvp(&j)).unwrap_err();
    let msg = &refused
        .downcast_ref::<oxla_core::transforms::Unsupported>()
        .expect("a refusal, not an internal error")
        .0;
    assert_eq!(msg, FORWARD_OVER_CUSTOM_VJP);
}

#[test]
fn batching_matches_a_loop_over_examples() {
    let rows = [[0.3, -1.2, 2.0], [1.1, 0.4, -0.6]];
    let batch = Tensor::new(DType::F64, vec![2, 3], rows.concat());
    for f in [sum_custom_jvp(), sum_custom_vjp()] {
        for g in [f.clone(), grad(&f, &[0]).unwrap()] {
            let b = vmap(&g, &[Some(0)]).unwrap();
            let got = eval(&b, std::slice::from_ref(&batch));
            let want: Vec<f64> = rows
                .iter()
                .flat_map(|r| eval(&g, &[vec_arg(r)])[0].data.clone())
                .collect();
            assert_close(&format!("vmap of {}", g.name), &got[0].data, &want, 1e-14);
            // The gradient of the batched sum is the loop's gradients.
            if g.name == "f" {
                let mut total = b.clone();
                let s = total.reduce_sum(total.outs[0], vec![0]);
                total.outs = vec![s];
                let gb = eval(&grad(&total, &[0]).unwrap(), std::slice::from_ref(&batch));
                let want: Vec<f64> = rows
                    .iter()
                    .flat_map(|r| {
                        eval(&grad(&g, &[0]).unwrap(), &[vec_arg(r)])[0]
                            .data
                            .clone()
                    })
                    .collect();
                assert_close("grad of vmap", &gb[0].data, &want, 1e-14);
            }
        }
    }
}

#[test]
fn the_text_form_reads_back() {
    for f in [
        sum_custom_jvp(),
        sum_custom_vjp(),
        simplify(&jvp(&sum_custom_vjp())),
    ] {
        let text = text::print(&f);
        let back = text::parse(&text).unwrap();
        assert_eq!(text::print(&back), text);
    }
    assert!(text::print(&sum_custom_jvp()).contains("custom_jvp_call[]"));
    assert!(text::print(&sum_custom_vjp()).contains("custom_vjp_call[]"));
    assert!(text::print(&jvp(&sum_custom_vjp())).contains("custom_lin[1]"));
}

#[test]
fn the_fused_program_runs_the_primal() {
    let args = [vec_arg(&XS)];
    for f in [
        sum_custom_jvp(),
        sum_custom_vjp(),
        grad(&sum_custom_vjp(), &[0]).unwrap(),
    ] {
        let p = fuse(&f).unwrap();
        let got = run_program(&p, &args);
        assert_tensors_close(&f.name, &got, &eval(&f, &args), 1e-14);
    }
}

#[test]
fn mismatched_rules_are_refused_by_the_shape_rule() {
    let (p, mut j) = custom_sin_rule();
    j.outs.pop();
    let mut f = Function::new("f");
    let x = f.add_param("x", vector("n"));
    let err = control::push_custom_jvp(&mut f, &[x], p, j).unwrap_err();
    assert!(err.contains("the jvp rule's results"), "{err}");
}
