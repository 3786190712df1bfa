//! Loops on the kernel path: the loop tests' functions (Horner's rule, a
//! `for` loop reading its index; Newton's method, a `while` loop; a loop
//! over arrays with two carries), their JVPs, gradients (under every
//! checkpointing policy), Hessians (forward over reverse) and batched forms
//! with per-example trip counts, fused and run by the executor with the
//! JIT's kernels at both ISA levels and with the kernel interpreter,
//! against the reference interpreter on the unfused function, in f64 and
//! in f32; empty loops included. A reverse sweep's tape is the reference's,
//! byte for byte.

use crate::common as kernels;
use crate::ir_common as common;

use common::loops::*;
use common::*;
use oxla_core::exec::{FnLauncher, InterpLauncher, Launcher};
use oxla_core::kernel::fusion::fuse;
use oxla_core::ops::control::{self, Checkpoint};
use oxla_core::transforms::{grad, hessian, jvp, vmap};
use oxla_core::*;

/// f64: the kernels' sin, cos and tanh are within 4 ulp of the
/// reference's, the host JIT contracts `a·b + c` into FMAs, and the rest is
/// the same arithmetic in the same order; a few dozen steps amplify that a
/// little (every case passes at 2e-15, not at 4e-16). A wrong step, carry
/// or accumulation is an O(1) error.
const RTOL: f64 = 1e-12;

/// f32: the reference rounds every value to f32 as the kernels do, so only
/// the math functions and the FMAs differ, by a few ulp, amplified a
/// little by the steps that follow (every case passes at 4e-6, not at
/// 5e-7: about 10 ulp).
const RTOL_F32: f64 = 4e-6;

/// A chain of n fused multiply-adds against the same chain rounded twice
/// per step: within n·eps relative for these well-conditioned
/// polynomials (|x| < 1); 200 steps: 4.4e-14.
const FMA_RTOL: f64 = 1e-13;

const POLICIES: [Checkpoint; 5] = [
    Checkpoint::All,
    Checkpoint::Every(1),
    Checkpoint::Every(2),
    Checkpoint::Every(3),
    Checkpoint::Sqrt,
];

fn eval(f: &Function, args: &[Tensor]) -> Vec<Tensor> {
    interp::eval(f, args).unwrap_or_else(|e| panic!("evaluating `{}`: {e}", f.name))
}

/// `f` with every f64 value in f32 (its text form with the type renamed),
/// and Newton's tolerance 1e-13 raised to 1e-4, which f32 can meet.
fn in_f32(f: &Function) -> Function {
    let text = text::print(f)
        .replace("f64", "f32")
        .replace(&format!("{}", 1e-13), "0.0001")
        .replace(&format!("{:?}", 1e-13), "0.0001");
    let g = text::parse(&text).unwrap_or_else(|e| panic!("`{}` in f32: {e}", f.name));
    verify::verify(&g).unwrap();
    g
}

fn to_f32(args: &[Tensor]) -> Vec<Tensor> {
    args.iter()
        .map(|a| match a.dtype {
            DType::F64 => Tensor::new(DType::F32, a.shape.clone(), a.data.clone()),
            _ => a.clone(),
        })
        .collect()
}

/// `f` fused and run on `args` by every launcher against the reference,
/// within `rtol` (0: bit for bit, except the host JIT's where it contracts
/// `a·b + c` into one rounding, an FMA: then within `FMA_RTOL`); the tape
/// a reverse sweep keeps is the reference's. Returns the number of runs.
fn check(ctx: &str, f: &Function, args: &[Tensor], rtol: f64) -> usize {
    let p = fuse(f).unwrap_or_else(|e| panic!("{ctx}: fuse: {e}"));
    p.check_schedule()
        .unwrap_or_else(|e| panic!("{ctx}: {e}\n{}", p.text()));
    assert!(
        !p.host_steps.is_empty(),
        "{ctx}: no loop step\n{}",
        p.text()
    );
    control::reset_tape_peak();
    let want = eval(f, args);
    let want_tape = control::tape_peak_bytes();
    let jit = kernels::Compiled::new(&p.kernels);
    let launchers: [(&str, &dyn Launcher); 3] = [
        ("JIT host", &FnLauncher(&jit.host)),
        ("JIT baseline", &FnLauncher(&jit.base)),
        ("kernel interpreter", &InterpLauncher(&p.kernels)),
    ];
    for (name, launcher) in launchers {
        control::reset_tape_peak();
        let got = kernels::run_program(&p, launcher, args);
        assert_eq!(
            control::tape_peak_bytes(),
            want_tape,
            "{ctx}, {name}: tape bytes"
        );
        assert_eq!(got.len(), want.len(), "{ctx}, {name}: outputs");
        let rtol = match name {
            "JIT host" if rtol == 0.0 && oxla_cpu::host_supports_v3() => FMA_RTOL,
            _ => rtol,
        };
        for (o, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.dtype(), w.dtype, "{ctx}, {name}: output {o} dtype");
            let g = g.to_f64();
            assert_close(
                &format!("{ctx}, {name}: output {o}\n{}", p.text()),
                &g,
                &w.data,
                rtol,
            );
        }
    }
    launchers.len()
}

/// `f` and its derivatives, in f64 and in f32.
fn check_all(ctx: &str, f: &Function, wrt: &[usize], args: &[Tensor], second: bool) -> usize {
    let mut forms = vec![
        ("f", f.clone(), args.to_vec()),
        ("grad", grad(f, wrt).unwrap(), args.to_vec()),
    ];
    let mut jargs = args.to_vec();
    let mut r = rng(5);
    for p in &f.params {
        if f.dtype(*p).is_float() {
            let a = &args[f.params.iter().position(|q| q == p).unwrap()];
            jargs.push(random_tensor(
                &mut r,
                DType::F64,
                a.shape.clone(),
                (-1.0, 1.0),
            ));
        }
    }
    forms.push(("jvp", jvp(f), jargs));
    if second {
        forms.push(("hessian", hessian(f, 0).unwrap(), args.to_vec()));
    }
    let mut runs = 0;
    for (what, g, a) in &forms {
        runs += check(&format!("{ctx}: {what}"), g, a, RTOL);
        runs += check(
            &format!("{ctx}: {what} in f32"),
            &in_f32(g),
            &to_f32(a),
            RTOL_F32,
        );
    }
    runs
}

#[test]
fn a_for_loop_reading_its_index() {
    let c = [0.5, -1.25, 2.0, 0.75, -0.3, 0.2];
    let mut runs = 0;
    for ckpt in POLICIES {
        for (lo, hi) in [(0, 6), (2, 5), (1, 2), (3, 1), (4, 4)] {
            let args = horner_args(0.9, &c, -0.2, lo, hi);
            let ctx = format!("horner {lo}..{hi} {ckpt:?}");
            runs += check_all(&ctx, &horner(ckpt), &[0, 1, 2], &args, true);
        }
    }
    assert!(runs > 0);
}

#[test]
fn a_while_loop() {
    let mut runs = 0;
    for ckpt in [Checkpoint::All, Checkpoint::Every(2), Checkpoint::Sqrt] {
        // The last runs no step: x0 = √a already.
        for (a, x0) in [(2.0, 2.0), (10.0, 10.0), (0.3, 1.0), (4.0, 2.0)] {
            let args = vec![
                Tensor::scalar(DType::F64, a),
                Tensor::scalar(DType::F64, x0),
                Tensor::scalar(DType::F64, 1.5),
            ];
            let ctx = format!("newton a={a} {ckpt:?}");
            runs += check_all(&ctx, &newton(ckpt), &[0, 1, 2], &args, true);
        }
    }
    assert!(runs > 0);
}

#[test]
fn a_loop_over_arrays_with_two_carries() {
    let mut runs = 0;
    for ckpt in POLICIES {
        for (m, lo, hi) in [(1, 0, 3), (5, 0, 20), (17, 2, 9), (4, 5, 5), (0, 0, 4)] {
            let args = coupled_args(m, lo, hi, 7);
            let ctx = format!("coupled m={m} {lo}..{hi} {ckpt:?}");
            runs += check_all(&ctx, &coupled(ckpt), &[0, 1, 2, 3], &args, m < 6);
        }
    }
    assert!(runs > 0);
}

#[test]
fn batched_loops_with_per_example_trip_counts() {
    let c = [0.5, -1.25, 2.0, 0.75, -0.3];
    let bounds = [(0i64, 5i64), (1, 3), (2, 2), (0, 1), (4, 5)];
    let xs = [0.3, -0.6, 1.1, 0.9, 0.25];
    let axes = [Some(0), None, None, Some(0), Some(0)];
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
    let mut runs = 0;
    for ckpt in [Checkpoint::All, Checkpoint::Every(2)] {
        let f = horner(ckpt);
        for (what, g) in [
            ("vmap", vmap(&f, &axes).unwrap()),
            (
                "vmap of grad",
                vmap(&grad(&f, &[0, 1]).unwrap(), &axes).unwrap(),
            ),
        ] {
            let ctx = format!("horner {what} {ckpt:?}");
            runs += check(&ctx, &g, &args, RTOL);
            runs += check(
                &format!("{ctx} in f32"),
                &in_f32(&g),
                &to_f32(&args),
                RTOL_F32,
            );
        }
    }
    let f = newton(Checkpoint::All);
    let args = vec![
        Tensor::vector(DType::F64, &[2.0, 100.0, 0.5, 1.0]),
        Tensor::vector(DType::F64, &[2.0, 100.0, 1.0, 1.0]),
        Tensor::scalar(DType::F64, 1.0),
    ];
    let axes = [Some(0), Some(0), None];
    for (what, g) in [
        ("vmap", vmap(&f, &axes).unwrap()),
        (
            "vmap of grad",
            vmap(&grad(&f, &[0, 2]).unwrap(), &axes).unwrap(),
        ),
    ] {
        runs += check(&format!("newton {what}"), &g, &args, RTOL);
    }
    assert!(runs > 0);
}

/// Horner's rule returning the loop's result itself (no final `sin`).
fn horner_loop_only(ckpt: Checkpoint) -> Function {
    let mut f = horner(ckpt);
    let e = f.eqns.iter().find(|e| e.op.is_control()).unwrap();
    f.outs = vec![e.outs[0]];
    verify::verify(&f).unwrap();
    f
}

/// Where every kernel is exact (products, sums, loads and scatter-adds in
/// the reference's order), 200 steps and their reverse sweep under every
/// policy are the reference bit for bit.
#[test]
fn an_exact_loop_matches_the_reference_bit_for_bit() {
    let c: Vec<f64> = (0..200)
        .map(|k| ((k * 37 % 23) as f64 - 11.0) / 7.0)
        .collect();
    let mut runs = 0;
    for ckpt in POLICIES {
        let args = horner_args(0.93, &c, 0.1, 0, 200);
        let f = horner_loop_only(ckpt);
        for (what, g) in [("f", f.clone()), ("grad", grad(&f, &[0, 1, 2]).unwrap())] {
            runs += check(&format!("horner {what} {ckpt:?}"), &g, &args, 0.0);
        }
    }
    assert!(runs > 0);
}

/// The program's text shows each loop step with its nested programs.
#[test]
fn the_program_text_shows_nested_programs() {
    let p = fuse(&grad(&newton(Checkpoint::Every(2)), &[0]).unwrap()).unwrap();
    let t = p.text();
    assert!(t.contains("loop_reverse while every:2"), "{t}");
    for part in ["body `", "cond `", "back `"] {
        assert!(t.contains(part), "{part} missing:\n{t}");
    }
}

/// `u · a^(hi − lo)` by a loop whose bounds are integer literals (each
/// written into a buffer of its own by a kernel whose store converts).
#[test]
fn a_loop_with_literal_bounds() {
    let mut body = Function::new("step");
    let a = body.add_param("a", vector("n"));
    let _i = body.add_param("i", scalar(DType::I64));
    let u = body.add_param("u", vector("n"));
    body.outs = vec![body.mul(u, a)];
    let mut f = Function::new("powers");
    let a = f.add_param("a", vector("n"));
    let u0 = f.add_param("u0", vector("n"));
    let lo = f.literal(1.0, DType::I64);
    let hi = f.literal(4.0, DType::I64);
    let r = control::push_for(&mut f, lo, hi, &[a], &[u0], body, Checkpoint::Every(2)).unwrap();
    let s = f.reduce_sum(r[0], vec![0]);
    f.outs = vec![s];
    let mut rng = rng(3);
    let args: Vec<Tensor> = (0..2)
        .map(|_| random_tensor(&mut rng, DType::F64, vec![7], (-1.5, 1.5)))
        .collect();
    let want: f64 = args[0]
        .data
        .iter()
        .zip(&args[1].data)
        .map(|(a, u)| u * a * a * a)
        .sum();
    assert_close("powers", &eval(&f, &args)[0].data, &[want], 1e-14);
    let runs = check_all("powers", &f, &[0, 1], &args, true);
    assert!(runs > 0);
}
