//! Integer address arithmetic that folds constants as it is built, so that
//! extents of 1 and offsets of 0 emit nothing.

use cranelift_codegen::ir::{InstBuilder, InstructionData, Opcode, Value, ValueDef};
use cranelift_frontend::FunctionBuilder;

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
pub(super) fn fold_iadd_imm(b: &mut FunctionBuilder, x: Value, c: i64) -> Value {
    if c == 0 {
        x
    } else {
        b.ins().iadd_imm_s(x, c)
    }
}

/// `x + y`, without emitting the addition when either is the constant 0.
pub(super) fn fold_iadd(b: &mut FunctionBuilder, x: Value, y: Value) -> Value {
    match (iconst_value(b, x), iconst_value(b, y)) {
        (_, Some(0)) => x,
        (Some(0), _) => y,
        _ => b.ins().iadd(x, y),
    }
}

/// `x * y`, folding multiplications by the constants 0 and 1.
pub(super) fn fold_imul(b: &mut FunctionBuilder, x: Value, y: Value) -> Value {
    match (iconst_value(b, x), iconst_value(b, y)) {
        (_, Some(1)) | (Some(0), _) => x,
        (Some(1), _) | (_, Some(0)) => y,
        _ => b.ins().imul(x, y),
    }
}

/// `x * c` for a constant `c`: a shift for powers of two, nothing for 1 or
/// for a constant `x` of 0.
pub(super) fn scale(b: &mut FunctionBuilder, x: Value, c: i64) -> Value {
    if iconst_value(b, x) == Some(0) || c == 1 {
        return x;
    }
    if c > 0 && c & (c - 1) == 0 {
        b.ins().ishl_imm_u(x, c.trailing_zeros() as i64)
    } else {
        b.ins().imul_imm_s(x, c)
    }
}
