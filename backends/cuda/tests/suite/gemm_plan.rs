//! The cuBLAS mapping (`oxla_cuda::gemm_plan`) checked without a GPU: every
//! product kernel of many `dot_general`s (`common::products`) is planned as
//! cuBLAS calls, the calls are run on a plain-Rust model of cuBLAS's
//! column-major gemm (`common::gemm_model`), and the result must equal the
//! kernel interpreter's on the same kernel bit for bit (the inputs are small
//! integers, so every summation order gives the same value). Output buffers
//! start as NaN, so an element the calls miss shows. A wrong transpose flag,
//! leading dimension, operand order or batch stride changes the values or
//! breaks a cuBLAS argument rule; `wrong_calls_are_caught` checks that the
//! comparison notices each such mistake.

use crate::common;

use common::gemm_model::run_plan;
use common::products::{named_products, product, random_products, Axes, Product};
use oxla_core::kernel::fusion::fuse;
use oxla_core::kernel::interp;
use oxla_core::kernel::matmul::{MatmulKernel, MAX_LIBRARY_K};
use oxla_core::{Buffer, DType, Kernel};
use oxla_cuda::gemm_plan::{plan, plan_launch, GemmPlan, Transpose};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// A product kernel with inputs (small integers) and its interpreter result.
struct Case {
    what: String,
    kernel: Kernel,
    product: MatmulKernel,
    sizes: Vec<i64>,
    bufs: Vec<Buffer>,
    want: Buffer,
}

/// The product kernels of `p`'s fused program (`None` for a kernel that is
/// not a product), with inputs and expected outputs.
fn cases(p: &Product, seed: u64) -> Vec<Option<Case>> {
    let prog = fuse(&p.f).unwrap_or_else(|e| panic!("{}: {e}", p.what));
    let mut rng = SmallRng::seed_from_u64(seed);
    prog.kernels
        .iter()
        .map(|k| {
            let product = MatmulKernel::of(k)?;
            let sizes = p.kernel_sizes(k);
            let bufs: Vec<Buffer> = k
                .args
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    if a.output {
                        return Buffer::from_f64(a.dtype, &vec![f64::NAN; k.output_len(&sizes)]);
                    }
                    let n = k.input_extent(i, &sizes);
                    let v: Vec<f64> = (0..n).map(|_| rng.gen_range(-4..=4) as f64).collect();
                    Buffer::from_f64(a.dtype, &v)
                })
                .collect();
            let mut run = bufs.clone();
            interp::run(k, &mut run, &sizes).unwrap_or_else(|e| panic!("{}: {e}", p.what));
            let want = run[product.out].clone();
            Some(Case {
                what: p.what.clone(),
                kernel: k.clone(),
                product,
                sizes,
                bufs,
                want,
            })
        })
        .collect()
}

/// Run `plan` on the model and compare with the interpreter, bit for bit.
fn compare(c: &Case, plan: &GemmPlan) -> Result<(), String> {
    let mut out = c.bufs[c.product.out].clone();
    run_plan(
        plan,
        &c.bufs[c.product.lhs],
        &c.bufs[c.product.rhs],
        &mut out,
    )?;
    for i in 0..out.len() {
        let (g, w) = (out.get(i), c.want.get(i));
        if g.to_bits() != w.to_bits() && g != w {
            return Err(format!("element {i}: model of cuBLAS {g}, interpreter {w}"));
        }
    }
    Ok(())
}

#[derive(Default, Debug)]
struct Stats {
    products: usize,
    planned_uncollapsed: usize,
    planned: usize,
    launched: usize,
    multi_call: usize,
    batched: usize,
    a_transposed: usize,
    b_transposed: usize,
}

fn check_all(products: &[Product], stats: &mut Stats) {
    for (i, p) in products.iter().enumerate() {
        let cs = cases(p, i as u64);
        let found = cs.iter().flatten().count();
        let nonzero = p.shapes().iter().flatten().all(|e| *e > 0);
        assert!(
            found == 1 || !nonzero,
            "{}: {found} product kernels:\n{}",
            p.what,
            fuse(&p.f).unwrap().text()
        );
        for c in cs.iter().flatten() {
            stats.products += 1;
            // The mapping is right for the kernel's own axes as well as for
            // the merged ones the launches use.
            let shape = c.product.shape(&c.sizes);
            if let Some(pl) = plan(&shape) {
                stats.planned_uncollapsed += 1;
                compare(c, &pl).unwrap_or_else(|e| {
                    panic!("{}: {e}\nplan {pl:?}\nkernel {}", c.what, c.kernel)
                });
            }
            let Some(pl) = plan(&shape.collapsed()) else {
                continue;
            };
            stats.planned += 1;
            stats.launched += usize::from(plan_launch(&c.product, &c.sizes).is_some());
            stats.multi_call += usize::from(pl.calls.len() > 1);
            stats.batched += usize::from(pl.calls.iter().any(|c| c.batch > 1));
            stats.a_transposed += usize::from(pl.calls.iter().any(|c| c.a.op == Transpose::T));
            stats.b_transposed += usize::from(pl.calls.iter().any(|c| c.b.op == Transpose::T));
            compare(c, &pl)
                .unwrap_or_else(|e| panic!("{}: {e}\nplan {pl:?}\nkernel {}", c.what, c.kernel));
        }
    }
}

#[test]
fn named_products_match_the_interpreter_and_run_on_cublas() {
    for dtype in [DType::F64, DType::F32, DType::BF16] {
        let products = named_products(dtype);
        let mut stats = Stats::default();
        check_all(&products, &mut stats);
        for p in &products {
            for c in cases(p, 1).into_iter().flatten() {
                assert!(
                    plan_launch(&c.product, &c.sizes).is_some(),
                    "{}: not run on cuBLAS",
                    c.what
                );
            }
        }
        assert_eq!(stats.products, products.len(), "{stats:?}");
    }
}

#[test]
fn random_products_match_the_interpreter() {
    let products = random_products(11, 600);
    let mut stats = Stats::default();
    check_all(&products, &mut stats);
    println!("{stats:?}");
    // The mapping covers most layouts the fusion produces, and the test
    // reaches every branch of it.
    assert!(stats.products >= 500, "{stats:?}");
    assert!(stats.planned * 10 >= stats.products * 8, "{stats:?}");
    for n in [
        stats.launched,
        stats.multi_call,
        stats.batched,
        stats.a_transposed,
        stats.b_transposed,
    ] {
        assert!(n >= 10, "{stats:?}");
    }
}

/// What runs on the kernel rather than on cuBLAS: vector·vector, very long
/// contractions, and half-type products that would add partial results
/// rounded to the half type; the same shapes in f32 run on cuBLAS.
#[test]
fn launch_policy() {
    let ax = |contract: &[u64], lf: &[u64], rf: &[u64]| Axes {
        batch: vec![],
        contract: contract.to_vec(),
        lhs_free: lf.to_vec(),
        rhs_free: rf.to_vec(),
    };
    let launch = |dtype: DType, axes: Axes, lo: &[usize], ro: &[usize]| {
        let p = product(dtype, &axes, lo, ro, None, &[]);
        let prog = fuse(&p.f).unwrap();
        let k = prog
            .kernels
            .iter()
            .find_map(MatmulKernel::of)
            .expect("a product");
        let sizes = p.kernel_sizes(
            prog.kernels
                .iter()
                .find(|k| MatmulKernel::of(k).is_some())
                .unwrap(),
        );
        (
            plan(&k.shape(&sizes)).is_some(),
            plan_launch(&k, &sizes).is_some(),
        )
    };
    // Vector · vector: mapped correctly, but left to the pairwise kernel.
    assert_eq!(
        launch(DType::F32, ax(&[100], &[], &[]), &[0], &[0]),
        (true, false)
    );
    let k = MAX_LIBRARY_K as u64;
    assert!(launch(DType::F32, ax(&[k], &[2], &[2]), &[1, 0], &[0, 1]).1);
    assert!(!launch(DType::F32, ax(&[k + 1], &[2], &[2]), &[1, 0], &[0, 1]).1);
    // Two contracted axes stored apart: one call per coordinate of the
    // second, added into the output.
    let split = || ax(&[3, 4], &[5], &[6]);
    assert_eq!(
        launch(DType::F32, split(), &[0, 2, 1], &[1, 0, 2]),
        (true, true)
    );
    assert_eq!(
        launch(DType::BF16, split(), &[0, 2, 1], &[1, 0, 2]),
        (true, false)
    );
}

/// The comparison fails for each kind of mistake in the calls: the test of
/// the mapping can fail.
#[test]
fn wrong_calls_are_caught() {
    type Mutation = fn(&mut oxla_cuda::gemm_plan::GemmCall);
    let mutations: [(&str, Mutation); 9] = [
        ("a transposed", |c| {
            c.a.op = if c.a.op == Transpose::N {
                Transpose::T
            } else {
                Transpose::N
            }
        }),
        ("b transposed", |c| {
            c.b.op = if c.b.op == Transpose::N {
                Transpose::T
            } else {
                Transpose::N
            }
        }),
        ("lda + 1", |c| c.a.ld += 1),
        ("ldb + 1", |c| c.b.ld += 1),
        ("ldc + 1", |c| c.ldc += 1),
        ("operands swapped", |c| {
            std::mem::swap(&mut c.a.factor, &mut c.b.factor)
        }),
        ("m and n swapped", |c| std::mem::swap(&mut c.m, &mut c.n)),
        ("a's batch stride + 1", |c| c.a.batch_stride += 1),
        ("c's batch stride - 1", |c| c.c_batch_stride -= 1),
    ];
    // Non-square products with a batch, in both stored orders.
    let axes = || Axes {
        batch: vec![3],
        contract: vec![7],
        lhs_free: vec![5],
        rhs_free: vec![4],
    };
    for (lo, ro) in [([0, 2, 1], [0, 1, 2]), ([1, 0, 2], [0, 2, 1])] {
        let p = product(DType::F64, &axes(), &lo, &ro, None, &[]);
        let c = cases(&p, 5)
            .into_iter()
            .flatten()
            .next()
            .expect("a product");
        let good = plan(&c.product.shape(&c.sizes)).expect("planned");
        compare(&c, &good).unwrap();
        for (what, mutate) in mutations {
            let mut bad = good.clone();
            bad.calls.iter_mut().for_each(mutate);
            assert!(
                compare(&c, &bad).is_err(),
                "{what} not caught in {}",
                p.what
            );
        }
    }
}
