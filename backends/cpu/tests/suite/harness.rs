//! The differential harness of `tests/common` must report what a broken
//! kernel does: an output element left unwritten (where the reference is NaN,
//! and for bool outputs), and a result that is not the reference's infinity
//! or NaN. A "broken kernel" here is the real compiled kernel with its last
//! output element put back to the harness's pre-fill, as a kernel that
//! skipped it would leave it.

use crate::common;

use common::*;
use oxla_core::ops::elementwise::{BinaryOp, CmpOp};
use oxla_core::{Buffer, DType, Kernel};
use oxla_cpu::{run_checked, JitModule};

/// The kernel's buffers after the JIT with the last element of its first
/// output left as pre-filled, and after the interpreter.
fn run_skipping_last(k: &Kernel, inputs: &[Buffer], n: usize) -> (Vec<Buffer>, Vec<Buffer>) {
    let sizes = [n as i64];
    let mut want = with_outputs(k, &sizes, inputs);
    oxla_core::kernel::interp::run(k, &mut want, &sizes).unwrap();
    let jit = JitModule::compile(std::slice::from_ref(k)).unwrap();
    let mut got = with_outputs(k, &sizes, inputs);
    run_checked(jit.function(0), k, &mut got, &sizes).unwrap();
    // The harness itself accepts the kernel's true output.
    compare(k, &got, &want, 0.0).unwrap();
    let out = k.args.iter().position(|a| a.output).unwrap();
    let prefill = with_outputs(k, &sizes, inputs).swap_remove(out);
    got[out] = match (&got[out], &prefill) {
        (Buffer::F32(g), Buffer::F32(p)) => {
            Buffer::F32(g[..n - 1].iter().chain(&p[n - 1..]).copied().collect())
        }
        (Buffer::F64(g), Buffer::F64(p)) => {
            Buffer::F64(g[..n - 1].iter().chain(&p[n - 1..]).copied().collect())
        }
        (Buffer::Bool(g), Buffer::Bool(p)) => {
            Buffer::Bool(g[..n - 1].iter().chain(&p[n - 1..]).copied().collect())
        }
        other => panic!("unexpected buffers {other:?}"),
    };
    (got, want)
}

/// `out = x / y` in `ty`.
fn divide(ty: DType) -> Kernel {
    let mut kb = KernelBuilder::new("div", &["n"], vec![sym("n")], 0);
    let (x, y, o) = (kb.arg(ty, false), kb.arg(ty, false), kb.arg(ty, true));
    let (a, b) = (kb.load(x, vec![c(1)]), kb.load(y, vec![c(1)]));
    let q = kb.binary(BinaryOp::Div, a, b);
    kb.store(o, q);
    kb.build()
}

/// An unwritten float element whose reference is NaN (0/0) is an error.
#[test]
fn unwritten_element_with_nan_reference_is_an_error() {
    for ty in [DType::F32, DType::F64] {
        let k = divide(ty);
        let xs = [1.0, 2.0, 0.0];
        let ys = [4.0, 8.0, 0.0];
        let inputs = [Buffer::from_f64(ty, &xs), Buffer::from_f64(ty, &ys)];
        let (got, want) = run_skipping_last(&k, &inputs, xs.len());
        assert!(want[2].get(2).is_nan(), "the reference is NaN");
        let e = compare(&k, &got, &want, tol(ty)).expect_err("an unwritten element passed");
        assert!(e.contains("buffer 2[2]"), "{e}");
    }
}

/// An unwritten bool element whose reference is true is an error.
#[test]
fn unwritten_bool_element_is_an_error() {
    let mut kb = KernelBuilder::new("lt", &["n"], vec![sym("n")], 0);
    let (x, y) = (kb.arg(DType::F32, false), kb.arg(DType::F32, false));
    let o = kb.arg(DType::Bool, true);
    let (a, b) = (kb.load(x, vec![c(1)]), kb.load(y, vec![c(1)]));
    let lt = kb.cmp(CmpOp::Lt, a, b);
    kb.store(o, lt);
    let k = kb.build();
    let xs = [1.0, 3.0, 1.0];
    let ys = [2.0, 2.0, 2.0];
    let inputs = [
        Buffer::from_f64(DType::F32, &xs),
        Buffer::from_f64(DType::F32, &ys),
    ];
    let (got, want) = run_skipping_last(&k, &inputs, xs.len());
    assert_eq!(want[2].to_f64(), [1.0, 0.0, 1.0]);
    let e = compare(&k, &got, &want, 0.0).expect_err("an unwritten bool passed");
    assert!(e.contains("buffer 2[2]"), "{e}");
}

/// An infinite reference is met only by the same infinity; a NaN result
/// only by a NaN reference.
#[test]
fn infinities_and_nan_are_compared_exactly() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    for (got, want, ok) in [
        (inf, inf, true),
        (-inf, -inf, true),
        (nan, nan, true),
        (f64::MAX, inf, false),
        (-inf, inf, false),
        (0.0, -inf, false),
        (nan, inf, false),
        (nan, 1.0, false),
        (nan, 0.0, false),
        (1.0, nan, false),
        (inf, nan, false),
        (inf, f64::MAX, false),
    ] {
        assert_eq!(close(got, want, 1e-6), ok, "close({got}, {want})");
    }
    // Through the harness, with a kernel: x / y with y = 0 is ±inf.
    let k = divide(DType::F64);
    let inputs = [
        Buffer::from_f64(DType::F64, &[1.0, -1.0]),
        Buffer::from_f64(DType::F64, &[0.0, 0.0]),
    ];
    let mut want = with_outputs(&k, &[2], &inputs);
    oxla_core::kernel::interp::run(&k, &mut want, &[2]).unwrap();
    assert_eq!(want[2].to_f64(), [inf, -inf]);
    let mut got = want.clone();
    got[2] = Buffer::from_f64(DType::F64, &[1e300, -inf]);
    assert!(compare(&k, &got, &want, 1e-6).is_err());
    got[2] = Buffer::from_f64(DType::F64, &[inf, inf]);
    assert!(compare(&k, &got, &want, 1e-6).is_err());
}
