//! Lowering of one kernel inst to Cranelift values, scalar or vector:
//! conversions between compute types, the float ops (through `math`,
//! `pow` and `rounding`), fused multiply-adds and lane indices.

use super::fold::fold_iadd_imm;
use super::plan::VectorPlan;
use super::Body;
use crate::math::{self, Num};
use crate::pow;
use crate::rounding;
use cranelift_codegen::ir::{condcodes::FloatCC, types, InstBuilder, Type, Value};
use cranelift_frontend::FunctionBuilder;
use oxla_core::kernel::InstKind;
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use oxla_core::DType;

/// Where a load reads: an element index into its input, or an address plus
/// a constant byte offset.
#[derive(Clone, Copy)]
pub(super) enum At {
    Index(Value),
    Addr(Value, i32),
}

impl Body<'_> {
    /// Arithmetic for compute type `ty` (`Bool` values live as `i8` 0/1 in
    /// scalars and as lane masks in vectors).
    pub(super) fn num(&self, ty: DType, vector: bool) -> Num {
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
    pub(super) fn splat(&mut self, v: Value, ty: DType, plan: VectorPlan) -> Value {
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
    pub(super) fn coerce(&mut self, v: Value, from: DType, to: DType, vector: bool) -> Value {
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
    pub(super) fn inst(
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
}

/// The scalar Cranelift type of float compute type `ty`.
pub(super) fn scalar_type(ty: DType) -> Type {
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
pub(super) fn min_max(
    num: Num,
    b: &mut FunctionBuilder,
    op: BinaryOp,
    x: Value,
    y: Value,
) -> Value {
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
