//! Whole fused programs on the GPU against the reference interpreter.
//! Without a GPU the GPU tests record a skip (`common::gpu_or_skip`) and
//! pass, or fail under env `OXLA_REQUIRE_GPU=1`; the
//! host-side checks (fusion, bounds, PTX assembly, the same comparison run
//! with the kernel interpreter) run everywhere.

use crate::common;

use common::{cases, check, fused_sum, gpu_or_skip, inputs, no_gpu_or_skip, LENGTHS};
use oxla_core::exec::InterpLauncher;
use oxla_core::kernel::fusion::fuse;
use oxla_core::{Buffer, DType};
use oxla_cuda::CudaProgram;
use oxla_ptx::{emit_module, ptxas, Arch};

#[test]
fn new_without_gpu_is_an_error_not_a_panic() {
    if !no_gpu_or_skip() {
        return;
    }
    let f = fused_sum(DType::F32);
    let e = CudaProgram::from_function(&f)
        .err()
        .expect("no GPU: an error");
    assert!(e.contains("no GPU"), "{e}");
    assert!(CudaProgram::new(fuse(&f).unwrap()).is_err());
}

/// The cases, their tolerances and their programs' bounds, checked on the
/// host: the programs run with the kernel interpreter must match.
#[test]
fn cases_hold_on_the_host() {
    for case in cases() {
        let p = fuse(&case.f).unwrap();
        for n in LENGTHS {
            let lens: Vec<usize> = inputs(&case.f, n).iter().map(Buffer::len).collect();
            let sizes = p.bind(&lens).unwrap();
            p.check_bounds(&sizes)
                .unwrap_or_else(|e| panic!("{} at n={n}: {e}", case.name));
            check(&case, n, |args| p.run(&InterpLauncher(&p.kernels), args))
                .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        }
    }
}

#[test]
fn programs_assemble_for_sm80_and_sm90() {
    let ptxas = ptxas::ptxas_or_skip();
    for (i, case) in cases().iter().enumerate() {
        let p = fuse(&case.f).unwrap();
        for arch in [Arch::Sm80, Arch::Sm90] {
            let ptx = emit_module(&p.kernels, arch).unwrap();
            if let Some(ptxas) = &ptxas {
                ptxas::assemble(ptxas, &ptx, arch, &format!("program{i}"))
                    .unwrap_or_else(|e| panic!("{}: {e}", case.name));
            }
        }
    }
}

#[test]
fn programs_match_interpreter() {
    if !gpu_or_skip() {
        return;
    }
    for case in cases() {
        let cp = CudaProgram::from_function(&case.f)
            .unwrap_or_else(|e| panic!("{}: loading: {e}", case.name));
        for n in LENGTHS {
            check(&case, n, |args| cp.run(args)).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        }
    }
    // One length past a million for the headline sum.
    let case = &cases()[0];
    let cp = CudaProgram::from_function(&case.f).unwrap();
    check(case, (1 << 20) + 3, |args| cp.run(args)).unwrap();
}

/// Outputs of one program feed another without leaving the device; nothing
/// waits until the final download.
#[test]
fn device_arrays_chain_between_programs() {
    if !gpu_or_skip() {
        return;
    }
    let all = cases();
    let (sum, grad) = (&all[0], &all[1]);
    let ps = CudaProgram::from_function(&sum.f).unwrap();
    let pg = CudaProgram::from_function(&grad.f).unwrap();
    let n = 1001;
    let host = inputs(&grad.f, n);
    let dev: Vec<_> = host.iter().map(|b| pg.upload(b).unwrap()).collect();
    let refs: Vec<_> = dev.iter().collect();
    let g = pg.run_device(&refs).unwrap();
    assert_eq!(g.len(), 3);
    let refs: Vec<_> = g.iter().collect();
    let s = ps.run_device(&refs).unwrap();
    let got = ps.download(&s[0]).unwrap().get(0);
    // The gradients of sum(x*2*y+z) are (2y, 2x, 1): the sum is 8·Σxy + n.
    let (x, y) = (host[0].to_f64(), host[1].to_f64());
    let want = 8.0 * x.iter().zip(&y).map(|(a, b)| a * b).sum::<f64>() + n as f64;
    assert!(
        (got - want).abs() <= 1e-3 * (1.0 + want.abs()),
        "{got} vs {want}"
    );
}

#[test]
fn device_errors_name_the_argument() {
    if !gpu_or_skip() {
        return;
    }
    let cp = CudaProgram::from_function(&fused_sum(DType::F32)).unwrap();
    let a = cp.upload(&Buffer::zeros(DType::F32, 5)).unwrap();
    let short = cp.upload(&Buffer::zeros(DType::F32, 4)).unwrap();
    let wide = cp.upload(&Buffer::zeros(DType::F64, 5)).unwrap();
    let e = cp.run_device(&[&a, &short, &a]).err().unwrap();
    assert!(e.contains("`y`"), "{e}");
    let e = cp.run_device(&[&a, &a, &wide]).err().unwrap();
    assert!(e.contains("`z`") && e.contains("f64"), "{e}");
    assert!(cp.run_device(&[&a, &a]).is_err());
    // The same array for every argument is fine (inputs are only read).
    let out = cp.run_device(&[&a, &a, &a]).unwrap();
    assert_eq!(cp.download(&out[0]).unwrap().to_f64(), vec![0.0]);
}
