//! Object files for both ISA levels export the expected symbols; CLIF dumps
//! show the vector loop where one applies; the JIT module can live in a
//! static.

use crate::common;
use common::*;
use oxla_core::ops::elementwise::{BinaryOp, UnaryOp};
use oxla_core::{DType, Kernel};
use oxla_cpu::{clif_text, emit_object, host_supports_v3, run_checked, IsaLevel, JitModule};
use std::sync::OnceLock;

fn kernels() -> Vec<Kernel> {
    let mut dot = KernelBuilder::new("oxla_test_dot", &["n"], vec![sym("n")], 1);
    let (x, y, out) = (
        dot.arg(DType::F32, false),
        dot.arg(DType::F32, false),
        dot.arg(DType::F32, true),
    );
    let (a, b) = (dot.load(x, vec![c(1)]), dot.load(y, vec![c(1)]));
    let p = dot.binary(BinaryOp::Mul, a, b);
    dot.store(out, p);

    let mut t = KernelBuilder::new("oxla_test_exp_t", &["m", "n"], vec![sym("n"), sym("m")], 0);
    let (x, out) = (t.arg(DType::F64, false), t.arg(DType::F64, true));
    let a = t.load(x, vec![c(1), sym("n")]);
    let e = t.unary(UnaryOp::Exp, a);
    t.store(out, e);
    vec![dot.build(), t.build()]
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn object_files_export_every_kernel_at_both_levels() {
    for level in IsaLevel::ALL {
        let bytes = emit_object(&kernels(), level).expect("object");
        assert!(
            bytes.starts_with(b"\x7fELF") || cfg!(not(target_os = "linux")),
            "not an ELF object"
        );
        for k in kernels() {
            let name = format!("{}_{}", k.name, level.suffix());
            assert!(
                contains(&bytes, &name),
                "{name} missing from the {level:?} object"
            );
        }
        let other = if level == IsaLevel::Baseline {
            "_v3"
        } else {
            "_base"
        };
        assert!(!contains(&bytes, &format!("oxla_test_dot{other}")));
    }
}

#[test]
fn clif_shows_vector_loop_only_where_loads_are_contiguous() {
    let ks = kernels();
    let dot = clif_text(&ks[0]).expect("clif");
    assert!(dot.contains("f32x4") && dot.contains("load.f32x4"), "{dot}");
    let transposed = clif_text(&ks[1]).expect("clif");
    assert!(!transposed.contains("f64x2"), "{transposed}");
}

/// The translator rejects a malformed kernel with the kernel verifier's
/// error, and a well-formed one it cannot lower (values of a half type)
/// with its own.
#[test]
fn translation_verifies_then_checks_what_the_cpu_lowers() {
    let mut bad = kernels()[0].clone();
    bad.insts[2].kind = oxla_core::kernel::InstKind::Binary(BinaryOp::Mul, 0, 3);
    let e = clif_text(&bad).unwrap_err();
    assert!(e.contains("kernel `oxla_test_dot`: v2: uses v3"), "{e}");
    let mut half = kernels()[0].clone();
    half.insts[2].ty = DType::F16;
    half.verify().expect("half values are well formed");
    let e = clif_text(&half).unwrap_err();
    assert!(
        e.contains("v2: the CPU backend computes in f32, f64 or bool, not f16"),
        "{e}"
    );
}

static JIT: OnceLock<JitModule> = OnceLock::new();

#[test]
fn jit_module_lives_in_a_static_and_runs_on_threads() {
    let ks = kernels();
    let jit = JIT.get_or_init(|| JitModule::compile(&ks).expect("compile"));
    assert_eq!(jit.len(), 2);
    std::thread::scope(|s| {
        for t in 0..2 {
            let k = &ks[0];
            s.spawn(move || {
                let n = 100 + t;
                let x = oxla_core::Buffer::from_f64(DType::F32, &vec![1.5; n]);
                let y = oxla_core::Buffer::from_f64(DType::F32, &vec![2.0; n]);
                let mut bufs = vec![x, y, oxla_core::Buffer::zeros(DType::F32, 1)];
                run_checked(jit.function(0), k, &mut bufs, &[n as i64]).expect("run");
                assert_eq!(bufs[2].get(0), 3.0 * n as f64);
            });
        }
    });
}

#[test]
fn run_checked_rejects_bad_calls() {
    let ks = kernels();
    let jit = JitModule::compile(&ks).expect("compile");
    let f = jit.function(0);
    let buf = |n: usize| oxla_core::Buffer::zeros(DType::F32, n);
    assert!(
        run_checked(f, &ks[0], &mut [buf(3), buf(3)], &[3]).is_err(),
        "arity"
    );
    assert!(
        run_checked(f, &ks[0], &mut [buf(3), buf(2), buf(1)], &[3]).is_err(),
        "short input"
    );
    assert!(
        run_checked(f, &ks[0], &mut [buf(3), buf(3), buf(1)], &[-1]).is_err(),
        "negative size"
    );
    let wrong = oxla_core::Buffer::zeros(DType::F64, 3);
    assert!(
        run_checked(f, &ks[0], &mut [wrong, buf(3), buf(1)], &[3]).is_err(),
        "dtype"
    );
    assert!(run_checked(f, &ks[0], &mut [buf(3), buf(3), buf(1)], &[3]).is_ok());
}

#[test]
fn v3_level_runs_here_when_supported() {
    let ks = kernels();
    match JitModule::compile_at(&ks, IsaLevel::X86_64V3) {
        Ok(_) => assert!(host_supports_v3()),
        Err(e) => assert!(!host_supports_v3(), "{e}"),
    }
    if host_supports_v3() {
        for n in LENGTHS {
            let k = &ks[0];
            let jit = JitModule::compile_at(std::slice::from_ref(k), IsaLevel::X86_64V3).unwrap();
            let inputs = random_inputs(k, &[n], 3, -1.0, 1.0);
            let mut want = with_outputs(k, &[n], &inputs);
            oxla_core::kernel::interp::run(k, &mut want, &[n]).unwrap();
            let mut got = with_outputs(k, &[n], &inputs);
            run_checked(jit.function(0), k, &mut got, &[n]).unwrap();
            assert_eq!(unwritten(&got[2]), None, "n = {n}");
            assert!(close(got[2].get(0), want[2].get(0), 1e-4), "n = {n}");
        }
    }
}
