//! Matrix products on cuBLAS through `CudaProgram`, against the reference
//! interpreter: the products of `tests/suite/gemm_plan.rs` (whose cuBLAS calls
//! are checked there on a model, without a GPU) run on the device, exactly
//! (integer inputs), and every launch the plan sends to cuBLAS must have run
//! there. Without a GPU each test records a skip (`common::gpu_or_skip`)
//! and passes, or fails under env `OXLA_REQUIRE_GPU=1`.

use crate::common;

use common::gpu_or_skip;
use common::products::{check_on_gpu, named_products, product, random_products, Axes};
use oxla_core::{Buffer, DType};
use oxla_cuda::CudaProgram;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

#[test]
fn products_on_cublas_match_the_interpreter() {
    if !gpu_or_skip() {
        return;
    }
    let mut products = Vec::new();
    for dtype in [DType::F64, DType::F32, DType::BF16] {
        products.extend(named_products(dtype));
    }
    products.extend(random_products(11, 200));
    let mut on_cublas = 0;
    for (i, p) in products.iter().enumerate() {
        on_cublas += check_on_gpu(p, i as u64).unwrap_or_else(|e| panic!("{}: {e}", p.what));
    }
    assert!(on_cublas >= 100, "only {on_cublas} launches on cuBLAS");
}

/// A product of random floats (f32, 257×300 · 300×129, the left operand
/// stored transposed) within the blocked-sum bound (k + 2)·eps·Σ|a·b| of
/// the interpreter's f64 sum rounded to f32.
#[test]
fn float_product_within_the_blocked_sum_bound() {
    if !gpu_or_skip() {
        return;
    }
    let (m, k, n) = (257usize, 300usize, 129usize);
    let axes = Axes {
        batch: vec![],
        contract: vec![k as u64],
        lhs_free: vec![m as u64],
        rhs_free: vec![n as u64],
    };
    let p = product(DType::F32, &axes, &[0, 1], &[0, 1], None, &[]);
    let mut rng = SmallRng::seed_from_u64(17);
    let mut draw = |len: usize| -> Vec<f64> {
        (0..len)
            .map(|_| rng.gen_range(-1.0f32..1.0) as f64)
            .collect()
    };
    // a stored [k, m], b stored [k, n].
    let (a, b) = (draw(k * m), draw(k * n));
    let inputs = [
        Buffer::from_f64(DType::F32, &a),
        Buffer::from_f64(DType::F32, &b),
    ];
    let cp = CudaProgram::from_function(&p.f).unwrap();
    cp.cublas().unwrap();
    let got = cp.run(&inputs).unwrap();
    assert_eq!(cp.cublas_launches(), 1);
    let want = oxla_core::interp::eval(&p.f, &p.tensors(&inputs)).unwrap();
    let eps = f32::EPSILON as f64;
    for i in 0..m {
        for j in 0..n {
            let mag: f64 = (0..k).map(|l| (a[l * m + i] * b[l * n + j]).abs()).sum();
            let (g, w) = (got[0].get(i * n + j), want[0].data[i * n + j]);
            assert!(
                (g - w).abs() <= (k as f64 + 2.0) * eps * mag,
                "[{i},{j}]: GPU {g}, interpreter {w}"
            );
        }
    }
}
