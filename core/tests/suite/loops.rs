//! Loops (`ops::control`): each loop against its unrolled form; JVP and
//! reverse mode (through `for` and `while`) against central finite
//! differences and against each other; every checkpointing policy gives the
//! same gradient bit for bit while keeping fewer carries; forward over
//! reverse (Hessians); batching with per-example trip counts against a loop
//! per example; the text form round-trips every kind of loop.

use crate::common;

use common::loops::*;
use common::*;
use oxla_core::ops::control::{self, Checkpoint};
use oxla_core::ops::elementwise::UnaryOp;
use oxla_core::ops::gather::gather;
use oxla_core::transforms::{self, grad, hessian, jvp, vjp, vmap};
use oxla_core::*;

const H: f64 = 1e-6;

/// The same polynomial, unrolled for the bounds 0..n.
fn horner_unrolled(n: usize) -> Function {
    let mut f = Function::new("horner_unrolled");
    let x = f.add_param("x", scalar(DType::F64));
    let c = f.add_param("c", vector("n"));
    let mut acc = f.add_param("a0", scalar(DType::F64));
    let _ = f.add_param("lo", scalar(DType::I64));
    let _ = f.add_param("hi", scalar(DType::I64));
    for i in 0..n {
        let idx = f.literal(i as f64, DType::I64);
        let ci = gather(&mut f, c, idx, 0, 0);
        let ax = f.mul(acc, x);
        acc = f.add(ax, ci);
    }
    f.outs = vec![f.unary(UnaryOp::Sin, acc)];
    f
}

/// The float params of `f`.
fn float_params(f: &Function) -> Vec<usize> {
    (0..f.params.len())
        .filter(|i| f.dtype(f.params[*i]).is_float())
        .collect()
}

/// JVP against finite differences, grad against finite differences, and
/// VJP against JVP (⟨u, J v⟩ = ⟨Jᵀu, v⟩), for the scalar function `f`.
fn check_derivatives(ctx: &str, f: &Function, args: &[Tensor], seed: u64, rtol: f64) {
    let floats = float_params(f);
    let mut r = rng(seed);
    // A random direction in the float params, zero in the others.
    let dir: Vec<Tensor> = args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let mut d = random_tensor(&mut r, DType::F64, a.shape.clone(), (-1.0, 1.0));
            d.dtype = a.dtype;
            if !floats.contains(&i) {
                d.data.iter_mut().for_each(|x| *x = 0.0);
            }
            d
        })
        .collect();
    let j = jvp(f);
    let mut jargs = args.to_vec();
    jargs.extend(floats.iter().map(|i| dir[*i].clone()));
    let jout = eval(&j, &jargs);
    let n_out = f.outs.len();
    let fd = fd_jvp(f, args, &dir, H);
    for k in 0..n_out {
        assert_close(
            &format!("{ctx}: jvp vs fd, output {k}"),
            &jout[n_out + k].data,
            &fd[k],
            rtol,
        );
        assert_eq!(jout[k], eval(f, args)[k], "{ctx}: jvp's primal output");
    }
    let g = grad(f, &floats).unwrap();
    let gout = eval(&g, args);
    for (k, i) in floats.iter().enumerate() {
        let fd = fd_grad(f, args, *i, 0, H);
        assert_close(
            &format!("{ctx}: grad of `{}` vs fd", f.param_names[*i]),
            &gout[k].data,
            &fd,
            rtol,
        );
    }
    // ⟨ct, J·dir⟩ = ⟨Jᵀ·ct, dir⟩.
    let v = vjp(f);
    let ct = Tensor::scalar(DType::F64, 0.75);
    let mut vargs = args.to_vec();
    vargs.push(ct.clone());
    let vout = eval(&v, &vargs);
    let lhs = 0.75 * jout[n_out].data[0];
    let rhs: f64 = floats
        .iter()
        .enumerate()
        .map(|(k, i)| dotv(&vout[n_out + k].data, &dir[*i].data))
        .sum();
    assert_close(&format!("{ctx}: vjp vs jvp"), &[rhs], &[lhs], 1e-12);
}

fn eval(f: &Function, args: &[Tensor]) -> Vec<Tensor> {
    interp::eval(f, args).unwrap_or_else(|e| panic!("evaluating `{}`: {e}", f.name))
}

#[test]
fn a_for_loop_equals_its_unrolled_form() {
    let c = [0.5, -1.25, 2.0, 0.75, -0.3];
    let args = horner_args(0.8, &c, 0.1, 0, c.len() as i64);
    let want = eval(&horner_unrolled(c.len()), &args);
    let got = eval(&horner(Checkpoint::All), &args);
    assert_eq!(got, want, "loop vs unrolled");
    for (name, g) in [
        (
            "jvp",
            (
                jvp(&horner(Checkpoint::All)),
                jvp(&horner_unrolled(c.len())),
            ),
        ),
        (
            "grad",
            (
                grad(&horner(Checkpoint::All), &[0, 1, 2]).unwrap(),
                grad(&horner_unrolled(c.len()), &[0, 1, 2]).unwrap(),
            ),
        ),
    ] {
        let mut a = args.clone();
        if name == "jvp" {
            a.extend([
                Tensor::scalar(DType::F64, 0.3),
                Tensor::vector(DType::F64, &[1.0, -0.5, 0.25, 2.0, 0.1]),
                Tensor::scalar(DType::F64, -0.7),
            ]);
        }
        let (l, u) = (eval(&g.0, &a), eval(&g.1, &a));
        for (x, y) in l.iter().zip(&u) {
            assert_close(
                &format!("{name}: loop vs unrolled"),
                &x.data,
                &y.data,
                1e-14,
            );
        }
    }
}

#[test]
fn an_empty_range_runs_no_step_and_its_gradient_is_the_identity() {
    let args = horner_args(0.8, &[1.0, 2.0], 0.4, 3, 1);
    let f = horner(Checkpoint::All);
    assert_eq!(eval(&f, &args)[0].data[0], 0.4f64.sin());
    let g = eval(&grad(&f, &[0, 1, 2]).unwrap(), &args);
    assert_eq!(g[0].data, vec![0.0]);
    assert_eq!(g[1].data, vec![0.0, 0.0]);
    assert_eq!(g[2].data, vec![0.4f64.cos()]);
}

#[test]
fn derivatives_through_a_for_loop_match_finite_differences() {
    let c = [0.5, -1.25, 2.0, 0.75, -0.3, 0.2];
    for (lo, hi) in [(0, 6), (2, 5), (1, 2)] {
        let args = horner_args(0.9, &c, -0.2, lo, hi);
        check_derivatives(
            &format!("horner {lo}..{hi}"),
            &horner(Checkpoint::All),
            &args,
            1,
            1e-7,
        );
    }
    for (m, hi) in [(3, 7), (5, 20)] {
        let args = coupled_args(m, 0, hi, 7);
        check_derivatives(
            &format!("coupled m={m} n={hi}"),
            &coupled(Checkpoint::All),
            &args,
            2,
            1e-6,
        );
    }
}

#[test]
fn reverse_mode_through_a_while_loop_records_its_trip_count() {
    let f = newton(Checkpoint::All);
    for a in [2.0, 10.0, 0.3] {
        let args = vec![
            Tensor::scalar(DType::F64, a),
            Tensor::scalar(DType::F64, a.max(1.0)),
            Tensor::scalar(DType::F64, 1.5),
        ];
        let out = eval(&f, &args)[0].data[0];
        assert_close("newton value", &[out], &[1.5 * a.sqrt()], 1e-14);
        check_derivatives(&format!("newton a={a}"), &f, &args, 3, 1e-6);
        // At convergence the iterate's derivative in `a` is d√a/da.
        let g = eval(&grad(&f, &[0]).unwrap(), &args);
        assert_close("d newton / da", &g[0].data, &[1.5 * 0.5 / a.sqrt()], 1e-8);
    }
}

#[test]
fn every_checkpointing_policy_gives_the_same_gradient_with_a_smaller_tape() {
    let n = 2000;
    let args = coupled_args(4, 0, n, 11);
    let mut runs = Vec::new();
    for ckpt in [
        Checkpoint::All,
        Checkpoint::Every(7),
        Checkpoint::Sqrt,
        Checkpoint::Every(1),
    ] {
        let f = coupled(ckpt);
        let g = grad(&f, &[0, 1, 2, 3]).unwrap();
        control::reset_tape_peak();
        let out = eval(&g, &args);
        runs.push((ckpt, out, control::tape_peak_bytes()));
    }
    let per_step = 2 * 4 * 8;
    let (_, all, all_bytes) = &runs[0];
    assert_eq!(*all_bytes, n as usize * per_step, "All keeps every step");
    for (ckpt, out, bytes) in &runs[1..] {
        assert_eq!(out, all, "{ckpt:?}: gradient differs from Checkpoint::All");
        match ckpt {
            Checkpoint::Sqrt => {
                // ⌈√2000⌉ = 45: 45 checkpoints plus one segment of 45.
                assert_eq!(*bytes, 90 * per_step, "Sqrt");
            }
            Checkpoint::Every(7) => assert_eq!(*bytes, (286 + 7) * per_step, "Every(7)"),
            _ => {}
        }
    }
}

#[test]
fn forward_over_reverse_gives_the_hessian() {
    let c = [0.5, -1.25, 2.0, 0.75];
    let args = horner_args(0.7, &c, 0.3, 0, 4);
    for ckpt in [Checkpoint::All, Checkpoint::Every(2)] {
        let f = horner(ckpt);
        let h = hessian(&f, 0).unwrap();
        let got = eval(&h, &args)[0].data[0];
        let g = grad(&f, &[0]).unwrap();
        let fd = fd_grad(&g, &args, 0, 0, 1e-5)[0];
        assert_close(&format!("{ckpt:?}: d²/dx² horner"), &[got], &[fd], 1e-7);
    }
    // Through a while loop too.
    let f = newton(Checkpoint::All);
    let args = vec![
        Tensor::scalar(DType::F64, 3.0),
        Tensor::scalar(DType::F64, 3.0),
        Tensor::scalar(DType::F64, 1.0),
    ];
    let got = eval(&hessian(&f, 0).unwrap(), &args)[0].data[0];
    // d²√a/da² = −a^(−3/2)/4.
    assert_close("d² newton / da²", &[got], &[-0.25 * 3f64.powf(-1.5)], 1e-7);
    // Forward over forward as well.
    let jj = jvp(&jvp(&horner(Checkpoint::All)));
    assert!(verify::verify(&jj).is_ok());
}

#[test]
fn vmap_of_a_loop_with_per_example_trip_counts_matches_a_loop_per_example() {
    let f = horner(Checkpoint::All);
    let c = [0.5, -1.25, 2.0, 0.75, -0.3];
    let bounds = [(0i64, 5i64), (1, 3), (2, 2), (0, 1), (4, 5)];
    let xs = [0.3, -0.6, 1.1, 0.9, 0.25];
    let b = vmap(&f, &[Some(0), None, None, Some(0), Some(0)]).unwrap();
    let args = vec![
        Tensor::vector(DType::F64, &xs),
        Tensor::vector(DType::F64, &c),
        Tensor::scalar(DType::F64, 0.2),
        Tensor::new(
            DType::I64,
            vec![5],
            bounds.iter().map(|b| b.0 as f64).collect(),
        ),
        Tensor::new(
            DType::I64,
            vec![5],
            bounds.iter().map(|b| b.1 as f64).collect(),
        ),
    ];
    let got = eval(&b, &args);
    let gb = vmap(
        &grad(&f, &[0, 1]).unwrap(),
        &[Some(0), None, None, Some(0), Some(0)],
    )
    .unwrap();
    let ggot = eval(&gb, &args);
    let g = grad(&f, &[0, 1]).unwrap();
    for (k, ((lo, hi), x)) in bounds.iter().zip(xs).enumerate() {
        let one = horner_args(x, &c, 0.2, *lo, *hi);
        assert_eq!(got[0].data[k], eval(&f, &one)[0].data[0], "example {k}");
        let want = eval(&g, &one);
        assert_eq!(ggot[0].data[k], want[0].data[0], "example {k}: d/dx");
        assert_eq!(
            &ggot[1].data[k * 5..k * 5 + 5],
            &want[1].data[..],
            "example {k}: d/dc"
        );
    }
}

#[test]
fn vmap_of_a_while_loop_with_a_batched_condition_matches_a_loop_per_example() {
    let f = newton(Checkpoint::All);
    let a = [2.0, 100.0, 0.5, 1.0];
    let args = vec![
        Tensor::vector(DType::F64, &a),
        Tensor::vector(DType::F64, &[2.0, 100.0, 1.0, 1.0]),
        Tensor::scalar(DType::F64, 1.0),
    ];
    let axes = [Some(0), Some(0), None];
    let got = eval(&vmap(&f, &axes).unwrap(), &args);
    let ggot = eval(&vmap(&grad(&f, &[0, 2]).unwrap(), &axes).unwrap(), &args);
    let g = grad(&f, &[0, 2]).unwrap();
    for (k, &ak) in a.iter().enumerate() {
        let one = vec![
            Tensor::scalar(DType::F64, ak),
            Tensor::scalar(DType::F64, args[1].data[k]),
            Tensor::scalar(DType::F64, 1.0),
        ];
        assert_eq!(got[0].data[k], eval(&f, &one)[0].data[0], "example {k}");
        let want = eval(&g, &one);
        assert_eq!(ggot[0].data[k], want[0].data[0], "example {k}: d/da");
        assert_eq!(ggot[1].data[k], want[1].data[0], "example {k}: d/dk");
    }
}

#[test]
fn the_text_form_round_trips_every_kind_of_loop() {
    let fs = [
        horner(Checkpoint::Every(3)),
        newton(Checkpoint::Sqrt),
        coupled(Checkpoint::All),
    ];
    for f in &fs {
        let floats = float_params(f);
        for g in [
            f.clone(),
            jvp(f),
            vjp(f),
            grad(f, &floats).unwrap(),
            hessian(f, 0).unwrap(),
        ]
        .into_iter()
        // Reverse over reverse: the JVP of a gradient sweep has a form of its own.
        .chain(
            grad(f, &[0])
                .ok()
                .and_then(|g| grad(&g, &float_params(&g)).ok()),
        ) {
            let t = text::print(&g);
            let back = text::parse(&t).unwrap_or_else(|e| panic!("{e}\n{t}"));
            assert_eq!(text::print(&back), t);
            assert_eq!(back, g, "{t}");
        }
    }
}

/// `grad` of `grad`: each entry of the gradient of `∂f/∂x` against
/// differences of `∂f/∂x`, and `∂²f/∂x²` against forward over reverse.
fn check_reverse_over_reverse(ctx: &str, f: &Function, args: &[Tensor], wrt: &[usize]) {
    let g = grad(f, &[0]).unwrap();
    let gg = grad(&g, wrt).unwrap();
    assert!(verify::verify(&gg).is_ok(), "{ctx}");
    let got = eval(&gg, args);
    for (k, w) in wrt.iter().enumerate() {
        let fd = fd_grad(&g, args, *w, 0, 1e-5);
        assert_close(&format!("{ctx}: ∂/∂{w} of ∂f/∂x"), &got[k].data, &fd, 1e-7);
    }
    let h = eval(&hessian(f, 0).unwrap(), args)[0].data[0];
    assert_close(&format!("{ctx}: vs hessian"), &got[0].data, &[h], 1e-12);
}

#[test]
fn reverse_over_reverse_matches_forward_over_reverse_and_differences() {
    let c = [0.5, -1.25, 2.0, 0.75];
    for ckpt in [Checkpoint::All, Checkpoint::Every(2), Checkpoint::Sqrt] {
        let args = horner_args(0.7, &c, 0.3, 0, 4);
        check_reverse_over_reverse(
            &format!("horner {ckpt:?}"),
            &horner(ckpt),
            &args,
            &[0, 1, 2],
        );
        let args = vec![
            Tensor::scalar(DType::F64, 3.0),
            Tensor::scalar(DType::F64, 3.0),
            Tensor::scalar(DType::F64, 1.5),
        ];
        check_reverse_over_reverse(&format!("newton {ckpt:?}"), &newton(ckpt), &args, &[0, 2]);
    }
}

#[test]
fn reverse_mode_through_a_third_derivative_is_refused_with_a_message() {
    let f = horner(Checkpoint::All);
    let g = grad(&grad(&f, &[0]).unwrap(), &[0]).unwrap();
    let r = std::panic::catch_unwind(|| grad(&g, &[0]));
    let msg = match r {
        Err(e) => e
            .downcast_ref::<transforms::Unsupported>()
            .map(|u| u.0.clone())
            .unwrap_or_default(),
        Ok(_) => String::new(),
    };
    assert!(msg.contains("forward mode"), "got: {msg:?}");
    // Forward mode over it works (its values: `tests/suite/loop_hessians.rs`).
    assert!(verify::verify(&jvp(&g)).is_ok());
}

/// Loops on the kernel path, run by the kernel interpreter (the CPU
/// backend's tests run them compiled): the fused program against the
/// reference, and the same tape.
#[test]
fn fused_loops_run_by_the_kernel_interpreter_match_the_reference() {
    use oxla_core::exec::InterpLauncher;
    use oxla_core::kernel::fusion::fuse;
    let c = [0.5, -1.25, 2.0, 0.75];
    let cases = [
        (
            horner(Checkpoint::Sqrt),
            horner_args(0.7, &c, 0.3, 0, 4),
            vec![0, 1, 2],
        ),
        (
            coupled(Checkpoint::Every(3)),
            coupled_args(3, 1, 9, 4),
            vec![0, 1, 2, 3],
        ),
        (
            newton(Checkpoint::Every(2)),
            vec![
                Tensor::scalar(DType::F64, 3.0),
                Tensor::scalar(DType::F64, 3.0),
                Tensor::scalar(DType::F64, 1.5),
            ],
            vec![0, 1, 2],
        ),
    ];
    for (f, args, wrt) in cases {
        // Reverse over reverse, where the first gradient is a scalar.
        let second = grad(&f, &[0]).ok().and_then(|g| grad(&g, &[0]).ok());
        let firsts = [f.clone(), grad(&f, &wrt).unwrap(), hessian(&f, 0).unwrap()];
        for g in firsts.into_iter().chain(second) {
            let p = fuse(&g).unwrap();
            control::reset_tape_peak();
            let want = eval(&g, &args);
            let tape = control::tape_peak_bytes();
            control::reset_tape_peak();
            let bufs: Vec<Buffer> = args.iter().map(Tensor::to_buffer).collect();
            let got = p.run(&InterpLauncher(&p.kernels), &bufs).unwrap();
            assert_eq!(control::tape_peak_bytes(), tape, "`{}`: tape", g.name);
            for (k, (x, w)) in got.iter().zip(&want).enumerate() {
                assert_close(
                    &format!("`{}` output {k}", g.name),
                    &x.to_f64(),
                    &w.data,
                    1e-12,
                );
            }
        }
    }
}

/// `check_schedule` refuses a loop step that breaks the executor's
/// preconditions.
#[test]
fn malformed_loop_steps_are_refused() {
    use oxla_core::kernel::fusion::fuse;
    let p = fuse(&grad(&coupled(Checkpoint::Every(2)), &[0, 1]).unwrap()).unwrap();
    p.check_schedule().unwrap();
    let refused = |what: &str, change: &dyn Fn(&mut oxla_core::exec::Program)| {
        let mut bad = p.clone();
        change(&mut bad);
        let e = bad.check_schedule().expect_err(what);
        assert!(e.contains("loop"), "{what}: {e}");
    };
    let n_kernels = p.kernels.len();
    let n_launches = p.launches.len();
    let n_buffers = p.buffers.len();
    fn first(q: &mut oxla_core::exec::Program) -> &mut oxla_core::exec::LoopStep {
        q.host_steps[0].as_loop_mut().expect("a loop step")
    }
    refused("a renumbered kernel that is another", &|q| {
        let n = &mut first(q).body;
        n.kernels[0] = (n.kernels[0] + 1) % n_kernels;
    });
    refused("a result written into an operand", &|q| {
        let s = first(q);
        s.outs[0] = s.args[2];
    });
    refused("a result written into a parameter", &|q| {
        first(q).outs[0] = 0;
    });
    refused("an operand of another type", &|q| {
        first(q).args.swap(0, 2);
    });
    refused("a missing operand", &|q| {
        first(q).args.pop();
    });
    refused("a step after the last launch", &|q| {
        first(q).at = n_launches + 1;
    });
    refused("an operand read before it is written", &|q| {
        let s = first(q);
        let k = s.args.len() - 1;
        s.args[k] = n_buffers - 1;
    });
}
