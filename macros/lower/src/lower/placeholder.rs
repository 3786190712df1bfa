//! What the macro emits after an error: every item the expansion would have
//! defined, with a body that cannot fail to compile, so that the user sees
//! only oxla's errors. Callers of `f`, `f_into`, `df`, `F_IR`, … still find
//! them, with the types they would have had: the transforms run on a
//! placeholder IR built from the signature alone (each result a broadcast
//! of the sum of the float parameters), which has the declared parameter
//! and result types whatever the body holds.

use crate::lower::{ident_name, param_ir_type, return_tys};
use crate::parse::types::param_ty;
use oxla_core::{DType, Dim, Function, Op, Shape};

/// The placeholder IR of `item`'s signature, or `None` when the signature
/// itself is not one oxla supports (then only the function is emitted).
pub(crate) fn signature_ir(item: &syn::ItemFn) -> Option<Function> {
    let sig = &item.sig;
    let mut params = Vec::new();
    for input in &sig.inputs {
        let syn::FnArg::Typed(pt) = input else {
            return None;
        };
        let syn::Pat::Ident(pi) = &*pt.pat else {
            return None;
        };
        params.push((ident_name(&pi.ident), param_ty(&pt.ty).ok()?));
    }
    let syn::ReturnType::Type(_, ty) = &sig.output else {
        return None;
    };
    let (results, _) = return_tys(ty).ok()?;
    let mut floats = params
        .iter()
        .map(|(_, t)| t.dtype())
        .chain(results.iter().map(|(r, _)| r.dtype()))
        .filter(|d| d.is_float());
    let dtype = floats.next().unwrap_or(DType::F32);
    if floats.any(|d| d != dtype) {
        return None;
    }
    let built = std::panic::catch_unwind(|| -> Result<Function, String> {
        let mut f = Function::new(&ident_name(&sig.ident));
        let mut total = f.literal(0.0, dtype);
        for (name, t) in &params {
            let p = f.add_param(name, param_ir_type(name, t, dtype));
            if !f.dtype(p).is_float() {
                continue;
            }
            let rank = f.shape(p).rank();
            let s = if rank == 0 {
                p
            } else {
                f.push(
                    Op::ReduceSum {
                        axes: (0..rank).collect(),
                    },
                    &[p],
                )?
            };
            total = f.push(
                Op::Binary(oxla_core::ops::elementwise::BinaryOp::Add),
                &[total, s],
            )?;
        }
        for (i, (r, _)) in results.iter().enumerate() {
            let dims = (0..r.rank())
                .map(|a| Dim::sym(&format!("oxla_result{i}_{a}")))
                .collect();
            let v = f.push(
                Op::Broadcast {
                    shape: Shape(dims),
                    dims: Vec::new(),
                },
                &[total],
            )?;
            let v = match r.dtype() {
                d if d.is_float() => v,
                DType::Bool => f.push(Op::Cmp(oxla_core::ops::elementwise::CmpOp::Eq), &[v, v])?,
                d => f.push(Op::Convert { dtype: d }, &[v])?,
            };
            f.outs.push(v);
        }
        Ok(f)
    });
    built.ok()?.ok()
}
