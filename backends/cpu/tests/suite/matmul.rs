//! Matrix products on `gemm`: the fused `dot_general` kernel is recognized as
//! a product, and running it through `CpuLauncher` matches a plain triple
//! loop in f64 at awkward shapes (sizes 0 and 1, transposed operands, a batch
//! axis, a contraction over two axes, a product large enough to use both
//! cores), within the blocked-sum bound k·eps·Σ|a·b|.

use oxla_core::exec::{FnLauncher, Program};
use oxla_core::kernel::fusion::fuse;
use oxla_core::ops::DotDims;
use oxla_core::{Buffer, DType, Dim, Function, KernelFn, Op, Shape, Type};
use oxla_cpu::{matmul_plans, CpuLauncher, JitModule};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// `a [m,k] · b [k,n]` written with the operands stored as `a_t`/`b_t`
/// say (transposed when set), as one `dot_general` of constant shapes.
fn product(m: u64, n: u64, k: u64, a_t: bool, b_t: bool, dtype: DType) -> Function {
    let c = Dim::Const;
    let mut f = Function::new("matmul");
    let a_shape = if a_t {
        vec![c(k), c(m)]
    } else {
        vec![c(m), c(k)]
    };
    let b_shape = if b_t {
        vec![c(n), c(k)]
    } else {
        vec![c(k), c(n)]
    };
    let a = f.add_param("a", Type::new(dtype, Shape(a_shape)));
    let b = f.add_param("b", Type::new(dtype, Shape(b_shape)));
    let d = DotDims {
        lhs_contract: vec![if a_t { 0 } else { 1 }],
        rhs_contract: vec![if b_t { 1 } else { 0 }],
        lhs_batch: vec![],
        rhs_batch: vec![],
    };
    let out = f.push(Op::DotGeneral(d), &[a, b]).unwrap();
    f.outs = vec![out];
    f
}

fn run(p: &Program, fns: &[KernelFn], gemm: bool, bufs: &[Buffer]) -> Vec<f64> {
    let plans = matmul_plans(&p.kernels);
    if gemm {
        assert!(
            plans.iter().any(Option::is_some),
            "no kernel recognized as a product:\n{}",
            p.text()
        );
        p.run(
            &CpuLauncher {
                kernels: &p.kernels,
                fns,
                plans: &plans,
                splits: &[],
            },
            bufs,
        )
    } else {
        p.run(&FnLauncher(fns), bufs)
    }
    .map(|outs| (0..outs[0].len()).map(|i| outs[0].get(i)).collect())
    .unwrap()
}

#[test]
fn products_match_a_triple_loop() {
    let mut rng = StdRng::seed_from_u64(3);
    let shapes = [
        (0, 3, 4),
        (3, 0, 4),
        (3, 4, 0),
        (1, 7, 5),
        (7, 1, 5),
        (2, 2, 1),
        (17, 33, 65),
        (64, 300, 200),
    ];
    for dtype in [DType::F32, DType::F64] {
        let eps = if dtype == DType::F32 {
            f32::EPSILON as f64
        } else {
            f64::EPSILON
        };
        for (m, n, k) in shapes {
            for (a_t, b_t) in [(false, false), (true, false), (false, true), (true, true)] {
                let ctx = format!("{dtype} m={m} n={n} k={k} a_t={a_t} b_t={b_t}");
                let f = product(m, n, k, a_t, b_t, dtype);
                let p = fuse(&f).unwrap();
                let jit = JitModule::compile(&p.kernels).unwrap();
                let fns: Vec<KernelFn> = (0..jit.len()).map(|i| jit.function(i)).collect();
                let (m, n, k) = (m as usize, n as usize, k as usize);
                let round = |v: f64| {
                    if dtype == DType::F32 {
                        v as f32 as f64
                    } else {
                        v
                    }
                };
                let a: Vec<f64> = (0..m * k)
                    .map(|_| round(rng.gen_range(-1.0..1.0)))
                    .collect();
                let b: Vec<f64> = (0..k * n)
                    .map(|_| round(rng.gen_range(-1.0..1.0)))
                    .collect();
                let at = |i: usize, l: usize| if a_t { a[l * m + i] } else { a[i * k + l] };
                let bt = |l: usize, j: usize| if b_t { b[j * k + l] } else { b[l * n + j] };
                let bufs = [Buffer::from_f64(dtype, &a), Buffer::from_f64(dtype, &b)];
                let got = run(&p, &fns, m * n >= 2, &bufs);
                assert_eq!(got.len(), m * n, "{ctx}");
                for i in 0..m {
                    for j in 0..n {
                        let want: f64 = (0..k).map(|l| at(i, l) * bt(l, j)).sum();
                        let mag: f64 = (0..k).map(|l| (at(i, l) * bt(l, j)).abs()).sum();
                        let g = got[i * n + j];
                        assert!(
                            (g - want).abs() <= (k as f64 + 2.0) * eps * mag.max(f64::MIN_POSITIVE),
                            "{ctx}: [{i},{j}] got {g}, want {want}"
                        );
                    }
                }
            }
        }
    }
}
