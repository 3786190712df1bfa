//! Shared test helpers: a small kernel builder and a differential check of
//! the JIT (host ISA and baseline ISA) against the kernel interpreter.
#![allow(dead_code)]

use oxla_core::kernel::{interp, Inst, InstKind, KernelArg, Reduce, Store, ValueId};
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use oxla_core::{Buffer, DType, Kernel, Size};
use oxla_cpu::{run_checked, IsaLevel, JitModule};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

pub fn sym(name: &str) -> Size {
    Size {
        factor: 1,
        syms: vec![name.to_string()],
    }
}

pub fn c(n: u64) -> Size {
    Size::constant(n)
}

pub fn zero() -> Size {
    Size::zero()
}

/// Builds a `Kernel` one instruction at a time.
pub struct KernelBuilder {
    pub k: Kernel,
}

impl KernelBuilder {
    pub fn new(name: &str, sizes: &[&str], domain: Vec<Size>, reduce_dims: usize) -> Self {
        KernelBuilder {
            k: Kernel {
                name: name.to_string(),
                args: vec![],
                sizes: sizes.iter().map(|s| s.to_string()).collect(),
                domain,
                reduce_dims,
                reduce: Reduce::Sum,
                insts: vec![],
                stores: vec![],
                scan: None,
            },
        }
    }

    pub fn arg(&mut self, dtype: DType, output: bool) -> usize {
        self.k.args.push(KernelArg { dtype, output });
        self.k.args.len() - 1
    }

    fn push(&mut self, ty: DType, kind: InstKind) -> ValueId {
        self.k.insts.push(Inst { ty, kind });
        self.k.insts.len() - 1
    }

    /// Load input `arg` with the given strides; the value type is the
    /// compute type of the buffer.
    pub fn load(&mut self, arg: usize, strides: Vec<Size>) -> ValueId {
        let ty = self.k.args[arg].dtype.compute_type();
        self.push(
            ty,
            InstKind::Load {
                arg,
                strides,
                offset: Vec::new(),
            },
        )
    }

    pub fn konst(&mut self, ty: DType, v: f64) -> ValueId {
        self.push(ty, InstKind::Const(v))
    }

    pub fn unary(&mut self, op: UnaryOp, a: ValueId) -> ValueId {
        let ty = self.k.insts[a].ty;
        self.push(ty, InstKind::Unary(op, a))
    }

    pub fn binary(&mut self, op: BinaryOp, a: ValueId, b: ValueId) -> ValueId {
        let ty = self.k.insts[a].ty;
        self.push(ty, InstKind::Binary(op, a, b))
    }

    pub fn cmp(&mut self, op: CmpOp, a: ValueId, b: ValueId) -> ValueId {
        self.push(DType::Bool, InstKind::Cmp(op, a, b))
    }

    pub fn select(&mut self, c: ValueId, a: ValueId, b: ValueId) -> ValueId {
        let ty = self.k.insts[a].ty;
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
    pub fn reduce(&mut self, r: Reduce) {
        self.k.reduce = r;
    }

    pub fn store(&mut self, arg: usize, value: ValueId) {
        self.k.stores.push(Store {
            arg,
            value,
            region: None,
        });
    }

    pub fn build(self) -> Kernel {
        self.k
    }
}

/// Random values in `[lo, hi)` rounded to `dtype`, enough for every load.
pub fn random_inputs(k: &Kernel, sizes: &[i64], seed: u64, lo: f64, hi: f64) -> Vec<Buffer> {
    let mut rng = StdRng::seed_from_u64(seed);
    k.args
        .iter()
        .enumerate()
        .filter(|(_, a)| !a.output)
        .map(|(i, a)| {
            let len = k.input_extent(i, sizes).max(1);
            let vals: Vec<f64> = (0..len)
                .map(|_| {
                    if a.dtype == DType::Bool {
                        rng.gen_range(0..2) as f64
                    } else {
                        rng.gen_range(lo..hi)
                    }
                })
                .collect();
            Buffer::from_f64(a.dtype, &vals)
        })
        .collect()
}

/// The bit pattern pre-filled into every output element: a quiet NaN with a
/// payload no arithmetic produces (the hardware's NaNs carry none, and no
/// test input holds it), 0xA5 for bool bytes (kernels store 0 or 1), and
/// 0xA5A5... for integers. Compared bitwise, so an element a kernel leaves
/// unwritten is an error even where the reference is NaN.
pub fn sentinel(dtype: DType, len: usize) -> Buffer {
    match dtype {
        DType::F16 => Buffer::F16(vec![half::f16::from_bits(0x7e5a); len]),
        DType::BF16 => Buffer::BF16(vec![half::bf16::from_bits(0x7fe5); len]),
        DType::F32 => Buffer::F32(vec![f32::from_bits(0x7fe5_a5a5); len]),
        DType::F64 => Buffer::F64(vec![f64::from_bits(0x7ffa_5a5a_5a5a_5a5a); len]),
        DType::Bool => Buffer::Bool(vec![0xa5; len]),
        DType::I32 => Buffer::I32(vec![0xa5a5_a5a5_u32 as i32; len]),
        DType::I64 => Buffer::I64(vec![0xa5a5_a5a5_a5a5_a5a5_u64 as i64; len]),
    }
}

/// The raw bits of element `j`.
pub fn bits(b: &Buffer, j: usize) -> u64 {
    match b {
        Buffer::F16(v) => v[j].to_bits().into(),
        Buffer::BF16(v) => v[j].to_bits().into(),
        Buffer::F32(v) => v[j].to_bits().into(),
        Buffer::F64(v) => v[j].to_bits(),
        Buffer::Bool(v) => v[j].into(),
        Buffer::I32(v) => v[j] as u32 as u64,
        Buffer::I64(v) => v[j] as u64,
    }
}

/// The first element of `b` still holding the [`sentinel`], if any.
pub fn unwritten(b: &Buffer) -> Option<usize> {
    let s = bits(&sentinel(b.dtype(), 1), 0);
    (0..b.len()).find(|&j| bits(b, j) == s)
}

/// Inputs followed by outputs pre-filled with the [`sentinel`].
pub fn with_outputs(k: &Kernel, sizes: &[i64], inputs: &[Buffer]) -> Vec<Buffer> {
    let mut inputs = inputs.iter();
    k.args
        .iter()
        .map(|a| {
            if a.output {
                sentinel(a.dtype, k.output_len(sizes))
            } else {
                inputs
                    .next()
                    .expect("an input buffer per input arg")
                    .clone()
            }
        })
        .collect()
}

/// Whether `got` is within `tol` of `want`, relative above magnitude 1. A
/// NaN matches only a NaN, and an infinity only itself (its tolerance would
/// be infinite).
pub fn close(got: f64, want: f64, tol: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() {
        return got == want;
    }
    got == want || (got - want).abs() <= tol * want.abs().max(1.0)
}

/// Compare every buffer of `got` with `want` (`k`'s buffers,
/// inputs then outputs, outputs pre-filled by [`with_outputs`]) within
/// `tol`; an element still holding the [`sentinel`] is an error. The error
/// names the first mismatch.
pub fn compare(k: &Kernel, got: &[Buffer], want: &[Buffer], tol: f64) -> Result<(), String> {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        // Inputs may hold any bit pattern, the sentinel included.
        let output = k.args[i].output;
        if let Some(j) = unwritten(w).filter(|_| output) {
            return Err(format!("buffer {i}[{j}] left unwritten by the reference"));
        }
        if let Some(j) = unwritten(g).filter(|_| output) {
            return Err(format!(
                "buffer {i}[{j}] left unwritten, expected {}",
                w.get(j)
            ));
        }
        let (g, w) = (g.to_f64(), w.to_f64());
        for (j, (a, b)) in g.iter().zip(&w).enumerate() {
            if !close(*a, *b, tol) {
                return Err(format!("buffer {i}[{j}] = {a}, expected {b}"));
            }
        }
    }
    Ok(())
}

/// Run `k` with the interpreter and the JIT (host ISA, then baseline ISA)
/// and compare every output element within `tol`.
pub fn check_with(k: &Kernel, sizes: &[i64], inputs: &[Buffer], tol: f64) {
    let mut want = with_outputs(k, sizes, inputs);
    interp::run(k, &mut want, sizes).expect("interpreter");
    let mut compiled = vec![(
        "host",
        JitModule::compile(std::slice::from_ref(k)).expect("JIT compile"),
    )];
    compiled.push((
        "baseline",
        JitModule::compile_at(std::slice::from_ref(k), IsaLevel::Baseline).expect("baseline"),
    ));
    for (isa, jit) in compiled {
        let mut got = with_outputs(k, sizes, inputs);
        run_checked(jit.function(0), k, &mut got, sizes).expect("run_checked");
        if let Err(e) = compare(k, &got, &want, tol) {
            panic!("{isa}: kernel {} sizes {sizes:?}: {e}\n{k}", k.name);
        }
    }
}

/// `check_with` on random inputs in `[lo, hi)`.
pub fn check(k: &Kernel, sizes: &[i64], lo: f64, hi: f64, tol: f64) {
    let inputs = random_inputs(k, sizes, 0x0c1a, lo, hi);
    check_with(k, sizes, &inputs, tol);
}

/// Tolerance for one rounding-level difference in `ty` arithmetic.
pub fn tol(ty: DType) -> f64 {
    match ty {
        DType::F64 => 1e-13,
        DType::F32 => 2e-6,
        DType::F16 => 2e-3,
        _ => 1.6e-2,
    }
}

pub const LENGTHS: [i64; 7] = [0, 1, 3, 4, 5, 1000, 1001];

/// A program's kernels compiled for the host ISA and for baseline SSE2,
/// with the `gemm` plans of its products.
pub struct Compiled {
    _host: JitModule,
    _base: JitModule,
    pub host: Vec<oxla_core::KernelFn>,
    pub base: Vec<oxla_core::KernelFn>,
    pub plans: Vec<Option<oxla_cpu::MatmulPlan>>,
    pub splits: Vec<Option<oxla_cpu::Split>>,
    pub kernels: Vec<Kernel>,
}

impl Compiled {
    pub fn new(kernels: &[Kernel]) -> Compiled {
        let host = JitModule::compile(kernels).expect("compile");
        let base = JitModule::compile_at(kernels, IsaLevel::Baseline).expect("baseline");
        Compiled {
            host: (0..host.len()).map(|i| host.function(i)).collect(),
            base: (0..base.len()).map(|i| base.function(i)).collect(),
            plans: oxla_cpu::matmul_plans(kernels),
            splits: oxla_cpu::split_plans(kernels),
            kernels: kernels.to_vec(),
            _host: host,
            _base: base,
        }
    }

    /// The host kernels with the products on `gemm` and large kernels
    /// split across threads, as the `oxla` crate runs them.
    pub fn with_gemm(&self) -> oxla_cpu::CpuLauncher<'_> {
        oxla_cpu::CpuLauncher {
            kernels: &self.kernels,
            fns: &self.host,
            plans: &self.plans,
            splits: &self.splits,
        }
    }
}

/// Run the program `p` on `args`, passed with their dimensions as the
/// macros pass them.
pub fn run_program(
    p: &oxla_core::exec::Program,
    launcher: &dyn oxla_core::exec::Launcher,
    args: &[oxla_core::Tensor],
) -> Vec<Buffer> {
    use oxla_core::exec::{ArgDims, RawArg};
    let bufs: Vec<Buffer> = args.iter().map(oxla_core::Tensor::to_buffer).collect();
    let raw: Vec<RawArg> = bufs
        .iter()
        .zip(args)
        .map(|(b, t)| RawArg {
            dtype: b.dtype(),
            ptr: b.as_ptr(),
            len: b.len(),
            dims: ArgDims::new(&t.shape).expect("rank within MAX_RANK"),
        })
        .collect();
    p.check_schedule().unwrap();
    // SAFETY: `raw` points into `bufs`, alive for the call; the launchers
    // run this program's kernels; the schedule was checked.
    match unsafe { p.execute(launcher, &raw) } {
        Ok(out) => out,
        // A max or min over no elements is an error at the call, as JAX
        // raises (`Program::check_nonempty`): nothing to compare, so the
        // reference's own values stand in (the callers compare with them).
        Err(e) if e.contains("no identity") => oxla_core::interp::eval(&p.function, args)
            .expect("the reference runs")
            .iter()
            .map(oxla_core::Tensor::to_buffer)
            .collect(),
        Err(e) => panic!("`{}`: {e}", p.function.name),
    }
}
