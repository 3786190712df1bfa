//! `convert`: a cast between element types with Rust's `as` semantics
//! (float → integer truncates toward zero and saturates, NaN → 0; integer →
//! float rounds to nearest; bool → number is 0 or 1; number → bool is
//! `!= 0`), which is what `DType::round` computes.
//!
//! Between float types it is linear: the tangent is converted too, and a
//! cotangent converted back. From or to an integer or bool type the
//! derivative is zero, as in JAX, where integer values carry no tangent.
//!
//! In the kernel IR an integer or bool *buffer* converted to a float is a
//! load that widens (as half-precision loads do), a bool value converted
//! to a float is a select of 1 and 0, and a float converted to an integer
//! as a kernel's result is the store's conversion; `fusion` refuses the
//! other conversions inside a kernel (see `kernel_supported`).

use crate::dtype::DType;
use crate::ir::{Function, Type, Var};
use crate::ops::Op;
use crate::tensor::Tensor;

pub fn convert_infer(x: &Type, to: DType) -> Result<Type, String> {
    Ok(Type::new(to, x.shape.clone()))
}

pub fn convert_eval(x: &Tensor, to: DType) -> Tensor {
    Tensor::new(
        to,
        x.shape.clone(),
        x.data.iter().map(|v| to.round(*v)).collect(),
    )
}

/// Whether the conversion carries derivatives: float to float.
pub fn is_linear(from: DType, to: DType) -> bool {
    from.is_float() && to.is_float()
}

pub fn convert_jvp(f: &mut Function, x: Var, to: DType, t: Var) -> Option<Var> {
    is_linear(f.dtype(x), to).then(|| convert(f, t, to))
}

/// Transpose (float to float only): the cotangent converted back.
pub fn convert_transpose(f: &mut Function, x_ty: &Type, ct: Var) -> Var {
    convert(f, ct, x_ty.dtype)
}

pub fn convert(f: &mut Function, x: Var, to: DType) -> Var {
    if f.dtype(x) == to {
        return x;
    }
    f.push(Op::Convert { dtype: to }, &[x])
        .expect("internal error: convert")
}

/// Whether a kernel can hold the conversion: to a float from an integer or
/// bool (a widening load or a select).
pub fn kernel_supported(from: DType, to: DType) -> bool {
    to.is_float() && !from.is_float()
}
