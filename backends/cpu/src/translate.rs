//! The one translator from kernel IR to a Cranelift function, shared by the
//! JIT and the object-file front doors.
//!
//! The function has the kernel calling convention `(args: *const *mut u8,
//! sizes: *const i64)`. Extents and strides are evaluated once at entry. The
//! loop nest follows `domain`, outermost first; the innermost loop runs in
//! `f32x4`/`f64x2` vectors when every load there is contiguous or broadcast
//! (reductions keep several vector accumulators, one per unrolled vector, and
//! then run one vector per iteration), then finishes with a scalar tail loop,
//! which is also the whole loop for any other kernel. Values that do not
//! depend on the innermost coordinate are computed before that loop.
//!
//! Reductions sum in fixed blocks whose totals are combined pairwise (see
//! `Accs`), so the rounding error grows like log n rather than n. Max and
//! min reductions use the same accumulators (starting from -inf / +inf,
//! combined with the NaN-propagating `min_max`) without blocks: they are
//! exact in any order.
//!
//! `Size` insts are evaluated and converted once at entry; `Index` along an
//! outer axis converts that loop's counter, along the innermost axis the
//! element index (in vector loops plus a vector of lane offsets).
//!
//! Loops are rotated (one test before, one at the bottom) and their bounds are
//! computed once at entry. In the innermost loop every load and store has a
//! row start address, computed once per row; an iteration computes one byte
//! offset per element size from the induction variable and addresses each
//! element as `row + offset + constant`, which x86-64 folds into one
//! addressing mode.

use crate::half;
use crate::math::{self, Num};
use crate::pow;
use crate::rounding;
use cranelift_codegen::ir::{
    self, condcodes::FloatCC, condcodes::IntCC, types, AbiParam, Function, InstBuilder,
    InstructionData, MemFlagsData, Opcode, Type, Value, ValueDef,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig, TargetIsa};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_module::{FuncId, Linkage, Module};
use oxla_core::kernel::{InstKind, Kernel, Reduce};
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use oxla_core::{DType, Size};

mod scan;

/// Holds the contexts reused across kernels (cranelift-jit-demo style).
pub(crate) struct Translator {
    ctx: Context,
    fctx: FunctionBuilderContext,
}

impl Translator {
    pub fn new() -> Translator {
        Translator {
            ctx: Context::new(),
            fctx: FunctionBuilderContext::new(),
        }
    }

    /// Translate `kernel` into the held function, for `target`.
    pub fn translate(&mut self, kernel: &Kernel, target: &Target) -> Result<&Function, String> {
        validate(kernel)?;
        self.ctx.clear();
        let func = &mut self.ctx.func;
        func.signature = target.signature();
        Body::emit(FunctionBuilder::new(func, &mut self.fctx), kernel, target)?;
        Ok(&self.ctx.func)
    }

    /// Translate and define every kernel in `module` under `name(kernel)`.
    pub fn define_all<M: Module>(
        &mut self,
        module: &mut M,
        kernels: &[Kernel],
        name: impl Fn(&Kernel) -> String,
        linkage: Linkage,
    ) -> Result<Vec<FuncId>, String> {
        let mut target = Target::of(module.isa());
        target.helpers = math::Helpers::declare(module)?;
        let sig = target.signature();
        let mut ids = Vec::with_capacity(kernels.len());
        for kernel in kernels {
            let symbol = name(kernel);
            let id = module
                .declare_function(&symbol, linkage, &sig)
                .map_err(|e| format!("{symbol}: {e}"))?;
            self.translate(kernel, &target)
                .map_err(|e| format!("{symbol}: {e}"))?;
            module
                .define_function(id, &mut self.ctx)
                .map_err(|e| format!("{symbol}: {e:?}"))?;
            ids.push(id);
        }
        Ok(ids)
    }
}

/// What translation needs to know about the ISA.
pub(crate) struct Target {
    frontend: TargetFrontendConfig,
    call_conv: CallConv,
    ptr: Type,
    /// Whether `fma` is one instruction.
    fma: bool,
    /// x86-64 without AVX (see `Body::load`).
    sse_only: bool,
    /// The slow-path functions kernels may call (see `math::sin_cos`).
    helpers: math::Helpers,
}

impl Target {
    pub fn of(isa: &dyn TargetIsa) -> Target {
        Target {
            frontend: isa.frontend_config(),
            call_conv: isa.default_call_conv(),
            ptr: isa.pointer_type(),
            fma: crate::isa::has_native_fma(isa),
            sse_only: crate::isa::is_sse_only(isa),
            helpers: math::Helpers::unlinked(isa.default_call_conv()),
        }
    }

    /// `(args: *const *mut u8, sizes: *const i64)`.
    fn signature(&self) -> ir::Signature {
        let mut sig = ir::Signature::new(self.call_conv);
        sig.params.push(AbiParam::new(self.ptr));
        sig.params.push(AbiParam::new(self.ptr));
        sig
    }
}

/// Reject kernels the IR does not allow, so translation never panics.
fn validate(k: &Kernel) -> Result<(), String> {
    if k.reduce_dims > k.domain.len() {
        return Err(format!(
            "reduce_dims {} exceeds rank {}",
            k.reduce_dims,
            k.domain.len()
        ));
    }
    k.check_sizes()?;
    for (i, inst) in k.insts.iter().enumerate() {
        if !matches!(inst.ty, DType::F32 | DType::F64 | DType::Bool) {
            return Err(format!(
                "v{i}: compute type {} is not f32, f64 or bool",
                inst.ty
            ));
        }
        let operands: Vec<usize> = match &inst.kind {
            InstKind::Load { arg, strides, .. } => {
                if k.args.get(*arg).is_none_or(|a| a.output) {
                    return Err(format!("v{i}: load of a{arg}, which is not an input"));
                }
                if strides.len() != k.domain.len() {
                    return Err(format!(
                        "v{i}: {} strides for a rank {} domain",
                        strides.len(),
                        k.domain.len()
                    ));
                }
                vec![]
            }
            InstKind::LoadIndexed {
                arg,
                strides,
                index,
                ..
            } => {
                if k.args.get(*arg).is_none_or(|a| a.output) || strides.len() != k.domain.len() {
                    return Err(format!("v{i}: indexed load of a{arg}, not a fitting input"));
                }
                vec![*index]
            }
            InstKind::Const(_) | InstKind::Carry => vec![],
            InstKind::Size(_) | InstKind::Index(_) => {
                if inst.ty == DType::Bool {
                    return Err(format!("v{i}: a size or index as bool"));
                }
                vec![]
            }
            InstKind::Unary(_, a) => vec![*a],
            InstKind::Binary(_, a, b) | InstKind::Cmp(_, a, b) => vec![*a, *b],
            InstKind::Select(c, a, b) => vec![*c, *a, *b],
        };
        if let Some(a) = operands.iter().find(|a| **a >= i) {
            return Err(format!("v{i} uses v{a}, which is not defined before it"));
        }
        let float_op = matches!(
            inst.kind,
            InstKind::Unary(..) | InstKind::Binary(..) | InstKind::LoadIndexed { .. }
        );
        if float_op && inst.ty == DType::Bool {
            return Err(format!("v{i}: arithmetic on bool"));
        }
    }
    for st in &k.stores {
        if k.args.get(st.arg).is_none_or(|a| !a.output) || st.value >= k.insts.len() {
            return Err(format!(
                "store of v{} to a{}, which is not an output",
                st.value, st.arg
            ));
        }
        if k.is_reduction() && k.insts[st.value].ty == DType::Bool {
            return Err("a reduction of bool values".into());
        }
    }
    Ok(())
}

/// How the innermost loop is vectorized.
#[derive(Clone, Copy)]
struct VectorPlan {
    num: Num,
    lanes: i64,
    /// Vectors per iteration (independent accumulators in reductions).
    unroll: i64,
}

/// Whether the innermost loop can run in vectors: one float type throughout,
/// loads of matching storage with innermost stride 0 or 1, and map stores
/// into storage of that float type.
fn vector_plan(k: &Kernel, fma: bool) -> Option<VectorPlan> {
    let inner = k.domain.len().checked_sub(1)?;
    // Positions read from memory: one element at a time, each guarded;
    // a scan carries its state from one step to the next.
    if k.is_indexed() || k.scan.is_some() {
        return None;
    }
    let mut float = None;
    for inst in &k.insts {
        if inst.ty != DType::Bool {
            if float.is_some_and(|f| f != inst.ty) {
                return None;
            }
            float = Some(inst.ty);
        }
        match &inst.kind {
            InstKind::Load { arg, strides, .. } => {
                let (s, dtype) = (&strides[inner], k.args[*arg].dtype);
                let contiguous = s.is_one() && dtype.is_float() && dtype.compute_type() == inst.ty;
                if !(contiguous || s.is_zero()) {
                    return None;
                }
            }
            InstKind::Cmp(_, a, b)
                if k.insts[*a].ty == DType::Bool || k.insts[*b].ty == DType::Bool =>
            {
                return None
            }
            _ => {}
        }
    }
    let float = float?;
    // A region store moves by its innermost stride: vectors need 1.
    if k.region().is_some_and(|r| !r.strides[inner].is_one()) {
        return None;
    }
    if !k.is_reduction()
        && k.stores
            .iter()
            .any(|st| k.args[st.arg].dtype.compute_type() != float)
    {
        return None;
    }
    let (ty, lanes) = if float == DType::F32 {
        (types::F32X4, 4)
    } else {
        (types::F64X2, 2)
    };
    let heavy = k.insts.iter().any(|i| {
        matches!(i.kind, InstKind::Unary(op, _) if !matches!(op, UnaryOp::Neg | UnaryOp::Sqrt | UnaryOp::Powi(_)))
    });
    let unroll = match (k.is_reduction(), heavy || k.insts.len() > 16) {
        (false, _) => 1,
        (true, true) => 2,
        (true, false) => 4,
    };
    Some(VectorPlan {
        num: Num { ty, fma },
        lanes,
        unroll,
    })
}

/// Iterations of the unrolled vector loop per reduction block: each vector
/// accumulator lane adds this many elements before the block's total goes to
/// the cascade (so a block is `lanes * unroll * VECTOR_CHAIN` elements).
const VECTOR_CHAIN: i64 = 64;

/// Elements per reduction block when the innermost loop is scalar.
const SCALAR_BLOCK: i64 = 256;

/// Iterations of the unrolled vector loop per sub-block: the accumulators
/// add this many elements per lane, then are added into a second set of
/// accumulators (`Accs::outer`) and restart from zero. A lane's chain in a
/// block is therefore `SUB_CHAIN` additions plus `VECTOR_CHAIN / SUB_CHAIN`
/// additions of sub-block sums, not `VECTOR_CHAIN`: a large value no
/// longer swallows the 63 small ones its lane adds after it (16 × 2^24 then
/// 2^22 ones summed to 32 ulp below the exact sum, now 1.5 ulp, where JAX
/// is 2 ulp below). It costs one vector add per accumulator per sub-block.
const SUB_CHAIN: i64 = 4;

/// Elements per sub-block when the innermost loop is scalar (see
/// `SUB_CHAIN`).
const SCALAR_SUB_CHAIN: i64 = 16;

/// Cascade depth: a binary counter of at most 2^64 blocks has at most 64
/// partial sums pending.
const CASCADE_DEPTH: u32 = 64;

/// Reduction state for one output element.
///
/// A reduction is summed in blocks: the row (innermost axis) is cut at
/// multiples of `block` elements from its start, each full block is summed
/// by the accumulators starting from zero, and its total (a leaf) is pushed
/// onto a binary-counter cascade: leaf `c` (1-based) is first added to as
/// many pending partial sums as `c` has trailing zero bits, so equal-sized
/// subtrees merge pairwise. What is left of a row after its full blocks
/// stays in the accumulators; with several reduced axes it is flushed once
/// `pending` (elements of rows since the last flush) reaches `block`, so
/// short rows are grouped. The finish adds the last leaf to the pending sums,
/// newest first. The tree depends only on the reduced extents, so an element's
/// rounding error is O(block / (lanes · unroll) + log2(n / block)) · eps,
/// not O(n / lanes) · eps, and a later split across threads at power-of-two
/// block counts can reproduce it exactly.
struct Accs {
    vector: Vec<Vec<Variable>>,
    scalar: Vec<Variable>,
    /// Per store: the sums of the finished sub-blocks of the current block,
    /// one per vector accumulator and one scalar (sums only; see
    /// `SUB_CHAIN`).
    outer_vector: Vec<Vec<Variable>>,
    outer_scalar: Vec<Variable>,
    /// Per store: `CASCADE_DEPTH` partial sums of its scalar type.
    stack: Vec<ir::StackSlot>,
    /// Leaves pushed so far (i64).
    leaves: Variable,
    /// Partial sums on the stack (i64).
    depth: Variable,
    /// Elements since the last flush, counted per row (i64; several reduced
    /// axes only).
    pending: Variable,
    /// Elements per block of the row's main loop.
    block: i64,
}

/// Emits one kernel's body.
struct Body<'a> {
    b: FunctionBuilder<'a>,
    k: &'a Kernel,
    fma: bool,
    /// x86-64 without AVX (see `Body::load`).
    sse_only: bool,
    ptr: Type,
    helpers: math::Helpers,
    plan: Option<VectorPlan>,
    /// Per inst: true when it does not depend on the innermost coordinate.
    invariant: Vec<bool>,
    /// Per indexed load, and for a scatter store: the indexed axis's stride
    /// (elements, i64) and its length (as f64, which indices are loaded as).
    indexed: Vec<Option<(Value, Value)>>,
    scatter: Option<(Value, Value)>,
    /// Inside a `guarded` block (its loads stay below the test).
    guard_depth: u32,
    ptrs: Vec<Value>,
    extents: Vec<Value>,
    /// Per inst, per axis: element strides of loads (empty for other insts).
    strides: Vec<Vec<Value>>,
    /// Per axis: element stride of the output index.
    out_strides: Vec<Value>,
    /// Per inst: the value of a `Size` inst as a scalar float (computed at
    /// entry).
    size_vals: Vec<Option<Value>>,
    /// Per axis: the loop counter of the enclosing loop over it (outer axes;
    /// set while that loop's body is emitted).
    coords: Vec<Option<Value>>,
    /// In an innermost-loop iteration: the loop's element index and the
    /// offset of the iteration's first element from it.
    inner_index: Option<(Value, i64)>,
    /// End of the unrolled vector part of the innermost loop (a multiple of
    /// `lanes * unroll`).
    vector_end: Option<Value>,
    /// End of the one-vector-per-iteration part that follows it (a multiple
    /// of `lanes`), when the plan unrolls.
    single_end: Option<Value>,
    /// A scan kernel's state (see `scan`).
    carry: Option<Variable>,
}

/// Where a load reads: an element index into its input, or an address plus
/// a constant byte offset.
#[derive(Clone, Copy)]
enum At {
    Index(Value),
    Addr(Value, i32),
}

/// Bytes between consecutive innermost elements of a load or store.
#[derive(Clone, Copy)]
enum Step {
    Const(i64),
    Var(Value),
}

fn load_flags() -> MemFlagsData {
    MemFlagsData::new()
        .with_notrap()
        .with_readonly()
        .with_can_move()
}

fn store_flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

impl<'a> Body<'a> {
    fn emit(mut b: FunctionBuilder<'a>, k: &'a Kernel, target: &Target) -> Result<(), String> {
        let (fma, ptr_ty) = (target.fma, target.ptr);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let (args_ptr, sizes_ptr) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        let flags = MemFlagsData::trusted().with_readonly();
        let ptrs: Vec<Value> = (0..k.args.len())
            .map(|i| b.ins().load(ptr_ty, flags, args_ptr, 8 * i as i32))
            .collect();
        let size_vals: Vec<Value> = (0..k.sizes.len())
            .map(|i| b.ins().load(types::I64, flags, sizes_ptr, 8 * i as i32))
            .collect();
        let sym_vals = size_vals.clone();
        let mut eval = |s: &Size| {
            let syms = s
                .syms
                .iter()
                .map(|sym| size_vals[k.sizes.iter().position(|n| n == sym).expect("validated")]);
            let c = b.ins().iconst(types::I64, s.factor as i64);
            syms.fold(c, |acc, v| fold_imul(&mut b, acc, v))
        };
        let extents: Vec<Value> = k.domain.iter().map(&mut eval).collect();
        let strides = k
            .insts
            .iter()
            .map(|inst| match &inst.kind {
                InstKind::Load { strides, .. } | InstKind::LoadIndexed { strides, .. } => {
                    strides.iter().map(&mut eval).collect()
                }
                _ => vec![],
            })
            .collect();
        let indexed: Vec<Option<(Value, Value)>> = k
            .insts
            .iter()
            .map(|inst| match &inst.kind {
                InstKind::LoadIndexed { stride, bound, .. } => Some((eval(stride), eval(bound))),
                _ => None,
            })
            .collect();
        let scatter = k
            .region()
            .and_then(|r| r.scatter.as_ref())
            .map(|sc| (eval(&sc.stride), eval(&sc.bound)));

        let size_ints: Vec<Option<Value>> = k
            .insts
            .iter()
            .map(|inst| match &inst.kind {
                InstKind::Size(s) => Some(eval(s)),
                _ => None,
            })
            .collect();
        // Loop-invariant: converted once, here (sizes are non-negative i64).
        let size_vals = size_ints
            .iter()
            .zip(&k.insts)
            .map(|(v, inst)| v.map(|v| b.ins().fcvt_from_sint(scalar_type(inst.ty), v)))
            .collect();
        // Bounds as f64, the type indices are loaded as.
        let mut as_f64 =
            |(stride, bound): (Value, Value)| (stride, b.ins().fcvt_from_sint(types::F64, bound));
        let indexed = indexed.into_iter().map(|x| x.map(&mut as_f64)).collect();
        let scatter = scatter.map(&mut as_f64);
        let rank = k.domain.len();
        let outer = k.outer_dims();
        let mut out_strides = vec![b.ins().iconst(types::I64, 0); rank];
        let mut acc = b.ins().iconst(types::I64, 1);
        for axis in (0..outer).rev() {
            out_strides[axis] = acc;
            acc = fold_imul(&mut b, acc, extents[axis]);
        }
        // Element offsets: each load's (a slice's start), and the output
        // index of the first iteration (a region's offset, else 0).
        let eval_sum = |b: &mut FunctionBuilder, terms: &[Size]| {
            let zero = b.ins().iconst(types::I64, 0);
            terms.iter().fold(zero, |acc, t| {
                let syms = t
                    .syms
                    .iter()
                    .map(|sym| sym_vals[k.sizes.iter().position(|n| n == sym).expect("validated")]);
                let c = b.ins().iconst(types::I64, t.factor as i64);
                let v = syms.fold(c, |acc, v| fold_imul(b, acc, v));
                fold_iadd(b, acc, v)
            })
        };
        let load_offsets: Vec<Value> = k
            .insts
            .iter()
            .map(|inst| match &inst.kind {
                InstKind::Load { offset, .. } | InstKind::LoadIndexed { offset, .. } => {
                    eval_sum(&mut b, offset)
                }
                _ => b.ins().iconst(types::I64, 0),
            })
            .collect();
        let out_start = match k.region() {
            Some(r) => {
                for (axis, st) in r.strides.iter().enumerate() {
                    let c = b.ins().iconst(types::I64, st.factor as i64);
                    out_strides[axis] = st.syms.iter().fold(c, |acc, sym| {
                        let v = sym_vals[k.sizes.iter().position(|n| n == sym).expect("validated")];
                        fold_imul(&mut b, acc, v)
                    });
                }
                eval_sum(&mut b, &r.offset)
            }
            None => b.ins().iconst(types::I64, 0),
        };

        let invariant = invariant_insts(k);
        let plan = vector_plan(k, fma);
        // Loop bounds, once: `n - n % m` rather than `n & -m`, which Cranelift
        // would rematerialize (recompute) in every block that uses it.
        let mut round_down = |m: i64| {
            let n = extents[rank - 1];
            let r = b.ins().band_imm_s(n, m - 1);
            b.ins().isub(n, r)
        };
        let vector_end = plan.map(|p| round_down(p.lanes * p.unroll));
        let single_end = plan.filter(|p| p.unroll > 1).map(|p| round_down(p.lanes));
        let mut body = Body {
            b,
            k,
            fma,
            sse_only: target.sse_only,
            ptr: ptr_ty,
            helpers: target.helpers,
            plan,
            invariant,
            indexed,
            scatter,
            guard_depth: 0,
            ptrs,
            extents,
            strides,
            out_strides,
            size_vals,
            coords: vec![None; rank],
            inner_index: None,
            vector_end,
            single_end,
            carry: None,
        };
        if let Some(scan) = k.scan {
            body.scan(scan, &load_offsets, out_start)?;
        } else if rank == 0 {
            body.once(&load_offsets, out_start)?;
        } else {
            body.level(0, &load_offsets, out_start, None)?;
        }
        body.b.ins().return_(&[]);
        body.b.seal_all_blocks();
        body.b.finalize(target.frontend);
        Ok(())
    }

    /// A rank-0 kernel: one evaluation, stored at index 0.
    fn once(&mut self, load_offsets: &[Value], out: Value) -> Result<(), String> {
        let mut vals = Vec::with_capacity(self.k.insts.len());
        for i in 0..self.k.insts.len() {
            let v = self.inst(i, false, &vals, Some(At::Index(load_offsets[i])))?;
            vals.push(v);
        }
        for st in &self.k.stores {
            let ty = self.k.insts[st.value].ty;
            if self.scatter.is_some() {
                let p = self.address(st.arg, out);
                self.scatter_add_at(st.arg, vals[st.value], ty, p, 0, &vals);
                continue;
            }
            self.store(st.arg, vals[st.value], ty, out, false);
        }
        Ok(())
    }

    /// Loops over axes `axis..`; `bases` are the load indices and `out` the
    /// output index at the start of this axis.
    fn level(
        &mut self,
        axis: usize,
        bases: &[Value],
        out: Value,
        accs: Option<&Accs>,
    ) -> Result<(), String> {
        let k = self.k;
        if accs.is_none() && k.is_reduction() && axis == k.outer_dims() {
            let accs = self.new_accs();
            self.level(axis, bases, out, Some(&accs))?;
            return self.finish_reduction(&accs, out);
        }
        if axis + 1 == k.domain.len() {
            return self.innermost(bases, out, accs);
        }
        let zero = self.b.ins().iconst(types::I64, 0);
        self.counted_loop(zero, self.extents[axis], 1, |s, i, _| {
            s.coords[axis] = Some(i);
            let next: Vec<Value> = (0..bases.len())
                .map(|l| s.advance(bases[l], l, axis, i))
                .collect();
            let step = fold_imul(&mut s.b, i, s.out_strides[axis]);
            let out = fold_iadd(&mut s.b, out, step);
            s.level(axis + 1, &next, out, accs)
        })
    }

    /// `base + i * stride` of load `inst` along `axis` (other insts: `base`).
    fn advance(&mut self, base: Value, inst: usize, axis: usize, i: Value) -> Value {
        match self.strides[inst].get(axis) {
            Some(&stride) => {
                let step = fold_imul(&mut self.b, i, stride);
                fold_iadd(&mut self.b, base, step)
            }
            None => base,
        }
    }

    /// The innermost loop of one row. Loads that move along it read from a
    /// row start address (computed here, once per row) plus `j * step`
    /// bytes; in the vector loops that offset is computed once per iteration
    /// and each unrolled vector adds a constant displacement, which x86-64
    /// folds into the addressing mode.
    fn innermost(
        &mut self,
        bases: &[Value],
        out: Value,
        accs: Option<&Accs>,
    ) -> Result<(), String> {
        let k = self.k;
        let axis = k.domain.len() - 1;
        let n = self.extents[axis];
        // Values independent of the innermost coordinate, once per row (they
        // use only each other, so the placeholders for the rest stay unread).
        let mut pre: Vec<Option<Value>> = vec![None; k.insts.len()];
        let mut pre_vals = Vec::with_capacity(k.insts.len());
        for i in 0..k.insts.len() {
            let v = if self.invariant[i] {
                self.inst(i, false, &pre_vals, Some(At::Index(bases[i])))?
            } else {
                out
            };
            pre[i] = self.invariant[i].then_some(v);
            pre_vals.push(v);
        }
        let mut rows = Row::default();
        for (i, inst) in k.insts.iter().enumerate() {
            let load = match &inst.kind {
                InstKind::Load { arg, strides, .. }
                | InstKind::LoadIndexed { arg, strides, .. } => Some((arg, strides)),
                _ => None,
            };
            if let (Some((arg, strides)), false) = (load, self.invariant[i]) {
                let size = k.args[*arg].dtype.size_bytes() as i64;
                let p = self.address(*arg, bases[i]);
                let stride = &strides[axis];
                let step = if stride.syms.is_empty() {
                    Step::Const(stride.factor as i64 * size)
                } else {
                    Step::Var(scale(&mut self.b, self.strides[i][axis], size))
                };
                rows.loads.push((i, p, step));
            }
        }
        if !k.is_reduction() {
            for st in &k.stores {
                let size = k.args[st.arg].dtype.size_bytes() as i64;
                let p = self.address(st.arg, out);
                // A region store moves by its innermost stride.
                let step = match k.region().map(|r| &r.strides[axis]) {
                    None => Step::Const(size),
                    Some(s) if s.syms.is_empty() => Step::Const(s.factor as i64 * size),
                    Some(_) => Step::Var(scale(&mut self.b, self.out_strides[axis], size)),
                };
                rows.stores.push((p, step));
            }
        }
        let mut start = self.b.ins().iconst(types::I64, 0);
        // A reduction's main loop (the unrolled vector loop, else the scalar
        // loop) runs in blocks; the loops after it add to the last block.
        let mut blocks = accs;
        if let (Some(plan), Some(end)) = (self.plan, self.vector_end) {
            let splats: Vec<Option<Value>> = (0..k.insts.len())
                .map(|i| pre[i].map(|v| self.splat(v, k.insts[i].ty, plan)))
                .collect();
            let step = plan.lanes * plan.unroll;
            self.blocked_loop(start, end, step, blocks.take(), |s, j, next| {
                let at = s.row_addresses(&rows, j, next, step);
                for u in 0..plan.unroll {
                    s.inner_index = Some((j, u * plan.lanes));
                    s.iteration(&at, u * plan.lanes, &splats, Some(u as usize), accs)?;
                }
                Ok(())
            })?;
            start = end;
            if let Some(single_end) = self.single_end {
                self.counted_loop(start, single_end, plan.lanes, |s, j, next| {
                    let at = s.row_addresses(&rows, j, next, plan.lanes);
                    s.inner_index = Some((j, 0));
                    s.iteration(&at, 0, &splats, Some(0), accs)
                })?;
                start = single_end;
            }
        }
        self.blocked_loop(start, n, 1, blocks, |s, j, next| {
            let at = s.row_addresses(&rows, j, next, 1);
            s.inner_index = Some((j, 0));
            s.iteration(&at, 0, &pre, None, accs)
        })?;
        self.inner_index = None;
        match accs {
            Some(accs) if k.reduce_dims > 1 && k.reduce == Reduce::Sum => self.end_row(accs, n),
            _ => {}
        }
        Ok(())
    }

    /// `counted_loop(start, end, step, body)`, or, for a reduction's main
    /// loop (`accs` given, `start` 0), the same cut into blocks of
    /// `accs.block` elements, each full block flushed to the cascade. The
    /// inner loop is the plain counted loop; its bound is computed once per
    /// block.
    fn blocked_loop(
        &mut self,
        start: Value,
        end: Value,
        step: i64,
        accs: Option<&Accs>,
        body: impl FnOnce(&mut Self, Value, Value) -> Result<(), String>,
    ) -> Result<(), String> {
        // Max and min are exact in any order: no blocks.
        let Some(accs) = accs.filter(|_| self.k.reduce == Reduce::Sum) else {
            return self.counted_loop(start, end, step, body);
        };
        debug_assert_eq!(accs.block % step, 0);
        let chain = if step > 1 {
            SUB_CHAIN
        } else {
            SCALAR_SUB_CHAIN
        };
        let sub = step * chain;
        debug_assert_eq!(accs.block % sub, 0);
        self.counted_loop(start, end, accs.block, |s, first, block_end| {
            let partial = s.b.ins().icmp(IntCC::SignedGreaterThan, block_end, end);
            let stop = s.b.ins().select(partial, end, block_end);
            // Sub-blocks of `sub` elements, each summed from zero and then
            // added to the outer accumulators (see `SUB_CHAIN`).
            s.counted_loop(first, stop, sub, |s, sub_first, sub_end| {
                let short = s.b.ins().icmp(IntCC::SignedGreaterThan, sub_end, stop);
                let sub_stop = s.b.ins().select(short, stop, sub_end);
                s.counted_loop(sub_first, sub_stop, step, body)?;
                s.fold(accs, step > 1);
                Ok(())
            })?;
            // A partial block (the row's last) stays in the accumulators.
            let (flush, done) = (s.b.create_block(), s.b.create_block());
            s.b.ins().brif(partial, done, &[], flush, &[]);
            s.b.switch_to_block(flush);
            s.flush(accs);
            s.b.ins().jump(done, &[]);
            s.b.switch_to_block(done);
            Ok(())
        })
    }

    /// After a row of a reduction over several axes: flush the accumulators
    /// once the rows since the last flush hold a block's worth of elements.
    fn end_row(&mut self, accs: &Accs, n: Value) {
        let pending = self.b.use_var(accs.pending);
        let pending = self.b.ins().iadd(pending, n);
        let full = self
            .b
            .ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, pending, accs.block);
        let (flush, keep, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(full, flush, &[], keep, &[]);
        self.b.switch_to_block(flush);
        self.flush(accs);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(accs.pending, zero);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(keep);
        self.b.def_var(accs.pending, pending);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// The addresses of the row's loads and stores in the loop iteration
    /// that starts at element `j` (`next = j + step`). Constant steps address
    /// from `next` with a negative displacement, so `j` dies where `next` is
    /// computed and the induction variable is updated in place.
    fn row_addresses(&mut self, rows: &Row, j: Value, next: Value, step: i64) -> RowAt {
        let mut offsets: Vec<(i64, Value)> = vec![];
        let mut at = RowAt::default();
        let mut place = |b: &mut FunctionBuilder, p: Value, bytes: Step| match bytes {
            Step::Var(v) => {
                let o = b.ins().imul(j, v);
                Place {
                    p: b.ins().iadd(p, o),
                    disp: 0,
                    bytes: 0,
                }
            }
            Step::Const(c) => {
                let o = match offsets.iter().find(|(s, _)| *s == c) {
                    Some((_, v)) => *v,
                    None => {
                        let v = scale(b, next, c);
                        offsets.push((c, v));
                        v
                    }
                };
                Place {
                    p: b.ins().iadd(p, o),
                    disp: -step * c,
                    bytes: c,
                }
            }
        };
        for &(i, p, bytes) in &rows.loads {
            at.loads.push((i, place(&mut self.b, p, bytes)));
        }
        for &(p, bytes) in &rows.stores {
            at.stores.push(place(&mut self.b, p, bytes));
        }
        at
    }

    /// Elements `first..` of a loop iteration whose addresses are `at`: a
    /// vector of them accumulated into vector accumulator `acc` (reductions)
    /// or stored (maps) when `acc` is given, else one scalar element. `fixed`
    /// holds the values of the insts that do not move along the loop (splat
    /// in vector mode).
    fn iteration(
        &mut self,
        at: &RowAt,
        first: i64,
        fixed: &[Option<Value>],
        acc: Option<usize>,
        accs: Option<&Accs>,
    ) -> Result<(), String> {
        let k = self.k;
        let vector = acc.is_some();
        let disp = |pl: &Place| (pl.disp + pl.bytes * first) as i32;
        let mut vals = Vec::with_capacity(k.insts.len());
        let mut loads = at.loads.iter();
        for (i, fixed) in fixed.iter().enumerate() {
            let v = match *fixed {
                Some(v) => v,
                None => {
                    let place = match k.insts[i].kind {
                        InstKind::Load { .. } | InstKind::LoadIndexed { .. } => {
                            let (li, pl) = loads.next().expect("a row load");
                            debug_assert_eq!(*li, i);
                            Some(At::Addr(pl.p, disp(pl)))
                        }
                        _ => None,
                    };
                    self.inst(i, vector, &vals, place)?
                }
            };
            vals.push(v);
        }
        for (si, st) in k.stores.iter().enumerate() {
            match (accs, acc) {
                (Some(accs), Some(u)) => self.accumulate(accs.vector[si][u], vals[st.value]),
                (Some(accs), None) => self.accumulate(accs.scalar[si], vals[st.value]),
                (None, _) if self.scatter.is_some() => {
                    let pl = &at.stores[si];
                    let ty = k.insts[st.value].ty;
                    self.scatter_add_at(st.arg, vals[st.value], ty, pl.p, disp(pl), &vals);
                }
                (None, _) => {
                    let pl = &at.stores[si];
                    let ty = k.insts[st.value].ty;
                    self.store_at(st.arg, vals[st.value], ty, pl.p, disp(pl), vector);
                }
            }
        }
        Ok(())
    }

    fn new_accs(&mut self) -> Accs {
        let k = self.k;
        let i64_zero = self.b.ins().iconst(types::I64, 0);
        let int_var = |b: &mut FunctionBuilder| {
            let var = b.declare_var(types::I64);
            b.def_var(var, i64_zero);
            var
        };
        let (leaves, depth, pending) = (
            int_var(&mut self.b),
            int_var(&mut self.b),
            int_var(&mut self.b),
        );
        let block = match self.plan {
            Some(plan) => plan.lanes * plan.unroll * VECTOR_CHAIN,
            None => SCALAR_BLOCK,
        };
        let mut accs = Accs {
            vector: vec![],
            scalar: vec![],
            outer_vector: vec![],
            outer_scalar: vec![],
            stack: vec![],
            leaves,
            depth,
            pending,
            block,
        };
        let init = k.reduce.identity();
        for st in &k.stores {
            let num = self.num(k.insts[st.value].ty, false);
            let zero = num.fconst(&mut self.b, init);
            let var = self.b.declare_var(num.ty);
            self.b.def_var(var, zero);
            accs.scalar.push(var);
            let var = self.b.declare_var(num.ty);
            self.b.def_var(var, zero);
            accs.outer_scalar.push(var);
            if k.reduce == Reduce::Sum {
                let bytes = num.ty.bytes();
                let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
                    ir::StackSlotKind::ExplicitSlot,
                    bytes * CASCADE_DEPTH,
                    bytes.trailing_zeros() as u8,
                ));
                accs.stack.push(slot);
            }
            let (mut vector, mut outer) = (vec![], vec![]);
            if let Some(plan) = self.plan {
                for _ in 0..plan.unroll {
                    let zero = plan.num.fconst(&mut self.b, init);
                    for list in [&mut vector, &mut outer] {
                        let var = self.b.declare_var(plan.num.ty);
                        self.b.def_var(var, zero);
                        list.push(var);
                    }
                }
            }
            accs.vector.push(vector);
            accs.outer_vector.push(outer);
        }
        accs
    }

    fn accumulate(&mut self, var: Variable, v: Value) {
        let acc = self.b.use_var(var);
        let sum = self.combine(acc, v);
        self.b.def_var(var, sum);
    }

    /// The kernel's reduction of two partial results (`acc` first).
    fn combine(&mut self, acc: Value, v: Value) -> Value {
        match self.k.reduce {
            Reduce::Sum => self.b.ins().fadd(acc, v),
            Reduce::Prod => self.b.ins().fmul(acc, v),
            r => {
                let ty = self.b.func.dfg.value_type(acc);
                let num = Num { ty, fma: self.fma };
                min_max(num, &mut self.b, r.op(), acc, v)
            }
        }
    }

    /// End a sub-block: add the accumulators (the vector ones when
    /// `vector`, else the scalar one) into the outer ones and reset them to
    /// zero (sums only).
    fn fold(&mut self, accs: &Accs, vector: bool) {
        for si in 0..accs.scalar.len() {
            let pairs: Vec<(Variable, Variable)> = if vector {
                accs.vector[si]
                    .iter()
                    .copied()
                    .zip(accs.outer_vector[si].iter().copied())
                    .collect()
            } else {
                vec![(accs.scalar[si], accs.outer_scalar[si])]
            };
            for (inner, outer) in pairs {
                let (a, x) = (self.b.use_var(outer), self.b.use_var(inner));
                let sum = self.b.ins().fadd(a, x);
                self.b.def_var(outer, sum);
                let ty = self.b.func.dfg.value_type(x);
                let zero = Num { ty, fma: false }.fconst(&mut self.b, 0.0);
                self.b.def_var(inner, zero);
            }
        }
    }

    /// The sum of store `si`'s accumulators (each vector with its outer
    /// one, the vectors pairwise, then lanes pairwise, then the scalar one
    /// with its outer one), which are reset to zero.
    fn block_total(&mut self, accs: &Accs, si: usize) -> Value {
        let scalar = self.b.use_var(accs.scalar[si]);
        let ty = self.k.insts[self.k.stores[si].value].ty;
        let init = self.k.reduce.identity();
        let zero = self.num(ty, false).fconst(&mut self.b, init);
        self.b.def_var(accs.scalar[si], zero);
        let scalar = if self.k.reduce == Reduce::Sum {
            let outer = self.b.use_var(accs.outer_scalar[si]);
            self.b.def_var(accs.outer_scalar[si], zero);
            self.b.ins().fadd(outer, scalar)
        } else {
            scalar
        };
        let mut vectors: Vec<Value> = accs.vector[si].iter().map(|v| self.b.use_var(*v)).collect();
        let Some(plan) = self.plan.filter(|_| !vectors.is_empty()) else {
            return scalar;
        };
        let vzero = plan.num.fconst(&mut self.b, init);
        for v in &accs.vector[si] {
            self.b.def_var(*v, vzero);
        }
        if self.k.reduce == Reduce::Sum {
            for (x, outer) in vectors.iter_mut().zip(&accs.outer_vector[si]) {
                let o = self.b.use_var(*outer);
                self.b.def_var(*outer, vzero);
                *x = self.b.ins().fadd(o, *x);
            }
        }
        let v = self.pairwise(vectors);
        let lanes = (0..plan.lanes)
            .map(|l| self.b.ins().extractlane(v, l as u8))
            .collect();
        let h = self.pairwise(lanes);
        self.combine(h, scalar)
    }

    /// `xs[0] ⊕ xs[1] ⊕ …` as a balanced tree of the kernel's reduction
    /// (`xs` not empty).
    fn pairwise(&mut self, mut xs: Vec<Value>) -> Value {
        while xs.len() > 1 {
            xs = xs
                .chunks(2)
                .map(|p| p[1..].iter().fold(p[0], |x, &y| self.combine(x, y)))
                .collect();
        }
        xs[0]
    }

    /// The address of entry `depth` of cascade `slot` (entries of `bytes`).
    fn stack_entry(&mut self, slot: ir::StackSlot, depth: Value, bytes: i64) -> Value {
        let base = self.b.ins().stack_addr(self.ptr, slot, 0);
        let offset = scale(&mut self.b, depth, bytes);
        let offset = if self.ptr == types::I64 {
            offset
        } else {
            self.b.ins().ireduce(self.ptr, offset)
        };
        self.b.ins().iadd(base, offset)
    }

    /// Add `xs` (one value per store) to the partial sums on top of the
    /// cascade, popping them: as many as `counter` has trailing zero bits, or
    /// all of them without a counter. Returns the sums; the popped (earlier)
    /// partial sum is the left operand of each addition.
    fn merge_down(&mut self, accs: &Accs, xs: &[Value], counter: Option<Value>) -> Vec<Value> {
        let vars: Vec<Variable> = xs
            .iter()
            .map(|&x| {
                let ty = self.b.func.dfg.value_type(x);
                let var = self.b.declare_var(ty);
                self.b.def_var(var, x);
                var
            })
            .collect();
        let t = self.b.declare_var(types::I64);
        if let Some(c) = counter {
            self.b.def_var(t, c);
        }
        let (head, merge, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        // With a counter: merge while its low bit is 0 (shifting it right per
        // merge), i.e. trailing-zeros-many times. Without: until the stack
        // is empty.
        let go = match counter {
            Some(_) => {
                let t = self.b.use_var(t);
                let low = self.b.ins().band_imm_s(t, 1);
                self.b.ins().icmp_imm_s(IntCC::Equal, low, 0)
            }
            None => {
                let d = self.b.use_var(accs.depth);
                self.b.ins().icmp_imm_s(IntCC::NotEqual, d, 0)
            }
        };
        self.b.ins().brif(go, merge, &[], done, &[]);
        self.b.switch_to_block(merge);
        let d = self.b.use_var(accs.depth);
        let d = self.b.ins().iadd_imm_s(d, -1);
        self.b.def_var(accs.depth, d);
        for (si, var) in vars.iter().enumerate() {
            let x = self.b.use_var(*var);
            let ty = self.b.func.dfg.value_type(x);
            let p = self.stack_entry(accs.stack[si], d, ty.bytes() as i64);
            let left = self.b.ins().load(ty, MemFlagsData::trusted(), p, 0);
            let sum = self.b.ins().fadd(left, x);
            self.b.def_var(*var, sum);
        }
        if counter.is_some() {
            let tv = self.b.use_var(t);
            let shifted = self.b.ins().ushr_imm_u(tv, 1);
            self.b.def_var(t, shifted);
        }
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(done);
        vars.iter().map(|v| self.b.use_var(*v)).collect()
    }

    /// End a block: push each store's block total onto its cascade.
    fn flush(&mut self, accs: &Accs) {
        let leaves: Vec<Value> = (0..accs.scalar.len())
            .map(|si| self.block_total(accs, si))
            .collect();
        let c = self.b.use_var(accs.leaves);
        let c = self.b.ins().iadd_imm_s(c, 1);
        self.b.def_var(accs.leaves, c);
        let merged = self.merge_down(accs, &leaves, Some(c));
        let d = self.b.use_var(accs.depth);
        for (si, x) in merged.into_iter().enumerate() {
            let ty = self.b.func.dfg.value_type(x);
            let p = self.stack_entry(accs.stack[si], d, ty.bytes() as i64);
            self.b.ins().store(MemFlagsData::trusted(), x, p, 0);
        }
        let d = self.b.ins().iadd_imm_s(d, 1);
        self.b.def_var(accs.depth, d);
    }

    /// Add the last block's total to the pending partial sums (newest first)
    /// and write each store's result at `out`.
    fn finish_reduction(&mut self, accs: &Accs, out: Value) -> Result<(), String> {
        let last: Vec<Value> = (0..accs.scalar.len())
            .map(|si| self.block_total(accs, si))
            .collect();
        let totals = match self.k.reduce {
            Reduce::Sum => self.merge_down(accs, &last, None),
            _ => last,
        };
        for (st, total) in self.k.stores.iter().zip(totals) {
            self.store(st.arg, total, self.k.insts[st.value].ty, out, false);
        }
        Ok(())
    }

    /// `for (i = start; i < end; i += step) body(i, i + step)`, rotated: one
    /// test before the loop and one at the bottom of each iteration. `i + step`
    /// is computed first, so the body may address from it.
    fn counted_loop(
        &mut self,
        start: Value,
        end: Value,
        step: i64,
        body: impl FnOnce(&mut Self, Value, Value) -> Result<(), String>,
    ) -> Result<(), String> {
        let iv = self.b.declare_var(types::I64);
        self.b.def_var(iv, start);
        let (block, exit) = (self.b.create_block(), self.b.create_block());
        let enter = self.b.ins().icmp(IntCC::SignedLessThan, start, end);
        self.b.ins().brif(enter, block, &[], exit, &[]);
        self.b.switch_to_block(block);
        let i = self.b.use_var(iv);
        let next = self.b.ins().iadd_imm_s(i, step);
        body(self, i, next)?;
        self.b.def_var(iv, next);
        let more = self.b.ins().icmp(IntCC::SignedLessThan, next, end);
        self.b.ins().brif(more, block, &[], exit, &[]);
        self.b.switch_to_block(exit);
        Ok(())
    }

    /// Arithmetic for compute type `ty` (`Bool` values live as `i8` 0/1 in
    /// scalars and as lane masks in vectors).
    fn num(&self, ty: DType, vector: bool) -> Num {
        match (vector, self.plan) {
            (true, Some(plan)) => plan.num,
            _ => Num {
                ty: if ty == DType::F64 {
                    types::F64
                } else {
                    types::F32
                },
                fma: self.fma,
            },
        }
    }

    /// A scalar value broadcast to the plan's vector shape.
    fn splat(&mut self, v: Value, ty: DType, plan: VectorPlan) -> Value {
        if ty == DType::Bool {
            let int = plan.num.int();
            let wide = self.b.ins().uextend(int.lane_type(), v);
            let mask = self.b.ins().ineg(wide);
            self.b.ins().splat(int, mask)
        } else {
            self.b.ins().splat(plan.num.ty, v)
        }
    }

    /// Convert `v` between compute types.
    fn coerce(&mut self, v: Value, from: DType, to: DType, vector: bool) -> Value {
        if from == to {
            return v;
        }
        let num = self.num(if to == DType::Bool { from } else { to }, vector);
        match (from, to) {
            (DType::F32, DType::F64) => self.b.ins().fpromote(types::F64, v),
            (DType::F64, DType::F32) => self.b.ins().fdemote(types::F32, v),
            (_, DType::Bool) => {
                let zero = num.fconst(&mut self.b, 0.0);
                self.b.ins().fcmp(FloatCC::NotEqual, v, zero)
            }
            _ if vector => {
                let one = num.fconst(&mut self.b, 1.0);
                let one = num.bits(&mut self.b, one);
                let bits = self.b.ins().band(v, one);
                num.float_of_bits(&mut self.b, bits)
            }
            _ => {
                let wide = self.b.ins().uextend(types::I32, v);
                self.b.ins().fcvt_from_uint(num.ty, wide)
            }
        }
    }

    /// Operand `a` of inst `i`, converted to `ty`.
    fn operand(&mut self, vals: &[Value], a: usize, ty: DType, vector: bool) -> Value {
        self.coerce(vals[a], self.k.insts[a].ty, ty, vector)
    }

    /// Emit inst `i` given the values of earlier insts; `at` is where a load
    /// reads (unused by other insts).
    fn inst(
        &mut self,
        i: usize,
        vector: bool,
        vals: &[Value],
        at: Option<At>,
    ) -> Result<Value, String> {
        let inst = &self.k.insts[i];
        let ty = inst.ty;
        let num = self.num(ty, vector);
        Ok(match &inst.kind {
            InstKind::Load { arg, .. } => {
                let (p, offset) = match at.expect("a load's address") {
                    At::Index(index) => (self.address(*arg, index), 0),
                    At::Addr(p, offset) => (p, offset),
                };
                self.load(*arg, ty, p, offset, vector)
            }
            InstKind::LoadIndexed { arg, index, .. } => {
                let (p, offset) = match at.expect("a load's address") {
                    At::Index(index) => (self.address(*arg, index), 0),
                    At::Addr(p, offset) => (p, offset),
                };
                let (stride, bound) = self.indexed[i].expect("computed at entry");
                let (arg, index) = (*arg, vals[*index]);
                let value = scalar_type(ty);
                self.guarded(index, bound, stride, arg, p, Some(value), |s, p| {
                    let v = s.load(arg, ty, p, offset, false);
                    vec![v]
                })[0]
            }
            InstKind::Const(c) if ty == DType::Bool => {
                let bit = self.b.ins().iconst(types::I8, (*c != 0.0) as i64);
                if vector {
                    self.splat(bit, ty, self.plan.expect("vector mode"))
                } else {
                    bit
                }
            }
            InstKind::Const(c) => num.fconst(&mut self.b, *c),
            InstKind::Unary(op, a) => {
                let x = self.operand(vals, *a, ty, vector);
                let (b, helpers) = (&mut self.b, &self.helpers);
                match op {
                    UnaryOp::Neg => b.ins().fneg(x),
                    UnaryOp::Exp => math::exp(num, b, x),
                    UnaryOp::Log => math::log(num, b, x),
                    UnaryOp::Sin => math::sin_cos(num, b, x, false, helpers),
                    UnaryOp::Cos => math::sin_cos(num, b, x, true, helpers),
                    UnaryOp::Tanh => math::tanh(num, b, x),
                    UnaryOp::Sqrt => b.ins().sqrt(x),
                    UnaryOp::Powi(n) => math::powi(num, b, x, *n),
                    UnaryOp::ExpM1 => math::expm1(num, b, x),
                    UnaryOp::Erf => math::erf(num, b, x),
                    UnaryOp::Round(mode) => rounding::round(num, b, x, *mode),
                    UnaryOp::Sign => rounding::sign(num, b, x),
                    UnaryOp::Signum => rounding::signum(num, b, x),
                }
            }
            InstKind::Binary(op, a, c) => {
                if let Some(fused) = self.fused_mul_add(*op, *a, *c, ty, vals, vector) {
                    return Ok(fused);
                }
                let x = self.operand(vals, *a, ty, vector);
                let y = self.operand(vals, *c, ty, vector);
                let b = &mut self.b;
                match op {
                    BinaryOp::Add => b.ins().fadd(x, y),
                    BinaryOp::Sub => b.ins().fsub(x, y),
                    BinaryOp::Mul => b.ins().fmul(x, y),
                    BinaryOp::Div => b.ins().fdiv(x, y),
                    BinaryOp::Max | BinaryOp::Min => min_max(num, b, *op, x, y),
                    BinaryOp::Pow => pow::pow(num, b, x, y),
                }
            }
            InstKind::Cmp(op, a, c) => {
                let wide = if self.k.insts[*a].ty == DType::F64 || self.k.insts[*c].ty == DType::F64
                {
                    DType::F64
                } else {
                    DType::F32
                };
                let x = self.operand(vals, *a, wide, vector);
                let y = self.operand(vals, *c, wide, vector);
                let cc = match op {
                    CmpOp::Lt => FloatCC::LessThan,
                    CmpOp::Le => FloatCC::LessThanOrEqual,
                    CmpOp::Gt => FloatCC::GreaterThan,
                    CmpOp::Ge => FloatCC::GreaterThanOrEqual,
                    CmpOp::Eq => FloatCC::Equal,
                    CmpOp::Ne => FloatCC::NotEqual,
                };
                self.b.ins().fcmp(cc, x, y)
            }
            InstKind::Select(c, a, e) => {
                let cond = self.operand(vals, *c, DType::Bool, vector);
                let x = self.operand(vals, *a, ty, vector);
                let y = self.operand(vals, *e, ty, vector);
                num.select(&mut self.b, cond, x, y)
            }
            InstKind::Size(_) => {
                let v = self.size_vals[i].expect("converted at entry");
                self.widen(v, ty, vector)
            }
            InstKind::Carry => {
                let v = self
                    .b
                    .use_var(self.carry.expect("a carry in a scan kernel"));
                self.widen(v, ty, vector)
            }
            // An outer loop's counter (a scan kernel sets every axis's).
            InstKind::Index(axis) if self.coords[*axis].is_some() => {
                let c = self.coords[*axis].expect("inside the loop over the axis");
                let v = self.b.ins().fcvt_from_sint(scalar_type(ty), c);
                self.widen(v, ty, vector)
            }
            InstKind::Index(_) => {
                let (j, first) = self.inner_index.expect("inside the innermost loop");
                if vector {
                    self.lane_indices(num, j, first)
                } else {
                    let j = fold_iadd_imm(&mut self.b, j, first);
                    self.b.ins().fcvt_from_sint(scalar_type(ty), j)
                }
            }
        })
    }

    /// A scalar float, splat when `vector`.
    fn widen(&mut self, v: Value, ty: DType, vector: bool) -> Value {
        match (vector, self.plan) {
            (true, Some(plan)) => self.splat(v, ty, plan),
            _ => v,
        }
    }

    /// The vector `[j + first, j + first + 1, …]` as floats of `num`, each
    /// the correctly rounded value of its integer (as the interpreter has
    /// it). f64 lanes: `j` converts exactly (below 2^53) and adding the small
    /// offsets is exact. f32 lanes: `j = hi + lo` with `lo = j mod 2^16`;
    /// `hi` converts exactly (below 2^40), `lo + offset` is exact, and their
    /// sum rounds once.
    fn lane_indices(&mut self, num: Num, j: Value, first: i64) -> Value {
        let lanes = num.ty.lane_count() as i64;
        let lane = num.ty.lane_type();
        let offsets: Vec<u8> = (0..lanes)
            .flat_map(|l| {
                let x = (first + l) as f64;
                if num.is_f32() {
                    (x as f32).to_le_bytes().to_vec()
                } else {
                    x.to_le_bytes().to_vec()
                }
            })
            .collect();
        let handle = self.b.func.dfg.constants.insert(offsets.into());
        let offsets = self.b.ins().vconst(num.ty, handle);
        let b = &mut self.b;
        if !num.is_f32() {
            let base = b.ins().fcvt_from_sint(lane, j);
            let base = b.ins().splat(num.ty, base);
            return b.ins().fadd(base, offsets);
        }
        let lo = b.ins().band_imm_s(j, 0xffff);
        let hi = b.ins().isub(j, lo);
        let (lo, hi) = (
            b.ins().fcvt_from_sint(lane, lo),
            b.ins().fcvt_from_sint(lane, hi),
        );
        let (lo, hi) = (b.ins().splat(num.ty, lo), b.ins().splat(num.ty, hi));
        let small = b.ins().fadd(lo, offsets);
        b.ins().fadd(hi, small)
    }

    /// `a*b + c`, `a*b - c` or `c - a*b` as one `fma` where the ISA has it.
    fn fused_mul_add(
        &mut self,
        op: BinaryOp,
        l: usize,
        r: usize,
        ty: DType,
        vals: &[Value],
        vector: bool,
    ) -> Option<Value> {
        if !self.fma || !matches!(op, BinaryOp::Add | BinaryOp::Sub) || ty == DType::Bool {
            return None;
        }
        let k = self.k;
        let product = |v: usize| match k.insts[v].kind {
            InstKind::Binary(BinaryOp::Mul, x, y)
                if [v, x, y].iter().all(|&w| k.insts[w].ty == ty) =>
            {
                Some((x, y))
            }
            _ => None,
        };
        let (mul, other, negate_product) = match (product(l), product(r)) {
            (Some(p), _) => (p, r, false),
            (None, Some(p)) if op == BinaryOp::Add => (p, l, false),
            (None, Some(p)) => (p, l, true),
            (None, None) => return None,
        };
        let mut x = vals[mul.0];
        let y = vals[mul.1];
        let mut z = self.operand(vals, other, ty, vector);
        if negate_product {
            x = self.b.ins().fneg(x);
        } else if op == BinaryOp::Sub {
            z = self.b.ins().fneg(z);
        }
        Some(self.b.ins().fma(x, y, z))
    }

    /// `then(p + c·stride)` (in bytes of `arg`'s elements), `c` the index
    /// value `i` (f64) wrapped once if negative (`i + bound`) and clamped
    /// into `0..bound` (`ops::gather::clamp_index`, JAX's indexing and
    /// gather default); nothing when the axis is empty: the one place
    /// an address is computed from a value read from memory. With `value`
    /// given, `then` returns one value of that type and the result is it,
    /// or 0 for an empty axis; the loads `then` emits are never hoisted
    /// above the test (`guard_depth`).
    #[allow(clippy::too_many_arguments)]
    fn guarded(
        &mut self,
        i: Value,
        bound: Value,
        stride: Value,
        arg: usize,
        p: Value,
        value: Option<Type>,
        then: impl FnOnce(&mut Self, Value) -> Vec<Value>,
    ) -> Vec<Value> {
        // Wrap a negative index once (JAX: i + bound), then clamp into
        // 0..=bound-1: a compare and select at each end (the index is an
        // integer, never NaN); for an empty axis the result is 0, which the
        // test below rejects.
        let zero = self.b.ins().f64const(0.0);
        let one = self.b.ins().f64const(1.0);
        let negative = self.b.ins().fcmp(FloatCC::LessThan, i, zero);
        let wrapped = self.b.ins().fadd(i, bound);
        let i = self.b.ins().select(negative, wrapped, i);
        let last = self.b.ins().fsub(bound, one);
        let above = self.b.ins().fcmp(FloatCC::GreaterThan, i, last);
        let i = self.b.ins().select(above, last, i);
        let below = self.b.ins().fcmp(FloatCC::LessThan, i, zero);
        let i = self.b.ins().select(below, zero, i);
        let inside = self.b.ins().fcmp(FloatCC::LessThan, i, bound);
        let (yes, done) = (self.b.create_block(), self.b.create_block());
        let mut otherwise = Vec::new();
        if let Some(ty) = value {
            self.b.append_block_param(done, ty);
            otherwise.push(if ty == types::F64 {
                self.b.ins().f64const(0.0)
            } else {
                self.b.ins().f32const(0.0)
            });
        }
        let args: Vec<ir::BlockArg> = otherwise.iter().map(|v| (*v).into()).collect();
        self.b.ins().brif(inside, yes, &[], done, &args);
        self.b.switch_to_block(yes);
        // Clamped into range, so the conversion is exact and the product fits.
        let at = self.b.ins().fcvt_to_sint(types::I64, i);
        let at = self.b.ins().imul(at, stride);
        let bytes = scale(&mut self.b, at, self.k.args[arg].dtype.size_bytes() as i64);
        let q = self.b.ins().iadd(p, bytes);
        self.guard_depth += 1;
        let out = then(self, q);
        self.guard_depth -= 1;
        let args: Vec<ir::BlockArg> = out.iter().map(|v| (*v).into()).collect();
        self.b.ins().jump(done, &args);
        self.b.switch_to_block(done);
        self.b.block_params(done).to_vec()
    }

    /// `[p + offset] += v` for a scatter store, at the store's index clamped
    /// into range (in iteration order: deterministic).
    fn scatter_add_at(
        &mut self,
        arg: usize,
        v: Value,
        ty: DType,
        p: Value,
        offset: i32,
        vals: &[Value],
    ) {
        let index = self
            .k
            .region()
            .and_then(|r| r.scatter.as_ref())
            .expect("a scatter")
            .index;
        let (stride, bound) = self.scatter.expect("computed at entry");
        self.guarded(vals[index], bound, stride, arg, p, None, |s, q| {
            let old = s.load(arg, ty, q, offset, false);
            let sum = s.b.ins().fadd(old, v);
            s.store_at(arg, sum, ty, q, offset, false);
            vec![]
        });
    }

    /// The address of element `index` of buffer `arg`.
    fn address(&mut self, arg: usize, index: Value) -> Value {
        let size = self.k.args[arg].dtype.size_bytes() as i64;
        let offset = scale(&mut self.b, index, size);
        fold_iadd(&mut self.b, self.ptrs[arg], offset)
    }

    /// Load the element of input `arg` at `p + offset` bytes (a vector of
    /// them from there on in vector mode) as compute type `ty`.
    fn load(&mut self, arg: usize, ty: DType, p: Value, offset: i32, vector: bool) -> Value {
        let dtype = self.k.args[arg].dtype;
        // Under an index test: neither hoisted nor read-only (a scatter
        // reads what it writes).
        let f = match self.guard_depth {
            0 => load_flags(),
            _ => MemFlagsData::new().with_notrap(),
        };
        let num = self.num(DType::F32, vector);
        let b = &mut self.b;
        let (v, natural) = match dtype {
            DType::F32 | DType::F64 if vector && self.sse_only => {
                // Cranelift (0.135) sinks a vector load into a legacy-SSE
                // `cmpps`/`cmppd` as a memory operand, which faults unless
                // 16-byte aligned (ours need not be). A load that reaches
                // its user through a bitcast is never sunk: it stays a
                // `movdqu`, as for every other SSE op on unaligned memory.
                let n = self.num(dtype, vector);
                let bits = self.b.ins().load(n.int(), f, p, offset);
                let flags = MemFlagsData::new().with_endianness(ir::Endianness::Little);
                (self.b.ins().bitcast(n.ty, flags, bits), dtype)
            }
            DType::F32 | DType::F64 => {
                let n = self.num(dtype, vector);
                (self.b.ins().load(n.ty, f, p, offset), dtype)
            }
            DType::F16 | DType::BF16 => {
                let bits = if vector {
                    b.ins().uload16x4(f, p, offset)
                } else {
                    b.ins().uload16(types::I32, f, p, offset)
                };
                let v = if dtype == DType::F16 {
                    half::f16_to_f32(num, b, bits)
                } else {
                    half::bf16_to_f32(num, b, bits)
                };
                (v, DType::F32)
            }
            DType::Bool => {
                let byte = b.ins().load(types::I8, f, p, offset);
                (b.ins().icmp_imm_u(IntCC::NotEqual, byte, 0), DType::Bool)
            }
            DType::I32 | DType::I64 => {
                let int = if dtype == DType::I32 {
                    types::I32
                } else {
                    types::I64
                };
                let x = b.ins().load(int, f, p, offset);
                (b.ins().fcvt_from_sint(types::F64, x), DType::F64)
            }
        };
        self.coerce(v, natural, ty, vector)
    }

    /// Store `v` (compute type `ty`) at element `index` of output `arg`.
    fn store(&mut self, arg: usize, v: Value, ty: DType, index: Value, vector: bool) {
        let p = self.address(arg, index);
        self.store_at(arg, v, ty, p, 0, vector);
    }

    /// Store `v` (compute type `ty`) into output `arg` at `p + offset` bytes.
    fn store_at(&mut self, arg: usize, v: Value, ty: DType, p: Value, offset: i32, vector: bool) {
        let dtype = self.k.args[arg].dtype;
        let f = store_flags();
        match dtype {
            DType::F32 | DType::F64 => {
                let v = self.coerce(v, ty, dtype, vector);
                self.b.ins().store(f, v, p, offset);
            }
            DType::F16 | DType::BF16 => {
                let v = self.coerce(v, ty, DType::F32, vector);
                let num = self.num(DType::F32, vector);
                let b = &mut self.b;
                let bits = if dtype == DType::F16 {
                    half::f32_to_f16(num, b, v)
                } else {
                    half::f32_to_bf16(num, b, v)
                };
                if vector {
                    // Pack the four 16-bit lanes (sign-extended so that the
                    // signed saturating narrow keeps them) into 64 bits.
                    let s = b.ins().ishl_imm_u(bits, 16);
                    let s = b.ins().sshr_imm_u(s, 16);
                    let packed = b.ins().snarrow(s, s);
                    let flags = MemFlagsData::new().with_endianness(ir::Endianness::Little);
                    let wide = b.ins().bitcast(types::I64X2, flags, packed);
                    let low = b.ins().extractlane(wide, 0);
                    b.ins().store(f, low, p, offset);
                } else {
                    b.ins().istore16(f, bits, p, offset);
                }
            }
            DType::Bool => {
                let v = self.coerce(v, ty, DType::Bool, vector);
                self.b.ins().store(f, v, p, offset);
            }
            DType::I32 | DType::I64 => {
                let v = self.coerce(v, ty, DType::F64, vector);
                let int = if dtype == DType::I32 {
                    types::I32
                } else {
                    types::I64
                };
                let x = self.b.ins().fcvt_to_sint_sat(int, v);
                self.b.ins().store(f, x, p, offset);
            }
        }
    }
}

/// The scalar Cranelift type of float compute type `ty`.
fn scalar_type(ty: DType) -> Type {
    if ty == DType::F64 {
        types::F64
    } else {
        types::F32
    }
}

/// `max(x, y)`: NaN if either is NaN, else `x > y ? x : y` (`min`: `<`),
/// with ties of ±0 fixed up below (+0 for max, -0 for min).
///
/// `select(y < x, x, y)` is written so that Cranelift's x86-64 backend
/// matches it to `maxps`/`maxpd`/`maxss`/`maxsd x, y` (which return `y` when
/// either is NaN, and `y` at ±0 ties, as we want); a NaN `x` is then put
/// back by an unordered self-compare and a select. From the disassembly
/// (Cranelift 0.135): on x86-64-v3 `vmaxps` + `vcmpunordps` + `vpblendvb`
/// per vector; on baseline SSE2 `maxps` + `cmpunordps` + `andps` + `andnps` +
/// `orps` (plus register copies); in scalar code `maxss` + `ucomiss` + a
/// `jnp` over one `movaps` (`pd`/`sd` forms for f64, `min*` for min).
fn min_max(num: Num, b: &mut FunctionBuilder, op: BinaryOp, x: Value, y: Value) -> Value {
    let take_x = if op == BinaryOp::Max {
        b.ins().fcmp(FloatCC::LessThan, y, x)
    } else {
        b.ins().fcmp(FloatCC::LessThan, x, y)
    };
    let m = num.select(b, take_x, x, y);
    let x_nan = b.ins().fcmp(FloatCC::Unordered, x, x);
    let m = num.select(b, x_nan, x, m);
    // At a tie, the bitwise AND (max) or OR (min): +0 for max and -0 for
    // min of zeros of either sign, the operand itself otherwise (JAX's rule,
    // `BinaryOp::eval`).
    let tie = b.ins().fcmp(FloatCC::Equal, x, y);
    let z = if op == BinaryOp::Max {
        b.ins().band(x, y)
    } else {
        b.ins().bor(x, y)
    };
    num.select(b, tie, z, m)
}

/// Insts whose value is the same for every innermost coordinate: constants,
/// loads with a zero innermost stride, and ops on such values.
fn invariant_insts(k: &Kernel) -> Vec<bool> {
    let mut inv: Vec<bool> = Vec::with_capacity(k.insts.len());
    for inst in &k.insts {
        let v = match &inst.kind {
            InstKind::Load { strides, .. } => strides.last().is_none_or(|s| s.is_zero()),
            InstKind::LoadIndexed { strides, index, .. } => {
                strides.last().is_none_or(|s| s.is_zero()) && inv[*index]
            }
            InstKind::Const(_) | InstKind::Size(_) => true,
            InstKind::Index(axis) => axis + 1 != k.domain.len(),
            InstKind::Carry => false,
            InstKind::Unary(_, a) => inv[*a],
            InstKind::Binary(_, a, b) | InstKind::Cmp(_, a, b) => inv[*a] && inv[*b],
            InstKind::Select(c, a, b) => inv[*c] && inv[*a] && inv[*b],
        };
        inv.push(v);
    }
    inv
}

/// What a row of the innermost loop reads and writes: per moving load (inst,
/// row start address, bytes between elements), and per map store (row start
/// address, bytes between elements).
#[derive(Default)]
struct Row {
    loads: Vec<(usize, Value, Step)>,
    stores: Vec<(Value, Step)>,
}

/// Where element `e` of a loop iteration is: `p + disp + e * bytes`.
struct Place {
    p: Value,
    disp: i64,
    bytes: i64,
}

/// The places of a `Row`'s loads (with their inst) and stores in one loop
/// iteration.
#[derive(Default)]
struct RowAt {
    loads: Vec<(usize, Place)>,
    stores: Vec<Place>,
}

/// The value of `v` when it is an integer constant.
fn iconst_value(b: &FunctionBuilder, v: Value) -> Option<i64> {
    let dfg = &b.func.dfg;
    match dfg.value_def(v) {
        ValueDef::Result(inst, _) => match dfg.insts[inst] {
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } => Some(imm.bits()),
            _ => None,
        },
        _ => None,
    }
}

/// `x + c`, without emitting the addition for 0.
fn fold_iadd_imm(b: &mut FunctionBuilder, x: Value, c: i64) -> Value {
    if c == 0 {
        x
    } else {
        b.ins().iadd_imm_s(x, c)
    }
}

/// `x + y`, without emitting the addition when either is the constant 0.
fn fold_iadd(b: &mut FunctionBuilder, x: Value, y: Value) -> Value {
    match (iconst_value(b, x), iconst_value(b, y)) {
        (_, Some(0)) => x,
        (Some(0), _) => y,
        _ => b.ins().iadd(x, y),
    }
}

/// `x * y`, folding multiplications by the constants 0 and 1.
fn fold_imul(b: &mut FunctionBuilder, x: Value, y: Value) -> Value {
    match (iconst_value(b, x), iconst_value(b, y)) {
        (_, Some(1)) | (Some(0), _) => x,
        (Some(1), _) | (_, Some(0)) => y,
        _ => b.ins().imul(x, y),
    }
}

/// `x * c` for a constant `c`: a shift for powers of two, nothing for 1 or
/// for a constant `x` of 0.
fn scale(b: &mut FunctionBuilder, x: Value, c: i64) -> Value {
    if iconst_value(b, x) == Some(0) || c == 1 {
        return x;
    }
    if c > 0 && c & (c - 1) == 0 {
        b.ins().ishl_imm_u(x, c.trailing_zeros() as i64)
    } else {
        b.ins().imul_imm_s(x, c)
    }
}
