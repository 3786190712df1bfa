//! Hand-built kernels covering every instruction, dtype and loop shape:
//! the shared test set of `oxla-ptx` (assembled by `ptxas`) and `oxla-cuda`
//! (run on the GPU against the interpreter).
//!
//! Size symbols: `n` is the length a test chooses; `m` is fixed at 3 and
//! `k` at 5 (see [`size_values`]).

use oxla_core::kernel::{Inst, InstKind, Kernel, KernelArg, Reduce, Region, Store, ValueId};
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use oxla_core::{DType, Size};

/// A kernel under construction.
pub struct Builder {
    k: Kernel,
}

/// Size `n` (the test length) as a `Size`.
pub fn n() -> Size {
    sym("n")
}

pub fn sym(name: &str) -> Size {
    Size {
        factor: 1,
        syms: vec![name.to_string()],
    }
}

pub fn c(v: u64) -> Size {
    Size::constant(v)
}

impl Builder {
    /// A kernel over `domain` summing the trailing `reduce_dims` axes, with
    /// buffers `args` (`true` = output) and size symbols `sizes`.
    pub fn new(
        name: &str,
        args: &[(DType, bool)],
        sizes: &[&str],
        domain: Vec<Size>,
        reduce_dims: usize,
    ) -> Builder {
        Builder {
            k: Kernel {
                name: name.to_string(),
                args: args
                    .iter()
                    .map(|&(dtype, output)| KernelArg { dtype, output })
                    .collect(),
                sizes: sizes.iter().map(|s| s.to_string()).collect(),
                domain,
                reduce_dims,
                reduce: Reduce::Sum,
                insts: Vec::new(),
                stores: Vec::new(),
                scan: None,
            },
        }
    }

    fn push(&mut self, ty: DType, kind: InstKind) -> ValueId {
        self.k.insts.push(Inst { ty, kind });
        self.k.insts.len() - 1
    }

    pub fn load(&mut self, ty: DType, arg: usize, strides: Vec<Size>) -> ValueId {
        self.push(
            ty,
            InstKind::Load {
                arg,
                strides,
                offset: Vec::new(),
            },
        )
    }

    /// A load from element `offset` (a sum of sizes) on: a slice.
    pub fn load_at(
        &mut self,
        ty: DType,
        arg: usize,
        strides: Vec<Size>,
        offset: Vec<Size>,
    ) -> ValueId {
        self.push(
            ty,
            InstKind::Load {
                arg,
                strides,
                offset,
            },
        )
    }

    /// A store into a strided region of the output (pad, concatenate).
    pub fn store_region(&mut self, arg: usize, value: ValueId, region: Region) -> &mut Builder {
        self.k.stores.push(Store {
            arg,
            value,
            region: Some(region),
        });
        self
    }

    pub fn constant(&mut self, ty: DType, v: f64) -> ValueId {
        self.push(ty, InstKind::Const(v))
    }

    pub fn unary(&mut self, ty: DType, op: UnaryOp, a: ValueId) -> ValueId {
        self.push(ty, InstKind::Unary(op, a))
    }

    pub fn binary(&mut self, ty: DType, op: BinaryOp, a: ValueId, b: ValueId) -> ValueId {
        self.push(ty, InstKind::Binary(op, a, b))
    }

    pub fn cmp(&mut self, op: CmpOp, a: ValueId, b: ValueId) -> ValueId {
        self.push(DType::Bool, InstKind::Cmp(op, a, b))
    }

    pub fn select(&mut self, ty: DType, c: ValueId, a: ValueId, b: ValueId) -> ValueId {
        self.push(ty, InstKind::Select(c, a, b))
    }

    /// The value of size `s` as a float of type `ty`.
    pub fn size(&mut self, ty: DType, s: Size) -> ValueId {
        self.push(ty, InstKind::Size(s))
    }

    /// The coordinate along domain axis `axis` as a float of type `ty`.
    pub fn index(&mut self, ty: DType, axis: usize) -> ValueId {
        self.push(ty, InstKind::Index(axis))
    }

    /// Make the reduction a max or min (or a sum again).
    pub fn reduce(&mut self, r: Reduce) -> &mut Builder {
        self.k.reduce = r;
        self
    }

    pub fn store(&mut self, arg: usize, value: ValueId) -> &mut Builder {
        self.k.stores.push(Store {
            arg,
            value,
            region: None,
        });
        self
    }

    pub fn build(&self) -> Kernel {
        self.k.clone()
    }
}

/// Values of a kernel's size symbols when the test length is `len`.
pub fn size_values(kernel: &Kernel, len: usize) -> Vec<i64> {
    kernel
        .sizes
        .iter()
        .map(|s| match s.as_str() {
            "n" => len as i64,
            "m" => 3,
            "k" => 5,
            other => panic!("sample size symbol `{other}` has no value"),
        })
        .collect()
}

/// Whether a unary op is only defined for non-negative inputs.
pub fn wants_positive(op: UnaryOp) -> bool {
    matches!(op, UnaryOp::Log | UnaryOp::Sqrt)
}

fn unary_ops() -> Vec<UnaryOp> {
    let mut ops = UnaryOp::SIMPLE.to_vec();
    ops.extend([
        UnaryOp::Powi(0),
        UnaryOp::Powi(1),
        UnaryOp::Powi(5),
        UnaryOp::Powi(-3),
    ]);
    ops
}

fn op_name(op: UnaryOp) -> String {
    op.name().replace(['[', ']'], "").replace('-', "m")
}

/// Every sample kernel (names are unique).
pub fn all() -> Vec<Kernel> {
    use DType::*;
    let mut out = Vec::new();
    // Unary ops, elementwise over [n], both float types.
    for ty in [F32, F64] {
        for op in unary_ops() {
            let mut b = Builder::new(
                &format!("unary_{}_{ty}", op_name(op)),
                &[(ty, false), (ty, true)],
                &["n"],
                vec![n()],
                0,
            );
            let x = b.load(ty, 0, vec![c(1)]);
            let y = b.unary(ty, op, x);
            out.push(b.store(1, y).build());
        }
        for op in BinaryOp::ALL {
            let mut b = Builder::new(
                &format!("binary_{}_{ty}", op.name()),
                &[(ty, false), (ty, false), (ty, true)],
                &["n"],
                vec![n()],
                0,
            );
            let x = b.load(ty, 0, vec![c(1)]);
            let y = b.load(ty, 1, vec![c(1)]);
            let z = b.binary(ty, op, x, y);
            out.push(b.store(2, z).build());
        }
        for op in CmpOp::ALL {
            let mut b = Builder::new(
                &format!("cmp_{}_{ty}", op.name()),
                &[(ty, false), (ty, false), (Bool, true)],
                &["n"],
                vec![n()],
                0,
            );
            let x = b.load(ty, 0, vec![c(1)]);
            let y = b.load(ty, 1, vec![c(1)]);
            let z = b.cmp(op, x, y);
            out.push(b.store(2, z).build());
        }
    }
    out.extend(shapes());
    out.extend(dtypes());
    out.extend(reductions());
    out.extend(choosing_reductions());
    out.extend(sizes_and_indices());
    out
}

/// Max and min reductions: both float types, rows, strided columns, two
/// reduced axes, a converted (non-atomic) store, and a bf16 input.
fn choosing_reductions() -> Vec<Kernel> {
    use DType::*;
    let mut out = Vec::new();
    for (r, ty) in [
        (Reduce::Max, F32),
        (Reduce::Min, F32),
        (Reduce::Max, F64),
        (Reduce::Min, F64),
    ] {
        let mut b = Builder::new(
            &format!("{}_{ty}", r.name()),
            &[(ty, false), (ty, true)],
            &["n"],
            vec![n()],
            1,
        );
        let x = b.load(ty, 0, vec![c(1)]);
        out.push(b.reduce(r).store(1, x).build());
    }
    // Row maxima of exp(x) over [m, n] and column minima of a transposed read.
    let mut b = Builder::new(
        "row_max_exp_f64",
        &[(F64, false), (F64, true)],
        &["m", "n"],
        vec![sym("m"), n()],
        1,
    );
    let x = b.load(F64, 0, vec![n(), c(1)]);
    let e = b.unary(F64, UnaryOp::Exp, x);
    out.push(b.reduce(Reduce::Max).store(1, e).build());
    let mut b = Builder::new(
        "col_min_strided",
        &[(F32, false), (F32, true)],
        &["m", "n"],
        vec![sym("m"), n()],
        1,
    );
    let x = b.load(F32, 0, vec![c(1), sym("m")]);
    out.push(b.reduce(Reduce::Min).store(1, x).build());
    // Over two axes, two stores (max of x and of -x).
    let mut b = Builder::new(
        "max2d_two",
        &[(F32, false), (F32, true), (F32, true)],
        &["n"],
        vec![n(), c(4)],
        2,
    );
    let x = b.load(F32, 0, vec![c(4), c(1)]);
    let nx = b.unary(F32, UnaryOp::Neg, x);
    b.store(1, x);
    out.push(b.reduce(Reduce::Max).store(2, nx).build());
    // bf16 in, f16 out: one unit per output, a converted store.
    let mut b = Builder::new(
        "min_into_f16",
        &[(BF16, false), (F16, true)],
        &["n"],
        vec![n()],
        1,
    );
    let x = b.load(F32, 0, vec![c(1)]);
    out.push(b.reduce(Reduce::Min).store(1, x).build());
    out
}

/// `Size` and `Index` instructions in maps and reductions.
fn sizes_and_indices() -> Vec<Kernel> {
    use DType::*;
    let mut out = Vec::new();
    // out[i, j] = i * m + j + x[i, j] / (n·m) over [n, m] (f32), and the
    // row index alone as f64.
    let mut b = Builder::new(
        "iota_and_size",
        &[(F32, false), (F32, true), (F64, true)],
        &["n", "m"],
        vec![n(), sym("m")],
        0,
    );
    let x = b.load(F32, 0, vec![sym("m"), c(1)]);
    let i = b.index(F32, 0);
    let j = b.index(F32, 1);
    let m = b.size(F32, sym("m"));
    let nm = b.size(
        F32,
        Size {
            factor: 1,
            syms: vec!["m".into(), "n".into()],
        },
    );
    let im = b.binary(F32, BinaryOp::Mul, i, m);
    let ij = b.binary(F32, BinaryOp::Add, im, j);
    let xs = b.binary(F32, BinaryOp::Div, x, nm);
    let y = b.binary(F32, BinaryOp::Add, ij, xs);
    let i64v = b.index(F64, 0);
    b.store(1, y);
    out.push(b.store(2, i64v).build());
    // mean(x) = sum(x / n) (f64), and the largest index of a positive
    // element per row of [m, n] (-1 if none).
    let mut b = Builder::new(
        "mean_by_size_f64",
        &[(F64, false), (F64, true)],
        &["n"],
        vec![n()],
        1,
    );
    let x = b.load(F64, 0, vec![c(1)]);
    let len = b.size(F64, n());
    let q = b.binary(F64, BinaryOp::Div, x, len);
    out.push(b.store(1, q).build());
    let mut b = Builder::new(
        "last_positive_index",
        &[(F32, false), (F32, true)],
        &["m", "n"],
        vec![sym("m"), n()],
        1,
    );
    let x = b.load(F32, 0, vec![n(), c(1)]);
    let zero = b.constant(F32, 0.0);
    let none = b.constant(F32, -1.0);
    let j = b.index(F32, 1);
    let p = b.cmp(CmpOp::Gt, x, zero);
    let v = b.select(F32, p, j, none);
    out.push(b.reduce(Reduce::Max).store(1, v).build());
    // A constant size and a rank-0 kernel reading one.
    let mut b = Builder::new("rank0_size", &[(F64, true)], &["n"], vec![], 0);
    let s = b.size(F64, n());
    let k5 = b.size(F64, c(5));
    let y = b.binary(F64, BinaryOp::Mul, s, k5);
    out.push(b.store(0, y).build());
    out
}

/// Rank 0, 2 and 3 domains, broadcasts, transposes, constant extents.
fn shapes() -> Vec<Kernel> {
    use DType::*;
    let mut out = Vec::new();
    // Rank 0: one iteration.
    let mut b = Builder::new("rank0_affine", &[(F32, false), (F32, true)], &[], vec![], 0);
    let x = b.load(F32, 0, vec![]);
    let two = b.constant(F32, 2.0);
    let y = b.binary(F32, BinaryOp::Mul, x, two);
    out.push(b.store(1, y).build());
    // Rank 2 [n, m]: row-major x, a broadcast row (stride 0 on axis 0), a
    // transposed read (strides [1, n]).
    let mut b = Builder::new(
        "rank2_broadcast_transpose",
        &[(F32, false), (F32, false), (F32, false), (F32, true)],
        &["n", "m"],
        vec![n(), sym("m")],
        0,
    );
    let x = b.load(F32, 0, vec![sym("m"), c(1)]);
    let row = b.load(F32, 1, vec![Size::zero(), c(1)]);
    let t = b.load(F32, 2, vec![c(1), n()]);
    let s = b.binary(F32, BinaryOp::Add, x, row);
    let y = b.binary(F32, BinaryOp::Mul, s, t);
    out.push(b.store(3, y).build());
    // Rank 3 [2, n, m] with a scalar broadcast (all strides 0) and a
    // factor-2 stride.
    let mut b = Builder::new(
        "rank3_scalar_broadcast",
        &[(F64, false), (F64, false), (F64, true)],
        &["m", "n"],
        vec![c(2), n(), sym("m")],
        0,
    );
    let x = b.load(
        F64,
        0,
        vec![
            Size {
                factor: 1,
                syms: vec!["m".into(), "n".into()],
            },
            sym("m"),
            c(1),
        ],
    );
    let s = b.load(F64, 1, vec![Size::zero(), Size::zero(), Size::zero()]);
    let y = b.binary(F64, BinaryOp::Sub, x, s);
    out.push(b.store(2, y).build());
    // Domain [2n] (a factor on a symbol), reading every other element.
    let mut b = Builder::new(
        "stride2_read",
        &[(F32, false), (F32, true)],
        &["n"],
        vec![Size {
            factor: 2,
            syms: vec!["n".into()],
        }],
        0,
    );
    let x = b.load(F32, 0, vec![c(1)]);
    let y = b.unary(F32, UnaryOp::Neg, x);
    out.push(b.store(1, y).build());
    // Select and constants, two stores.
    let mut b = Builder::new(
        "relu_and_mask",
        &[(F32, false), (F32, true), (Bool, true)],
        &["n"],
        vec![n()],
        0,
    );
    let x = b.load(F32, 0, vec![c(1)]);
    let zero = b.constant(F32, 0.0);
    let p = b.cmp(CmpOp::Gt, x, zero);
    let y = b.select(F32, p, x, zero);
    b.store(1, y);
    out.push(b.store(2, p).build());
    out
}

/// Half types, bool buffers, mixed precision.
fn dtypes() -> Vec<Kernel> {
    use DType::*;
    let mut out = Vec::new();
    // f16 and bf16 in, computed in f32, stored to f16, bf16 and f32.
    let mut b = Builder::new(
        "half_mix",
        &[
            (F16, false),
            (BF16, false),
            (F16, true),
            (BF16, true),
            (F32, true),
        ],
        &["n"],
        vec![n()],
        0,
    );
    let x = b.load(F32, 0, vec![c(1)]);
    let y = b.load(F32, 1, vec![c(1)]);
    let z = b.binary(F32, BinaryOp::Mul, x, y);
    let e = b.unary(F32, UnaryOp::Tanh, z);
    b.store(2, e).store(3, e);
    out.push(b.store(4, z).build());
    // Values typed f16 (rounded after every instruction).
    let mut b = Builder::new(
        "f16_values",
        &[(F16, false), (F16, true)],
        &["n"],
        vec![n()],
        0,
    );
    let x = b.load(F16, 0, vec![c(1)]);
    let k = b.constant(F16, 0.1);
    let y = b.binary(F16, BinaryOp::Add, x, k);
    out.push(b.store(1, y).build());
    // bool in and out, f32 ↔ f64.
    let mut b = Builder::new(
        "bool_select_mixed",
        &[
            (Bool, false),
            (F32, false),
            (F64, false),
            (F64, true),
            (Bool, true),
        ],
        &["n"],
        vec![n()],
        0,
    );
    let m = b.load(Bool, 0, vec![c(1)]);
    let x = b.load(F32, 1, vec![c(1)]);
    let y = b.load(F64, 2, vec![c(1)]);
    let xd = b.binary(F64, BinaryOp::Max, x, y);
    let z = b.select(F64, m, xd, y);
    let nm = b.cmp(CmpOp::Eq, m, m);
    let both = b.select(Bool, m, nm, m);
    b.store(3, z);
    out.push(b.store(4, both).build());
    // f64 values stored to half buffers.
    let mut b = Builder::new(
        "f64_to_halves",
        &[(F64, false), (F16, true), (BF16, true)],
        &["n"],
        vec![n()],
        0,
    );
    let x = b.load(F64, 0, vec![c(1)]);
    b.store(1, x);
    out.push(b.store(2, x).build());
    // A float stored to a bool buffer, a bool stored to a float buffer.
    let mut b = Builder::new(
        "bool_casts",
        &[(F32, false), (Bool, true), (F32, true)],
        &["n"],
        vec![n()],
        0,
    );
    let x = b.load(F32, 0, vec![c(1)]);
    let p = b.cmp(CmpOp::Ne, x, x);
    b.store(1, x);
    out.push(b.store(2, p).build());
    // Integer labels loaded widened to floats, picking one element of each
    // row (`take_along_axis`): i32 into f32, i64 into f64.
    for (int, ty) in [(I32, F32), (I64, F64)] {
        let mut b = Builder::new(
            &format!("labels_{int}_{ty}"),
            &[(ty, false), (int, false), (ty, true)],
            &["n"],
            vec![n(), c(5)],
            1,
        );
        let x = b.load(ty, 0, vec![c(5), c(1)]);
        let label = b.load(ty, 1, vec![c(1), c(0)]);
        let at = b.index(ty, 1);
        let hit = b.cmp(CmpOp::Eq, at, label);
        let zero = b.constant(ty, 0.0);
        let picked = b.select(ty, hit, x, zero);
        out.push(b.store(2, picked).build());
    }
    out
}

fn reductions() -> Vec<Kernel> {
    use DType::*;
    let mut out = Vec::new();
    // Full sums, both float types.
    for ty in [F32, F64] {
        let mut b = Builder::new(
            &format!("sum_{ty}"),
            &[(ty, false), (ty, true)],
            &["n"],
            vec![n()],
            1,
        );
        let x = b.load(ty, 0, vec![c(1)]);
        out.push(b.store(1, x).build());
    }
    // Slices: a map reading x[1 + 2i] (offset and step), a sum over the
    // window of k elements from k on; regions: a map storing row i of an
    // [n, m] input at element m + 1 + 2m·i + j (a strided part of a larger
    // output), and a scalar stored at offset k.
    let mut b = Builder::new(
        "slice_step_map_f32",
        &[(F32, false), (F32, true)],
        &["n"],
        vec![n()],
        0,
    );
    let x = b.load_at(F32, 0, vec![c(2)], vec![c(1)]);
    let y = b.unary(F32, UnaryOp::Sin, x);
    out.push(b.store(1, y).build());
    let mut b = Builder::new(
        "slice_sum_f64",
        &[(F64, false), (F64, true)],
        &["n", "k"],
        vec![n(), sym("k")],
        1,
    );
    let x = b.load_at(F64, 0, vec![Size::zero(), c(1)], vec![sym("k")]);
    out.push(b.store(1, x).build());
    let m2 = Size {
        factor: 2,
        syms: vec!["m".to_string()],
    };
    let mut b = Builder::new(
        "region_store_f64",
        &[(F64, false), (F64, true)],
        &["m", "n"],
        vec![n(), sym("m")],
        0,
    );
    let x = b.load(F64, 0, vec![sym("m"), c(1)]);
    let region = Region {
        offset: vec![sym("m"), c(1)],
        strides: vec![m2, c(1)],
        scatter: None,
    };
    out.push(b.store_region(1, x, region).build());
    let mut b = Builder::new(
        "region_scalar_f32",
        &[(F32, false), (F32, true)],
        &["k"],
        vec![],
        0,
    );
    let x = b.load_at(F32, 0, vec![], vec![c(1)]);
    let region = Region {
        offset: vec![sym("k")],
        strides: vec![],
        scatter: None,
    };
    out.push(b.store_region(1, x, region).build());
    // The fused sum(x*2*y + z) of the design, and a second sum in the same pass.
    let mut b = Builder::new(
        "fused_sum_two",
        &[
            (F32, false),
            (F32, false),
            (F32, false),
            (F32, true),
            (F32, true),
        ],
        &["n"],
        vec![n()],
        1,
    );
    let x = b.load(F32, 0, vec![c(1)]);
    let y = b.load(F32, 1, vec![c(1)]);
    let z = b.load(F32, 2, vec![c(1)]);
    let two = b.constant(F32, 2.0);
    let x2 = b.binary(F32, BinaryOp::Mul, x, two);
    let xy = b.binary(F32, BinaryOp::Mul, x2, y);
    let s = b.binary(F32, BinaryOp::Add, xy, z);
    b.store(3, s);
    out.push(b.store(4, x).build());
    // Row sums of [n, k] and column sums of a transposed read over [m, n].
    let mut b = Builder::new(
        "row_sum_f64",
        &[(F64, false), (F64, true)],
        &["n", "k"],
        vec![n(), sym("k")],
        1,
    );
    let x = b.load(F64, 0, vec![sym("k"), c(1)]);
    let e = b.unary(F64, UnaryOp::Exp, x);
    out.push(b.store(1, e).build());
    let mut b = Builder::new(
        "col_sum_strided",
        &[(F32, false), (F32, true)],
        &["m", "n"],
        vec![sym("m"), n()],
        1,
    );
    let x = b.load(F32, 0, vec![c(1), sym("m")]);
    out.push(b.store(1, x).build());
    // Reduce two axes with a broadcast scale: sum_ij x[i,j]·s.
    let mut b = Builder::new(
        "sum2d_scaled",
        &[(F32, false), (F32, false), (F32, true)],
        &["n"],
        vec![n(), c(4)],
        2,
    );
    let x = b.load(F32, 0, vec![c(4), c(1)]);
    let s = b.load(F32, 1, vec![Size::zero(), Size::zero()]);
    let y = b.binary(F32, BinaryOp::Mul, x, s);
    out.push(b.store(2, y).build());
    // Stored with a conversion: f32 sum into an f16 output, bf16 input.
    let mut b = Builder::new(
        "sum_into_f16",
        &[(BF16, false), (F16, true)],
        &["n"],
        vec![n()],
        1,
    );
    let x = b.load(F32, 0, vec![c(1)]);
    let q = b.unary(F32, UnaryOp::Powi(2), x);
    out.push(b.store(1, q).build());
    // sin and cos inside a reduction loop (the Payne–Hanek branch in the
    // unrolled trips), two sums through the cascade, an f16 input computed
    // in f32, and a max/min pair feeding them.
    let mut b = Builder::new(
        "sum_sin_cos_max_min",
        &[(F16, false), (F32, false), (F32, true), (F32, true)],
        &["n"],
        vec![n()],
        1,
    );
    let x = b.load(F32, 0, vec![c(1)]);
    let y = b.load(F32, 1, vec![c(1)]);
    let hi = b.binary(F32, BinaryOp::Max, x, y);
    let lo = b.binary(F32, BinaryOp::Min, x, y);
    let s = b.unary(F32, UnaryOp::Sin, hi);
    let co = b.unary(F32, UnaryOp::Cos, lo);
    b.store(2, s);
    out.push(b.store(3, co).build());
    // f64 sin of a large product, summed per row of [m, n].
    let mut b = Builder::new(
        "row_sum_sin_f64",
        &[(F64, false), (F64, true)],
        &["m", "n"],
        vec![sym("m"), n()],
        1,
    );
    let x = b.load(F64, 0, vec![n(), c(1)]);
    let big = b.constant(F64, 1e300);
    let xb = b.binary(F64, BinaryOp::Mul, x, big);
    let s = b.unary(F64, UnaryOp::Sin, xb);
    out.push(b.store(1, s).build());
    // Count by select of a comparison, per row of [m, n].
    let mut b = Builder::new(
        "count_positive_rows",
        &[(F32, false), (F32, true)],
        &["m", "n"],
        vec![sym("m"), n()],
        1,
    );
    let x = b.load(F32, 0, vec![n(), c(1)]);
    let zero = b.constant(F32, 0.0);
    let one = b.constant(F32, 1.0);
    let p = b.cmp(CmpOp::Gt, x, zero);
    let v = b.select(F32, p, one, zero);
    out.push(b.store(1, v).build());
    out
}
