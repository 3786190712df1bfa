//! Memory access: element addresses, loads and stores of every storage
//! dtype (converted to and from the compute types), and the clamped,
//! guarded access of indexed loads and scatter stores.

use super::fold::{fold_iadd, scale};
use super::Body;
use crate::half;
use cranelift_codegen::ir::{
    self, condcodes::FloatCC, condcodes::IntCC, types, InstBuilder, MemFlagsData, Type, Value,
};
use oxla_core::DType;

fn load_flags() -> MemFlagsData {
    MemFlagsData::new()
        .with_notrap()
        .with_readonly()
        .with_can_move()
}

fn store_flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

impl Body<'_> {
    /// `then(p + c·stride)` (in bytes of `arg`'s elements), `c` the index
    /// value `i` (f64) wrapped once if negative (`i + bound`) and clamped
    /// into `0..bound` (`ops::gather::clamp_index`, JAX's indexing and
    /// gather default); nothing when the axis is empty: the one place
    /// an address is computed from a value read from memory. With `value`
    /// given, `then` returns one value of that type and the result is it,
    /// or 0 for an empty axis; the loads `then` emits are never hoisted
    /// above the test (`guard_depth`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn guarded(
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
    pub(super) fn scatter_add_at(
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
    pub(super) fn address(&mut self, arg: usize, index: Value) -> Value {
        let size = self.k.args[arg].dtype.size_bytes() as i64;
        let offset = scale(&mut self.b, index, size);
        fold_iadd(&mut self.b, self.ptrs[arg], offset)
    }

    /// Load the element of input `arg` at `p + offset` bytes (a vector of
    /// them from there on in vector mode) as compute type `ty`.
    pub(super) fn load(
        &mut self,
        arg: usize,
        ty: DType,
        p: Value,
        offset: i32,
        vector: bool,
    ) -> Value {
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
    pub(super) fn store(&mut self, arg: usize, v: Value, ty: DType, index: Value, vector: bool) {
        let p = self.address(arg, index);
        self.store_at(arg, v, ty, p, 0, vector);
    }

    /// Store `v` (compute type `ty`) into output `arg` at `p + offset` bytes.
    pub(super) fn store_at(
        &mut self,
        arg: usize,
        v: Value,
        ty: DType,
        p: Value,
        offset: i32,
        vector: bool,
    ) {
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
