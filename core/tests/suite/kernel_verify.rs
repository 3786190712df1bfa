//! The kernel verifier (`Kernel::verify`) on what fusion produces: every
//! kernel of every catalog function (and of its gradient, its batched form
//! and the loops') verifies, in release builds too, where `fuse` does not
//! run the verifier itself; and a fused kernel broken afterwards is caught,
//! by the verifier and by the interpreter's call check, which runs it.

use crate::common;

use common::loops::{coupled, horner, newton};
use common::*;
use oxla_core::kernel::fusion::fuse;
use oxla_core::kernel::{interp, InstKind};
use oxla_core::ops::control::Checkpoint;
use oxla_core::transforms::{grad, vmap};
use oxla_core::*;

/// Fuse `f` and verify every kernel of the program (nested ones included).
fn fused_kernels_verify(f: &Function) -> usize {
    let p = fuse(f).unwrap_or_else(|e| panic!("fuse `{}`: {e}", f.name));
    for k in &p.kernels {
        k.verify()
            .unwrap_or_else(|e| panic!("`{}` fused into {e}\n{k}", f.name));
    }
    p.kernels.len()
}

/// The gradient of `f` with respect to its float parameters.
fn float_grad(f: &Function) -> Function {
    let floats: Vec<usize> = (0..f.params.len())
        .filter(|i| f.dtype(f.params[*i]).is_float())
        .collect();
    grad(&weighted_sum(f), &floats).unwrap_or_else(|e| panic!("grad `{}`: {e}", f.name))
}

#[test]
fn every_fused_kernel_of_the_catalog_verifies() {
    let mut kernels = 0;
    for c in catalog(&Dim::sym("n")) {
        kernels += fused_kernels_verify(&c.f);
        kernels += fused_kernels_verify(&float_grad(&c.f));
    }
    for c in catalog(&Dim::Const(4)) {
        let v = vmap(&c.f, &vec![Some(0); c.f.params.len()]).unwrap();
        kernels += fused_kernels_verify(&v);
    }
    for ckpt in [Checkpoint::All, Checkpoint::Every(2)] {
        for f in [horner(ckpt), newton(ckpt), coupled(ckpt)] {
            kernels += fused_kernels_verify(&f);
            kernels += fused_kernels_verify(&float_grad(&f));
        }
    }
    assert!(kernels > 500, "only {kernels} kernels checked");
}

/// A kernel fusion produced, broken by hand, is rejected naming the kernel
/// and the instruction, by `verify` and by `check_call` (so the kernel
/// interpreter never runs it).
#[test]
fn a_broken_fused_kernel_is_caught() {
    let c = catalog(&Dim::sym("n"))
        .into_iter()
        .find(|c| c.family == "composite")
        .expect("a composite");
    let p = fuse(&c.f).unwrap();
    let k = p
        .kernels
        .iter()
        .find(|k| {
            k.insts
                .iter()
                .any(|i| matches!(i.kind, InstKind::Binary(..)))
        })
        .expect("a kernel with arithmetic")
        .clone();
    k.verify().unwrap();
    let i = k
        .insts
        .iter()
        .position(|i| matches!(i.kind, InstKind::Binary(..)))
        .unwrap();
    let mut bad = k.clone();
    let InstKind::Binary(op, a, _) = bad.insts[i].kind else {
        unreachable!()
    };
    // An operand defined after its use.
    bad.insts[i].kind = InstKind::Binary(op, a, i);
    let want = format!("kernel `{}`: v{i}: uses v{i}, which is not defined", k.name);
    let e = bad.verify().unwrap_err();
    assert!(e.contains(&want), "{e}");
    let mut bufs: Vec<Buffer> = bad.args.iter().map(|a| Buffer::zeros(a.dtype, 8)).collect();
    let sizes = vec![2; bad.sizes.len()];
    let e = interp::run(&bad, &mut bufs, &sizes).unwrap_err();
    assert!(e.contains(&want), "{e}");
}
