//! Conds on the kernel path: the cond tests' functions, their JVPs,
//! gradients, Hessians and batched forms (with an unbatched predicate: a
//! cond step; a batched one: selects), fused and run by the executor with
//! the JIT's kernels at both ISA levels and with the kernel interpreter,
//! against the reference interpreter on the unfused function, in f64 and in
//! f32, on both sides of the predicate, at sizes around the vector widths.

use crate::common as kernels;
use crate::ir_common as common;

use common::cond::*;
use common::*;
use oxla_core::exec::{FnLauncher, InterpLauncher, Launcher};
use oxla_core::kernel::fusion::fuse;
use oxla_core::transforms::{grad, hessian, jvp, vmap};
use oxla_core::*;

/// f64: the kernels' sin and log are within a few ulp of the reference's
/// and the host JIT contracts `a·b + c` into FMAs; a wrong branch is an
/// O(1) error.
const RTOL: f64 = 1e-12;
/// f32: the reference rounds every value to f32 as the kernels do; the
/// math functions differ by a few ulp.
const RTOL_F32: f64 = 4e-6;

fn in_f32(f: &Function) -> Function {
    let g = text::parse(&text::print(f).replace("f64", "f32"))
        .unwrap_or_else(|e| panic!("`{}` in f32: {e}", f.name));
    verify::verify(&g).unwrap();
    g
}

fn to_f32(args: &[Tensor]) -> Vec<Tensor> {
    args.iter()
        .map(|a| Tensor::new(DType::F32, a.shape.clone(), a.data.clone()))
        .collect()
}

/// `f` fused and run on `args` by every launcher against the reference
/// within `rtol`; `steps` says whether the program must have a host step.
/// Returns the number of runs.
fn check(ctx: &str, f: &Function, args: &[Tensor], rtol: f64, steps: bool) -> usize {
    let p = fuse(f).unwrap_or_else(|e| panic!("{ctx}: fuse: {e}"));
    p.check_schedule()
        .unwrap_or_else(|e| panic!("{ctx}: {e}\n{}", p.text()));
    assert_eq!(
        !p.host_steps.is_empty(),
        steps,
        "{ctx}: cond steps\n{}",
        p.text()
    );
    let want = interp::eval(f, args).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    let jit = kernels::Compiled::new(&p.kernels);
    let launchers: [(&str, &dyn Launcher); 3] = [
        ("JIT host", &FnLauncher(&jit.host)),
        ("JIT baseline", &FnLauncher(&jit.base)),
        ("kernel interpreter", &InterpLauncher(&p.kernels)),
    ];
    for (name, launcher) in launchers {
        let got = kernels::run_program(&p, launcher, args);
        assert_eq!(got.len(), want.len(), "{ctx}, {name}: outputs");
        for (o, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.dtype(), w.dtype, "{ctx}, {name}: output {o} dtype");
            assert_close(
                &format!("{ctx}, {name}: output {o}\n{}", p.text()),
                &g.to_f64(),
                &w.data,
                rtol,
            );
        }
    }
    launchers.len()
}

fn check_both(ctx: &str, f: &Function, args: &[Tensor], steps: bool) -> usize {
    check(ctx, f, args, RTOL, steps)
        + check(
            &format!("{ctx} in f32"),
            &in_f32(f),
            &to_f32(args),
            RTOL_F32,
            steps,
        )
}

#[test]
fn a_cond_and_its_derivatives_on_both_sides() {
    let f = branchy();
    let mut runs = 0;
    let mut r = rng(11);
    for n in [0usize, 1, 3, 4, 8, 17] {
        for x in [0.7, -0.5] {
            let y = random_tensor(&mut r, DType::F64, vec![n], (-1.5, 1.5));
            let args = vec![Tensor::scalar(DType::F64, x), y.clone()];
            let dir = vec![
                Tensor::scalar(DType::F64, 0.4),
                random_tensor(&mut r, DType::F64, vec![n], (-1.0, 1.0)),
            ];
            let jargs: Vec<Tensor> = args.iter().chain(&dir).cloned().collect();
            let ctx = format!("n={n} x={x}");
            runs += check_both(&format!("{ctx}: f"), &f, &args, true);
            runs += check_both(&format!("{ctx}: jvp"), &jvp(&f), &jargs, true);
            let g = grad(&f, &[0, 1]).unwrap();
            runs += check_both(&format!("{ctx}: grad"), &g, &args, true);
            if n < 5 {
                let h = hessian(&f, 1).unwrap();
                runs += check_both(&format!("{ctx}: hessian"), &h, &args, true);
            }
            // Batched over `y` only: the predicate is shared, still a cond step.
            let yb = random_tensor(&mut r, DType::F64, vec![3, n], (-1.5, 1.5));
            let bargs = vec![args[0].clone(), yb.clone()];
            let b = vmap(&g, &[None, Some(0)]).unwrap();
            runs += check_both(&format!("{ctx}: vmap grad, shared x"), &b, &bargs, true);
            // A batched predicate: both branches and a select, no host step.
            let xb = Tensor::vector(DType::F64, &[x, -x, 2.0 * x]);
            let b = vmap(&g, &[Some(0), Some(0)]).unwrap();
            runs += check_both(
                &format!("{ctx}: vmap grad, batched x"),
                &b,
                &[xb, yb],
                false,
            );
        }
    }
    assert!(runs > 0);
}

/// `if x > 0 { ln(x) } else { 0 }`: its gradient is finite (exactly 0) on
/// the kernel path where the untaken side is NaN or infinite.
#[test]
fn the_untaken_side_does_not_reach_the_gradient() {
    let g = grad(&log_or_zero(false), &[0]).unwrap();
    for x in [-1.0, 0.0, 3.0] {
        let args = vec![Tensor::scalar(DType::F64, x)];
        check(&format!("grad log_or_zero at {x}"), &g, &args, 0.0, true);
        let p = fuse(&g).unwrap();
        let got = kernels::run_program(&p, &InterpLauncher(&p.kernels), &args);
        let want = if x > 0.0 { 1.0 / x } else { 0.0 };
        assert_eq!(got[0].to_f64(), [want], "at {x}");
    }
}
