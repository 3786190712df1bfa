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

use crate::math;
use cranelift_codegen::ir::{
    self, types, AbiParam, Function, InstBuilder, MemFlagsData, Type, Value,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig, TargetIsa};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_module::{FuncId, Linkage, Module};
use fold::{fold_iadd, fold_imul};
use inst::scalar_type;
use oxla_core::kernel::{InstKind, Kernel};
use oxla_core::{DType, Size};
use plan::{invariant_insts, vector_plan, VectorPlan};

mod accs;
mod fold;
mod inst;
mod loops;
mod mem;
mod plan;
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

/// Reject kernels translation cannot handle, so it never panics: first
/// `Kernel::verify`, the one verifier of the kernel IR (every structural
/// invariant); then only what this backend cannot lower, which is no
/// property of the IR: values of a half type (the IR allows them; the CPU
/// computes in `f32` and `f64` only).
fn validate(k: &Kernel) -> Result<(), String> {
    k.verify()?;
    for (i, inst) in k.insts.iter().enumerate() {
        if !matches!(inst.ty, DType::F32 | DType::F64 | DType::Bool) {
            return Err(format!(
                "v{i}: the CPU backend computes in f32, f64 or bool, not {}",
                inst.ty
            ));
        }
    }
    Ok(())
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
}
