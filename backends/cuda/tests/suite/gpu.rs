//! Every sample kernel on the GPU against the interpreter. Without a GPU
//! each test records a skip (`common::gpu_or_skip`) and passes, or fails
//! under env `OXLA_REQUIRE_GPU=1`.

use crate::common;

use common::{gpu_or_skip, no_gpu_or_skip};
use oxla_core::kernel::interp;
use oxla_core::{Buffer, DType, Kernel};
use oxla_cuda::{gpu_available, measure_bandwidth, CudaKernels};
use oxla_ptx::samples;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const LENGTHS: [usize; 7] = [0, 1, 3, 4, 5, 1000, 1001];
/// The large length, run for the kernels in `LARGE`.
const LARGE_LEN: usize = (1 << 20) + 3;
const LARGE: [&str; 12] = [
    "sum_f32",
    "sum_f64",
    "max_f32",
    "min_f64",
    "last_positive_index",
    "mean_by_size_f64",
    "fused_sum_two",
    "row_sum_f64",
    "col_sum_strided",
    "rank2_broadcast_transpose",
    "half_mix",
    "unary_exp_f32",
];

/// Random inputs of the lengths the kernel reads; positive for log/sqrt.
fn inputs(k: &Kernel, sizes: &[i64], rng: &mut SmallRng) -> Vec<Buffer> {
    let positive = k.name.contains("log") || k.name.contains("sqrt");
    k.args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            if a.output {
                return Buffer::zeros(a.dtype, k.output_len(sizes));
            }
            let n = k.input_extent(i, sizes);
            let vals: Vec<f64> = (0..n)
                .map(|_| match a.dtype {
                    DType::Bool => rng.gen_range(0..2) as f64,
                    _ if positive => rng.gen_range(0.01..5.0),
                    // A few exact repeats so comparisons hit equality.
                    _ => {
                        (rng.gen_range(-12..=12) as f64) * 0.25
                            + if rng.gen_bool(0.5) {
                                rng.gen_range(-0.1..0.1)
                            } else {
                                0.0
                            }
                    }
                })
                .collect();
            Buffer::from_f64(a.dtype, &vals)
        })
        .collect()
}

/// Allowed |gpu - interp| for an element of output `dtype`.
fn tolerance(k: &Kernel, dtype: DType, reference: f64, n_inner: usize) -> f64 {
    let value_f64 = k.insts.iter().all(|i| i.ty != DType::F32);
    let (rtol, atol) = match dtype {
        DType::F16 => (2e-3, 1e-3),
        DType::BF16 => (1.6e-2, 1e-2),
        DType::F64 if value_f64 => (1e-13, 1e-13),
        _ => (4e-6, 2e-6),
    };
    // Sums add in another order: allow a few rounding errors per term.
    let eps = if value_f64 {
        f64::EPSILON
    } else {
        f32::EPSILON as f64
    };
    let order = if k.is_reduction() {
        4.0 * eps * n_inner as f64 * 25.0
    } else {
        0.0
    };
    rtol * reference.abs() + atol + order
}

fn check_kernel(ks: &CudaKernels, i: usize, len: usize, rng: &mut SmallRng) {
    let k = &ks.kernels()[i];
    let sizes = samples::size_values(k, len);
    let mut expect = inputs(k, &sizes, rng);
    let mut got = expect.clone();
    interp::run(k, &mut expect, &sizes).unwrap();
    ks.run(i, &mut got, &sizes)
        .unwrap_or_else(|e| panic!("{} at n={len}: {e}", k.name));
    let inner: usize = k.domain[k.outer_dims()..]
        .iter()
        .map(|d| k.eval_size(d, &sizes) as usize)
        .product();
    for (a, (e, g)) in k.args.iter().zip(expect.iter().zip(&got)) {
        if !a.output {
            continue;
        }
        for j in 0..e.len() {
            let (x, y) = (e.get(j), g.get(j));
            // NaN matches only NaN, and an infinity only itself (its
            // tolerance would be infinite).
            let ok = if x.is_nan() || y.is_nan() || x.is_infinite() {
                x == y || (x.is_nan() && y.is_nan())
            } else {
                x == y || (x - y).abs() <= tolerance(k, a.dtype, x, inner)
            };
            assert!(
                ok,
                "{} at n={len}, element {j}: interpreter {x}, GPU {y}",
                k.name
            );
        }
    }
}

#[test]
fn gpu_available_never_panics() {
    let _ = gpu_available();
}

#[test]
fn load_without_gpu_is_an_error_not_a_panic() {
    if !no_gpu_or_skip() {
        return;
    }
    assert!(CudaKernels::load(&samples::all()).is_err());
}

#[test]
fn samples_match_interpreter() {
    if !gpu_or_skip() {
        return;
    }
    let kernels = samples::all();
    let ks = CudaKernels::load(&kernels).unwrap();
    let mut rng = SmallRng::seed_from_u64(7);
    for (i, k) in kernels.iter().enumerate() {
        for len in LENGTHS {
            check_kernel(&ks, i, len, &mut rng);
        }
        if LARGE.contains(&k.name.as_str()) {
            check_kernel(&ks, i, LARGE_LEN, &mut rng);
        }
    }
}

#[test]
fn wrong_arguments_are_errors() {
    if !gpu_or_skip() {
        return;
    }
    let kernels = samples::all();
    let ks = CudaKernels::load(&kernels).unwrap();
    let i = kernels.iter().position(|k| k.name == "sum_f32").unwrap();
    let mut short = vec![Buffer::zeros(DType::F32, 3), Buffer::zeros(DType::F32, 1)];
    assert!(ks.run(i, &mut short, &[4]).is_err());
    let mut wrong_type = vec![Buffer::zeros(DType::F64, 4), Buffer::zeros(DType::F32, 1)];
    assert!(ks.run(i, &mut wrong_type, &[4]).is_err());
    assert!(ks.run(i, &mut short, &[-1]).is_err());
    assert!(ks.run(kernels.len(), &mut short, &[1]).is_err());
}

#[test]
fn bandwidth_of_fused_sum_10m() {
    if !gpu_or_skip() {
        return;
    }
    let gbs = measure_bandwidth(10_000_000, 20).unwrap();
    println!("fused sum(x*2*y+z), 10M f32: {gbs:.0} GB/s");
    assert!(gbs > 0.0);
}
