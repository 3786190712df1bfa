//! `dot_general` products of many shapes and layouts, for the cuBLAS
//! mapping: vector·vector, matrix·vector, matrix·matrix, batched, operands
//! stored transposed (any axis order), several contracted axes, a
//! transposed result, sizes 0 and 1, symbolic sizes; in f64, f32 and bf16.
//! Inputs are small integers, so every product is exact in each of those
//! types (up to the final rounding to bf16), whatever the order of the sums.

use oxla_core::ops::DotDims;
use oxla_core::{Buffer, DType, Dim, Function, Kernel, Op, Shape, Tensor, Type};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

/// One product: its function (params `a`, `b`; one output) and the values
/// of its size symbols.
pub struct Product {
    pub what: String,
    pub f: Function,
    pub env: BTreeMap<String, u64>,
}

/// The axes of a product by role, as extents.
pub struct Axes {
    pub batch: Vec<u64>,
    pub contract: Vec<u64>,
    pub lhs_free: Vec<u64>,
    pub rhs_free: Vec<u64>,
}

/// A product of `axes`, the operands storing their logical axes (batch,
/// contracted, free) in the orders `lhs_order`/`rhs_order` (a permutation
/// of those positions), the result permuted by `out_perm` when given.
/// Extents listed in `symbolic` (by logical position, lhs then rhs free
/// axes last) become size symbols.
pub fn product(
    dtype: DType,
    axes: &Axes,
    lhs_order: &[usize],
    rhs_order: &[usize],
    out_perm: Option<Vec<usize>>,
    symbolic: &[bool],
) -> Product {
    let (nb, nc) = (axes.batch.len(), axes.contract.len());
    let logical: Vec<u64> = [&axes.batch, &axes.contract, &axes.lhs_free, &axes.rhs_free]
        .into_iter()
        .flatten()
        .copied()
        .collect();
    let mut env = BTreeMap::new();
    let dims: Vec<Dim> = logical
        .iter()
        .enumerate()
        .map(|(i, e)| {
            if symbolic.get(i) == Some(&true) {
                let name = format!("s{i}");
                env.insert(name.clone(), *e);
                Dim::sym(&name)
            } else {
                Dim::Const(*e)
            }
        })
        .collect();
    let nl = axes.lhs_free.len();
    // Logical positions of each operand's axes: batch, contracted, free.
    let lhs_logical: Vec<usize> = (0..nb + nc).chain(nb + nc..nb + nc + nl).collect();
    let rhs_logical: Vec<usize> = (0..nb + nc).chain(nb + nc + nl..logical.len()).collect();
    let stored =
        |log: &[usize], order: &[usize]| -> Vec<usize> { order.iter().map(|o| log[*o]).collect() };
    let (ls, rs) = (
        stored(&lhs_logical, lhs_order),
        stored(&rhs_logical, rhs_order),
    );
    let pos = |s: &[usize], l: usize| s.iter().position(|x| *x == l).expect("axis stored");
    let d = DotDims {
        lhs_batch: (0..nb).map(|l| pos(&ls, l)).collect(),
        rhs_batch: (0..nb).map(|l| pos(&rs, l)).collect(),
        lhs_contract: (nb..nb + nc).map(|l| pos(&ls, l)).collect(),
        rhs_contract: (nb..nb + nc).map(|l| pos(&rs, l)).collect(),
    };
    let mut f = Function::new("product");
    let shape = |s: &[usize]| Shape(s.iter().map(|l| dims[*l].clone()).collect());
    let a = f.add_param("a", Type::new(dtype, shape(&ls)));
    let b = f.add_param("b", Type::new(dtype, shape(&rs)));
    let mut out = f
        .push(Op::DotGeneral(d), &[a, b])
        .expect("a well-typed product");
    if let Some(perm) = &out_perm {
        out = f
            .push(Op::Transpose { perm: perm.clone() }, &[out])
            .expect("a permutation");
    }
    f.outs = vec![out];
    let what = format!(
        "{dtype} batch {:?} contract {:?} lhs free {:?} rhs free {:?}, lhs stored {ls:?}, \
         rhs stored {rs:?}, result perm {out_perm:?}, symbols {env:?}",
        axes.batch, axes.contract, axes.lhs_free, axes.rhs_free
    );
    Product { what, f, env }
}

/// The plain cases by name: each must run on cuBLAS.
pub fn named_products(dtype: DType) -> Vec<Product> {
    let ax = |batch: &[u64], contract: &[u64], lf: &[u64], rf: &[u64]| Axes {
        batch: batch.to_vec(),
        contract: contract.to_vec(),
        lhs_free: lf.to_vec(),
        rhs_free: rf.to_vec(),
    };
    let p = |axes: Axes, lo: &[usize], ro: &[usize]| product(dtype, &axes, lo, ro, None, &[]);
    vec![
        // a[m,k] · b[k,n], and with a, b or both stored transposed.
        p(ax(&[], &[7], &[5], &[3]), &[1, 0], &[0, 1]),
        p(ax(&[], &[7], &[5], &[3]), &[0, 1], &[0, 1]),
        p(ax(&[], &[7], &[5], &[3]), &[1, 0], &[1, 0]),
        p(ax(&[], &[7], &[5], &[3]), &[0, 1], &[1, 0]),
        // Matrix · vector and vector · matrix.
        p(ax(&[], &[6], &[4], &[]), &[1, 0], &[0]),
        p(ax(&[], &[6], &[], &[4]), &[0], &[0, 1]),
        // Batched, batch leading, and batch in the middle of an operand.
        p(ax(&[3], &[4], &[5], &[2]), &[0, 2, 1], &[0, 1, 2]),
        p(ax(&[3], &[4], &[5], &[2]), &[2, 0, 1], &[1, 0, 2]),
        // A column times a row (k = 1).
        p(ax(&[], &[1], &[5], &[6]), &[1, 0], &[0, 1]),
    ]
}

/// `count` random products (seeded).
pub fn random_products(seed: u64, count: usize) -> Vec<Product> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let extents = [0u64, 1, 1, 2, 2, 3, 3, 4, 5, 5, 7, 8, 16, 33];
    (0..count)
        .map(|_| {
            let pick = |n: usize, rng: &mut SmallRng| -> Vec<u64> {
                (0..n).map(|_| *extents.choose(rng).unwrap()).collect()
            };
            let sizes = [
                rng.gen_range(0..=2),
                rng.gen_range(1..=2),
                rng.gen_range(0..=2),
                rng.gen_range(0..=2),
            ];
            let axes = Axes {
                batch: pick(sizes[0], &mut rng),
                contract: pick(sizes[1], &mut rng),
                lhs_free: pick(sizes[2], &mut rng),
                rhs_free: pick(sizes[3], &mut rng),
            };
            // Mostly nonzero: a zero anywhere makes the whole product trivial.
            let axes = if rng.gen_bool(0.8) {
                let lift = |v: Vec<u64>| v.into_iter().map(|e| e.max(1)).collect();
                Axes {
                    batch: lift(axes.batch),
                    contract: lift(axes.contract),
                    lhs_free: lift(axes.lhs_free),
                    rhs_free: lift(axes.rhs_free),
                }
            } else {
                axes
            };
            let (nb, nc) = (axes.batch.len(), axes.contract.len());
            let order = |n: usize, rng: &mut SmallRng| {
                let mut o: Vec<usize> = (0..n).collect();
                if rng.gen_bool(0.7) {
                    o.shuffle(rng);
                }
                o
            };
            let lo = order(nb + nc + axes.lhs_free.len(), &mut rng);
            let ro = order(nb + nc + axes.rhs_free.len(), &mut rng);
            let out_rank = nb + axes.lhs_free.len() + axes.rhs_free.len();
            let out_perm = rng.gen_bool(0.2).then(|| {
                let mut p: Vec<usize> = (0..out_rank).collect();
                p.shuffle(&mut rng);
                p
            });
            let logical = nb + nc + axes.lhs_free.len() + axes.rhs_free.len();
            let symbolic: Vec<bool> = (0..logical).map(|_| rng.gen_bool(0.3)).collect();
            let dtype = *[DType::F64, DType::F32, DType::BF16]
                .choose(&mut rng)
                .unwrap();
            product(dtype, &axes, &lo, &ro, out_perm, &symbolic)
        })
        .collect()
}

impl Product {
    /// Each parameter's concrete shape.
    pub fn shapes(&self) -> Vec<Vec<usize>> {
        self.f
            .params
            .iter()
            .map(|p| self.f.shape(*p).concrete(&self.env).expect("shape"))
            .collect()
    }

    /// Inputs of small integers in [-4, 4] (seeded), one per parameter.
    pub fn inputs(&self, seed: u64) -> Vec<Buffer> {
        let mut rng = SmallRng::seed_from_u64(seed);
        self.shapes()
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let n: usize = s.iter().product();
                let v: Vec<f64> = (0..n).map(|_| rng.gen_range(-4..=4) as f64).collect();
                Buffer::from_f64(self.f.dtype(self.f.params[i]), &v)
            })
            .collect()
    }

    /// The inputs as tensors, for the reference interpreter.
    pub fn tensors(&self, inputs: &[Buffer]) -> Vec<Tensor> {
        self.shapes()
            .into_iter()
            .zip(inputs)
            .map(|(s, b)| Tensor::from_buffer(s, b))
            .collect()
    }

    /// The values of kernel `k`'s size symbols.
    pub fn kernel_sizes(&self, k: &Kernel) -> Vec<i64> {
        k.sizes
            .iter()
            .map(|n| {
                *self
                    .env
                    .get(n)
                    .unwrap_or_else(|| panic!("size `{n}` of {}", self.what)) as i64
            })
            .collect()
    }
}

/// Run `p` through `CudaProgram` (products on cuBLAS) and compare with the
/// reference interpreter, exactly (integer inputs). Returns how many
/// launches ran on cuBLAS, which must be every launch of a product that
/// `plan_launch` sends there.
pub fn check_on_gpu(p: &Product, seed: u64) -> Result<usize, String> {
    use oxla_core::kernel::matmul::MatmulKernel;
    use oxla_cuda::gemm_plan::plan_launch;
    let cp = oxla_cuda::CudaProgram::from_function(&p.f).map_err(|e| format!("loading: {e}"))?;
    cp.cublas()
        .map_err(|e| format!("products not on cuBLAS: {e}"))?;
    let expected = cp
        .program()
        .launches
        .iter()
        .filter(|l| {
            let k = &cp.program().kernels[l.kernel];
            let sizes = p.kernel_sizes(k);
            oxla_ptx::has_work(k, &sizes)
                && MatmulKernel::of(k).is_some_and(|m| plan_launch(&m, &sizes).is_some())
        })
        .count();
    let inputs = p.inputs(seed);
    let want = oxla_core::interp::eval(&p.f, &p.tensors(&inputs))
        .map_err(|e| format!("interpreter: {e}"))?;
    // With their shapes: a product's operands often have several size
    // symbols each (`[s2, 1, s3, 8]`), which lengths alone cannot bind.
    let shaped: Vec<(Buffer, Vec<usize>)> = inputs.iter().cloned().zip(p.shapes()).collect();
    let got = cp.run_shaped(&shaped)?;
    let ((g, dims), w) = (&got[0], &want[0]);
    if g.len() != w.data.len() || *dims != w.shape {
        return Err(format!(
            "{} elements of shape {dims:?}, the interpreter gives {} of {:?}",
            g.len(),
            w.data.len(),
            w.shape
        ));
    }
    for (i, w) in w.data.iter().enumerate() {
        if g.get(i) != *w {
            return Err(format!("element {i}: GPU {}, interpreter {w}", g.get(i)));
        }
    }
    if cp.cublas_launches() != expected {
        return Err(format!(
            "{} launches on cuBLAS, {expected} expected",
            cp.cublas_launches()
        ));
    }
    Ok(expected)
}
