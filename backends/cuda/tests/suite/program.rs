//! Whole fused programs on the GPU against the reference interpreter.
//! Without a GPU the GPU tests record a skip (`common::gpu_or_skip`) and
//! pass, or fail under env `OXLA_REQUIRE_GPU=1`; the
//! host-side checks (fusion, bounds, PTX assembly, the same comparison run
//! with the kernel interpreter) run everywhere.

use crate::common;

use common::{
    cases, check, check_shaped, control_cases, fused_sum, gpu_or_skip, inputs, no_gpu_or_skip,
    LENGTHS,
};
use oxla_core::exec::InterpLauncher;
use oxla_core::kernel::fusion::fuse;
use oxla_core::{Buffer, DType, Dim, Function, Op, Shape, Tensor, Type};
use oxla_cuda::{emulate, CudaProgram, Gpu};
use oxla_ptx::{emit_module, ptxas, Arch};
use std::sync::Arc;

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
/// host: the programs run with the kernel interpreter must match, by the
/// CPU executor and by the CUDA runner's own schedule and host steps
/// (`oxla_cuda::emulate`: everything `run_device` does but the driver
/// calls), with arguments flat and shaped.
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
            check(&case, n, |args| emulate::run(&p, args))
                .unwrap_or_else(|e| panic!("{} (emulated): {e}", case.name));
            check_shaped(&case, n, |args| emulate::run_shaped(&p, args))
                .unwrap_or_else(|e| panic!("{} (emulated, shaped): {e}", case.name));
        }
    }
}

/// The loop and cond cases compile to host steps (the CUDA runner no longer
/// refuses them), both branches of each cond are taken over the lengths,
/// and the loops' trip counts vary.
#[test]
fn control_cases_have_host_steps_and_take_both_branches() {
    for case in control_cases() {
        let p = fuse(&case.f).unwrap();
        assert!(!p.host_steps.is_empty(), "{}: no host step", case.name);
    }
    // `scalar_cond` takes its then branch (sum(x) > 0) at some lengths and
    // its else branch at others.
    let f = common::scalar_cond(false);
    let sides: Vec<bool> = LENGTHS
        .iter()
        .map(|n| inputs(&f, *n)[0].to_f64().iter().sum::<f64>() > 0.0)
        .collect();
    assert!(sides.contains(&true) && sides.contains(&false), "{sides:?}");
    // The while loop's trip count (its second output less `lim`) differs
    // between lengths, and is 0 for empty arrays.
    let f = common::halving_while(oxla_core::ops::control::Checkpoint::All, false);
    let trips: Vec<f64> = LENGTHS
        .iter()
        .map(|n| {
            let args = inputs(&f, *n);
            let p = fuse(&f).unwrap();
            let out = emulate::run(&p, &args).unwrap();
            out[1].get(0) - args[1].get(0)
        })
        .collect();
    assert_eq!(trips[0], 0.0, "{trips:?}");
    assert!(trips.iter().any(|t| *t >= 3.0), "{trips:?}");
}

/// The launches of `loop_matmul`'s body that cuBLAS runs at n = 1000 (the
/// plan `CudaProgram` follows): one product per step.
fn body_products_on_cublas() -> usize {
    use oxla_core::exec::ArgDims;
    use oxla_core::kernel::matmul::MatmulKernel;
    use oxla_cuda::gemm_plan::plan_launch;
    let p = fuse(&common::loop_matmul(false)).unwrap();
    let body = &p.host_steps[0].as_loop().expect("a loop step").body.program;
    let dims = [
        ArgDims::new(&[4, 4]),
        ArgDims::new(&[]),
        ArgDims::new(&[1000, 4]),
    ];
    let args: Vec<(usize, ArgDims)> = dims
        .iter()
        .map(|d| {
            let d = d.unwrap();
            (d.get().unwrap().iter().product(), d)
        })
        .collect();
    let sizes = body.bind_dims(&args).unwrap();
    (0..body.launches.len())
        .filter(|l| {
            let k = &body.kernels[body.launches[*l].kernel];
            let ks: Vec<i64> = body
                .launch_sizes(*l)
                .iter()
                .map(|s| sizes[*s] as i64)
                .collect();
            MatmulKernel::of(k).is_some_and(|m| plan_launch(&m, &ks).is_some())
        })
        .count()
}

#[test]
fn a_loop_body_product_is_planned_for_cublas() {
    assert_eq!(body_products_on_cublas(), 1);
}

/// Without a GPU, loading a program with loops and conds errs (never panics).
#[test]
fn loading_host_steps_without_gpu_is_an_error() {
    if !no_gpu_or_skip() {
        return;
    }
    for case in control_cases() {
        let e = CudaProgram::from_function(&case.f)
            .err()
            .expect("no GPU: an error");
        assert!(e.contains("no GPU"), "{}: {e}", case.name);
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

/// `x: [m, k]`, `y: [k, m]` → `x + yᵀ`: two dimension symbols per
/// argument, which only shaped arrays bind.
fn two_symbols_each() -> Function {
    let mut f = Function::new("two_symbols_each");
    let (m, k) = (Dim::sym("m"), Dim::sym("k"));
    let x = f.add_param(
        "x",
        Type::new(DType::F64, Shape(vec![m.clone(), k.clone()])),
    );
    let y = f.add_param("y", Type::new(DType::F64, Shape(vec![k, m])));
    let yt = f.push(Op::Transpose { perm: vec![1, 0] }, &[y]).unwrap();
    f.outs = vec![f.add(x, yt)];
    f
}

/// Device arrays carry their shapes: a shaped upload binds two symbols in
/// one argument, results come back shaped, `reshape`/`with_dims` check
/// the element count; a flat upload of the same arrays cannot bind.
#[test]
fn shaped_device_arrays_bind_and_come_back_shaped() {
    if !gpu_or_skip() {
        return;
    }
    let gpu = Gpu::open(0).unwrap();
    let cp = CudaProgram::load_on(&gpu, fuse(&two_symbols_each()).unwrap()).unwrap();
    let x = Buffer::from_f64(DType::F64, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let y = Buffer::from_f64(DType::F64, &[10.0, 40.0, 20.0, 50.0, 30.0, 60.0]);
    let dx = gpu.upload_shaped(&x, &[2, 3]).unwrap();
    let dy = cp.upload_shaped(&y, &[3, 2]).unwrap();
    assert!(dx.is_shaped() && dx.dims() == [2, 3] && dx.len() == 6);
    let out = cp.run_device(&[&dx, &dy]).unwrap();
    assert_eq!(out[0].dims(), [2, 3]);
    assert!(out[0].is_shaped());
    assert_eq!(
        cp.download(&out[0]).unwrap().to_f64(),
        [11.0, 22.0, 33.0, 44.0, 55.0, 66.0]
    );
    // Flat arrays: the error the first GPU run gave for 52 products.
    let (fx, fy) = (gpu.upload(&x).unwrap(), gpu.upload(&y).unwrap());
    assert!(!fx.is_shaped() && fx.dims() == [6]);
    let e = cp.run_device(&[&fx, &fy]).err().unwrap();
    assert!(e.contains("cannot infer dimension"), "{e}");
    // Given shapes without a copy, they bind.
    let fx = fx.with_dims(&[2, 3]).unwrap();
    let mut fy = fy;
    fy.reshape(&[3, 2]).unwrap();
    assert!(cp.run_device(&[&fx, &fy]).is_ok());
    // Wrong element counts and wrong dimensions are errors naming what.
    assert!(fy.reshape(&[4, 2]).is_err());
    assert_eq!(fy.dims(), [3, 2], "a failed reshape leaves the shape");
    assert!(gpu.upload_shaped(&x, &[4, 2]).is_err());
    let wrong = gpu.upload_shaped(&y, &[2, 3]).unwrap();
    let e = cp.run_device(&[&dx, &wrong]).err().unwrap();
    assert!(e.contains("`y`"), "{e}");
    // A result fed to another program keeps its shape.
    let twice = cp.run_device(&[&out[0], &fy]).unwrap();
    assert_eq!(twice[0].dims(), [2, 3]);
    let flat = twice.into_iter().next().unwrap().into_flat();
    assert_eq!(flat.dims(), [6]);
    // run_shaped: the same through host arrays.
    let got = cp
        .run_shaped(&[(x.clone(), vec![2, 3]), (y.clone(), vec![3, 2])])
        .unwrap();
    assert_eq!(got[0].1, [2, 3]);
}

/// One `Gpu` per device, shared: programs loaded on it queue on its one
/// stream, and its default memory pool keeps freed memory.
#[test]
fn programs_on_one_gpu_share_its_stream() {
    if !gpu_or_skip() {
        return;
    }
    let gpu = Gpu::open(0).unwrap();
    assert!(Arc::ptr_eq(&gpu, &Gpu::open(0).unwrap()));
    match gpu.caching_allocator() {
        Ok(()) => {}
        Err(e) => {
            assert!(!gpu.context().has_async_alloc(), "{e}");
            eprintln!("note: no caching allocator: {e}");
        }
    }
    let all = cases();
    let a = CudaProgram::load_on(&gpu, fuse(&all[0].f).unwrap()).unwrap();
    let b = CudaProgram::new(fuse(&all[1].f).unwrap()).unwrap();
    assert!(Arc::ptr_eq(a.gpu(), b.gpu()));
    assert!(Arc::ptr_eq(a.kernels().stream(), b.kernels().stream()));
    assert!(Gpu::open(1 << 20).is_err());
}

/// Loops, conds and reverse sweeps through `run_shaped` too (the results'
/// shapes checked), and every case again with a second call on the same
/// program (buffers from the pool).
#[test]
fn control_flow_runs_shaped_and_repeatedly() {
    if !gpu_or_skip() {
        return;
    }
    for case in cases() {
        let cp = CudaProgram::from_function(&case.f)
            .unwrap_or_else(|e| panic!("{}: loading: {e}", case.name));
        for n in LENGTHS {
            for _ in 0..2 {
                check_shaped(&case, n, |args| cp.run_shaped(args))
                    .unwrap_or_else(|e| panic!("{}: {e}", case.name));
            }
        }
    }
}

/// A loop's body with a matrix product runs it on cuBLAS at every step.
#[test]
fn loops_run_their_products_on_cublas() {
    if !gpu_or_skip() {
        return;
    }
    let f = common::loop_matmul(false);
    let cp = CudaProgram::from_function(&f).unwrap();
    if let Err(e) = cp.cublas() {
        eprintln!("note: no cuBLAS: {e}");
        return;
    }
    let case = cases()
        .into_iter()
        .find(|c| c.f.name == "loop_matmul")
        .unwrap();
    check(&case, 1000, |args| cp.run(args)).unwrap();
    assert_eq!(
        cp.cublas_launches(),
        5 * body_products_on_cublas(),
        "every step's product"
    );
}

/// `x = x/2 + c` for i in lo..hi (f64), its value and its gradient (a
/// reverse sweep, √n checkpoints) over 2000 steps, against the interpreter.
#[test]
fn long_loops_stay_on_the_device() {
    if !gpu_or_skip() {
        return;
    }
    long_loops(1000, 2000, |f, args| {
        let cp = CudaProgram::from_function(f)?;
        // Once to load and compile (the driver compiles the PTX on first
        // launch), so that the timed call measures the steps.
        cp.run(args)?;
        cp.run(args)
    });
}

/// `long_loops_stay_on_the_device` on the host (`oxla_cuda::emulate`),
/// shorter.
#[test]
fn long_loops_hold_on_the_host() {
    long_loops(10, 40, |f, args| emulate::run(&fuse(f)?, args));
}

fn long_loops(
    n: usize,
    steps: i64,
    run: impl Fn(&Function, &[Buffer]) -> Result<Vec<Buffer>, String>,
) {
    let vec = Type::new(DType::F64, Shape::vector(Dim::sym("n")));
    let mut body = Function::new("relax");
    let c = body.add_param("c", vec.clone());
    let _i = body.add_param("i", Type::scalar(DType::I64));
    let x = body.add_param("x", vec.clone());
    let half = body.full(0.5, DType::F64, &Shape::vector(Dim::sym("n")));
    let xh = body.mul(x, half);
    body.outs = vec![body.add(xh, c)];
    let mut f = Function::new("relax_loop");
    let c = f.add_param("c", vec.clone());
    let x0 = f.add_param("x0", vec);
    let lo = f.add_param("lo", Type::scalar(DType::I64));
    let hi = f.add_param("hi", Type::scalar(DType::I64));
    let r = oxla_core::ops::control::push_for(
        &mut f,
        lo,
        hi,
        &[c],
        &[x0],
        body,
        oxla_core::ops::control::Checkpoint::Sqrt,
    )
    .unwrap();
    let xx = f.mul(r[0], r[0]);
    f.outs = vec![f.reduce_sum(xx, vec![0])];
    let g = oxla_core::transforms::grad(&f, &[0, 1]).unwrap();
    let c: Vec<f64> = (0..n).map(|j| (j % 7) as f64 / 8.0 - 0.25).collect();
    let x0: Vec<f64> = (0..n).map(|j| (j % 5) as f64 - 2.0).collect();
    for (func, steps) in [(&f, steps), (&g, steps), (&g, 0), (&g, 1)] {
        let args = vec![
            Buffer::from_f64(DType::F64, &c),
            Buffer::from_f64(DType::F64, &x0),
            Buffer::I64(vec![3]),
            Buffer::I64(vec![3 + steps]),
        ];
        let tensors: Vec<Tensor> = args
            .iter()
            .map(|b| {
                let shape = if b.len() == n { vec![n] } else { vec![] };
                Tensor::from_buffer(shape, b)
            })
            .collect();
        let want = oxla_core::interp::eval(func, &tensors).unwrap();
        let t = std::time::Instant::now();
        let got = run(func, &args).unwrap();
        let dt = t.elapsed();
        eprintln!(
            "{} over {steps} steps: {:.1} ms ({:.1} us per step)",
            func.name,
            dt.as_secs_f64() * 1e3,
            dt.as_secs_f64() * 1e6 / steps.max(1) as f64
        );
        for (o, (gv, w)) in got.iter().zip(&want).enumerate() {
            for (j, w) in w.data.iter().enumerate() {
                let gj = gv.get(j);
                assert!(
                    (gj - w).abs() <= 1e-12 * (1.0 + w.abs()),
                    "{} at {steps} steps, output {o}[{j}]: GPU {gj}, interpreter {w}",
                    func.name
                );
            }
        }
    }
}
