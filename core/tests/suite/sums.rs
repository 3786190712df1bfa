//! Accuracy of reductions in both interpreters: the reference interpreter
//! sums in `f64` pairwise and rounds once; the kernel interpreter sums
//! pairwise in the value's type. Both keep the error within O(log n)·eps,
//! checked against a compensated (Neumaier) `f64` sum.

use oxla_core::exec::InterpLauncher;
use oxla_core::kernel::compensated_sum;
use oxla_core::kernel::fusion::fuse;
use oxla_core::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// `sum(x)` (or `dot(x, y)`) over `x: dtype[n]`.
fn sum_fn(dtype: DType, dot: bool) -> Function {
    let mut f = Function::new(if dot { "dot" } else { "sum" });
    let x = f.add_param("x", Type::new(dtype, Shape(vec![Dim::sym("n")])));
    let out = if dot {
        let y = f.add_param("y", Type::new(dtype, Shape(vec![Dim::sym("n")])));
        f.dot(x, y)
    } else {
        f.reduce_sum(x, vec![0])
    };
    f.outs = vec![out];
    verify::verify(&f).unwrap();
    f
}

fn ir_eval(f: &Function, args: &[Tensor]) -> Vec<f64> {
    interp::eval(f, args).unwrap()[0].data.clone()
}

fn kernel_eval(f: &Function, args: &[Buffer]) -> Vec<f64> {
    let p = fuse(f).unwrap();
    p.run(&InterpLauncher(&p.kernels), args).unwrap()[0].to_f64()
}

// A running `f32` sum stops at 2^24 when adding ones (2^24 + 1 rounds back
// to 2^24); a pairwise sum of 2^25 ones is exact.

#[test]
fn f32_sum_of_2_pow_25_ones_is_exact_in_the_ir_interpreter() {
    let n = 1usize << 25;
    let x = Tensor::new(DType::F32, vec![n], vec![1.0; n]);
    assert_eq!(ir_eval(&sum_fn(DType::F32, false), &[x]), [n as f64]);
}

#[test]
fn f32_sum_of_2_pow_25_ones_is_exact_in_the_kernel_interpreter() {
    let n = 1usize << 25;
    let ones = Buffer::from_f64(DType::F32, &vec![1.0; n]);
    assert_eq!(kernel_eval(&sum_fn(DType::F32, false), &[ones]), [n as f64]);
}

/// Random values of mixed signs and magnitudes: each interpreter's sum is
/// within its stated bound of the compensated sum of the same (rounded)
/// inputs, at lengths around powers of two.
#[test]
fn random_sums_against_a_compensated_sum() {
    let mut rng = StdRng::seed_from_u64(7);
    for &n in &[1usize, 2, 3, 1000, 1023, 1024, 1025, 100_000, 262_145] {
        for dtype in [DType::F32, DType::F64] {
            let xs: Vec<f64> = (0..n)
                .map(|_| {
                    let m: f64 = rng.gen_range(-1.0..1.0);
                    dtype.round(m * 10f64.powi(rng.gen_range(-3..4)))
                })
                .collect();
            let ys: Vec<f64> = (0..n)
                .map(|_| dtype.round(rng.gen_range(0.5..2.0)))
                .collect();
            let eps = match dtype {
                DType::F32 => f32::EPSILON as f64 / 2.0,
                _ => f64::EPSILON / 2.0,
            };
            let log_n = (n as f64).log2().ceil() + 1.0;
            for dot in [false, true] {
                let f = sum_fn(dtype, dot);
                let terms: Vec<f64> = if dot {
                    xs.iter().zip(&ys).map(|(x, y)| x * y).collect()
                } else {
                    xs.clone()
                };
                let exact = compensated_sum(terms.iter().copied());
                let abs: f64 = terms.iter().map(|t| t.abs()).sum();
                let mut args = vec![Tensor::new(dtype, vec![n], xs.clone())];
                if dot {
                    args.push(Tensor::new(dtype, vec![n], ys.clone()));
                }
                let ctx = format!("{} of {n} {dtype}", f.name);

                // Reference: within f64 pairwise error, then one rounding.
                let ir = ir_eval(&f, &args)[0];
                let bound = eps * exact.abs() + log_n * f64::EPSILON * abs;
                assert!(
                    (ir - exact).abs() <= bound,
                    "{ctx}: IR interpreter {ir:e} vs {exact:e} (bound {bound:e})"
                );

                // Kernel interpreter: pairwise in the value's type (each
                // product rounds too in a dot).
                let bufs: Vec<Buffer> = args.iter().map(Tensor::to_buffer).collect();
                let k = kernel_eval(&f, &bufs)[0];
                let bound = (log_n + 1.0) * eps * abs;
                assert!(
                    (k - exact).abs() <= bound,
                    "{ctx}: kernel interpreter {k:e} vs {exact:e} (bound {bound:e})"
                );
                if dtype == DType::F64 {
                    assert_eq!(k, ir, "{ctx}: f64 sums add in the same order");
                }
            }
        }
    }
}

/// Summing along the leading axis of a matrix (a strided reduction in the
/// reference interpreter, a column reduction kernel after fusion): each
/// column's sum is the compensated sum of that column within the bound.
#[test]
fn column_sums_against_a_compensated_sum() {
    let (rows, cols) = (70_000usize, 3usize);
    let mut f = Function::new("colsum");
    let x = f.add_param(
        "x",
        Type::new(DType::F32, Shape(vec![Dim::sym("m"), Dim::Const(3)])),
    );
    let out = f.reduce_sum(x, vec![0]);
    f.outs = vec![out];
    verify::verify(&f).unwrap();
    let mut rng = StdRng::seed_from_u64(11);
    let data: Vec<f64> = (0..rows * cols)
        .map(|_| rng.gen_range(-1.0f32..1.0) as f64 + 1.0)
        .collect();
    let t = Tensor::new(DType::F32, vec![rows, cols], data.clone());
    let ir = ir_eval(&f, std::slice::from_ref(&t));
    let k = kernel_eval(&f, &[t.to_buffer()]);
    let eps = f32::EPSILON as f64 / 2.0;
    let log_n = (rows as f64).log2().ceil() + 1.0;
    for c in 0..cols {
        let col = || (0..rows).map(|r| data[r * cols + c]);
        let exact = compensated_sum(col());
        let abs: f64 = col().map(f64::abs).sum();
        assert!(
            (ir[c] - exact).abs() <= eps * exact.abs() * 1.01,
            "column {c}: IR {} vs {exact}",
            ir[c]
        );
        assert!(
            (k[c] - exact).abs() <= (log_n + 1.0) * eps * abs,
            "column {c}: kernel {} vs {exact}",
            k[c]
        );
    }
}
