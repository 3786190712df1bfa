//! The scalar backend: straight-line Rust for a function whose values are
//! all scalars, evaluated as the reference op rules evaluate it.

use crate::codegen::aot::live_eqns;
use crate::codegen::paths;
use crate::codegen::scalar_loop;
use oxla_core::ops::control::Custom;
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use oxla_core::{DType, Function, Op, Var};
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use std::collections::BTreeSet;

/// The local holding `v` (hygienic: it cannot clash with the user's names).
fn local(v: Var) -> syn::Ident {
    format_ident!("v{}", v.0, span = Span::mixed_site())
}

/// A typed float literal, e.g. `2.0f32`, `-0.5f64`, `f32::INFINITY`.
fn float_lit(value: f64, dtype: DType) -> TokenStream {
    let ty = paths::float(dtype);
    if value.is_nan() {
        return quote!(#ty::NAN);
    }
    // A value finite in f64 may round to infinity in f32 (a folded constant).
    let infinite = match dtype {
        DType::F64 => value.is_infinite(),
        _ => (value as f32).is_infinite(),
    };
    if infinite {
        return if value > 0.0 {
            quote!(#ty::INFINITY)
        } else {
            quote!(#ty::NEG_INFINITY)
        };
    }
    let lit = match dtype {
        DType::F64 => Literal::f64_suffixed(value.abs()),
        DType::I64 => Literal::i64_suffixed(value.abs() as i64),
        DType::I32 => Literal::i32_suffixed(value.abs() as i32),
        DType::Bool => {
            return if value != 0.0 {
                quote!(true)
            } else {
                quote!(false)
            }
        }
        _ => Literal::f32_suffixed((value as f32).abs()),
    };
    if value.is_sign_negative() {
        quote!(-#lit)
    } else {
        lit.into_token_stream()
    }
}

/// Straight-line Rust for a function whose values are all scalars.
pub(super) fn scalar_body(f: &Function, params: &[syn::Ident], tuple_return: bool) -> TokenStream {
    let live = live_eqns(f);
    let used: BTreeSet<Var> = live
        .iter()
        .flat_map(|&i| f.eqns[i].ins.iter().copied())
        .chain(f.outs.iter().copied())
        .collect();
    let mut stmts = Vec::new();
    for (v, id) in f.params.iter().zip(params) {
        if used.contains(v) {
            let l = local(*v);
            stmts.push(quote!(let #l = #id;));
        }
    }
    for &i in &live {
        let e = &f.eqns[i];
        if e.op.is_control() {
            let outs: Vec<syn::Ident> = e.outs.iter().map(|v| local(*v)).collect();
            let ins: Vec<TokenStream> = e
                .ins
                .iter()
                .map(|v| local(*v).into_token_stream())
                .collect();
            let value = match &e.op {
                Op::Loop(l) => scalar_loop::loop_expr(l, &ins),
                Op::LoopReverse(l) => scalar_loop::reverse_expr(l, &ins),
                Op::Cond(c) => scalar_loop::cond_expr(c, &ins),
                // What runs is the primal function: its rules have done
                // their work in the transforms.
                Op::Custom(c) => match &**c {
                    Custom::Jvp { primal, .. } | Custom::Vjp { primal, .. } => {
                        scalar_block(primal, &ins)
                    }
                    Custom::Lin { .. } => {
                        let msg = oxla_core::ops::control::FORWARD_OVER_CUSTOM_VJP;
                        let panic = paths::panic();
                        quote!(#panic(#msg))
                    }
                },
                _ => unreachable!("internal error: an unknown control op"),
            };
            stmts.push(quote!(let (#(#outs,)*) = #value;));
            continue;
        }
        let out = local(e.out());
        let ins: Vec<syn::Ident> = e.ins.iter().map(|v| local(*v)).collect();
        let dtype = f.dtype(e.out());
        let ty = paths::float(dtype);
        let value = match &e.op {
            Op::Literal { value, dtype } => float_lit(*value, *dtype),
            Op::Unary(op) => {
                let x = &ins[0];
                match op {
                    UnaryOp::Neg => quote!(-#x),
                    UnaryOp::Exp => quote!(#x.exp()),
                    UnaryOp::Log => quote!(#x.ln()),
                    UnaryOp::Sin => quote!(#x.sin()),
                    UnaryOp::Cos => quote!(#x.cos()),
                    UnaryOp::Tanh => quote!(#x.tanh()),
                    UnaryOp::Sqrt => quote!(#x.sqrt()),
                    UnaryOp::Powi(n) => {
                        let n = Literal::i32_unsuffixed(*n);
                        quote!(#x.powi(#n))
                    }
                    UnaryOp::Round(mode) => {
                        let method = syn::Ident::new(mode.name(), Span::call_site());
                        quote!(#x.#method())
                    }
                    UnaryOp::Signum => quote!(#x.signum()),
                    UnaryOp::ExpM1 => quote!(#x.exp_m1()),
                    // Rust has no stable `erf`: the interpreters' f64 one,
                    // rounded once for f32.
                    UnaryOp::Erf => {
                        let erf = paths::erf();
                        {
                            let f64_ty = paths::float(DType::F64);
                            quote!((#erf(#x as #f64_ty) as #ty))
                        }
                    }
                    // `lax.sign`: ±0 and NaN are returned as they are.
                    UnaryOp::Sign => quote!(if #x > 0.0 {
                        1.0
                    } else if #x < 0.0 {
                        -1.0
                    } else {
                        #x
                    }),
                }
            }
            // The reference value in f64, rounded once for f32, as the
            // interpreter computes it.
            Op::Special(op) => {
                let x = &ins[0];
                let special = paths::special_fn();
                let variant = quote::format_ident!("{op:?}");
                let f64_ty = paths::float(DType::F64);
                quote!((#special::#variant.eval(#x as #f64_ty) as #ty))
            }
            Op::Binary(op) => {
                let (a, b) = (&ins[0], &ins[1]);
                match op {
                    BinaryOp::Add => quote!(#a + #b),
                    BinaryOp::Sub => quote!(#a - #b),
                    BinaryOp::Mul => quote!(#a * #b),
                    BinaryOp::Div => quote!(#a / #b),
                    // As `BinaryOp::eval`: NaN from either operand (unlike
                    // `f64::max`, which ignores a NaN), and at a tie the
                    // bitwise AND (max) or OR (min) of the operands: +0 for
                    // max and -0 for min of zeros of either sign, in either
                    // order (a comparison alone gave the second operand).
                    BinaryOp::Max => quote!(if #a == #b {
                        <#ty>::from_bits(#a.to_bits() & #b.to_bits())
                    } else if #a > #b || #a.is_nan() {
                        #a
                    } else {
                        #b
                    }),
                    BinaryOp::Min => quote!(if #a == #b {
                        <#ty>::from_bits(#a.to_bits() | #b.to_bits())
                    } else if #a < #b || #a.is_nan() {
                        #a
                    } else {
                        #b
                    }),
                    BinaryOp::Pow => quote!(#a.powf(#b)),
                }
            }
            Op::Cmp(op) => {
                let (a, b) = (&ins[0], &ins[1]);
                match op {
                    CmpOp::Lt => quote!(#a < #b),
                    CmpOp::Le => quote!(#a <= #b),
                    CmpOp::Gt => quote!(#a > #b),
                    CmpOp::Ge => quote!(#a >= #b),
                    CmpOp::Eq => quote!(#a == #b),
                    CmpOp::Ne => quote!(#a != #b),
                }
            }
            Op::Select => {
                let (p, a, b) = (&ins[0], &ins[1], &ins[2]);
                quote!(if #p { #a } else { #b })
            }
            // On scalars these are the identity (`is_straight_line` checked
            // that every live value is a scalar).
            Op::Broadcast { .. }
            | Op::ReduceSum { .. }
            | Op::ReduceMax { .. }
            | Op::ReduceMin { .. }
            | Op::ReduceProd { .. }
            | Op::Transpose { .. }
            | Op::Reshape { .. }
            | Op::StopGradient
            // A scalar slice or pad is the identity; a concatenation has
            // rank >= 1, so it never reaches straight-line code.
            | Op::Slice { .. }
            | Op::Pad { .. }
            | Op::Concatenate { .. } => {
                let x = &ins[0];
                quote!(#x)
            }
            // The picked-from array, a scatter's result and a sorted
            // operand have rank >= 1.
            Op::Gather { .. }
            | Op::ScatterAdd { .. }
            | Op::Argsort { .. }
            | Op::Linalg(_)
            | Op::Conv(_) => {
                unreachable!("internal error: {} in straight-line code", e.op)
            }
            Op::Dot | Op::DotGeneral(_) => {
                let (x, y) = (&ins[0], &ins[1]);
                quote!(#x * #y)
            }
            // Rust's `as` is the op's semantics (see `ops::convert`).
            Op::Convert { .. } if f.dtype(e.ins[0]) == DType::Bool => {
                let x = &ins[0];
                {
                let u8_ty = paths::u8();
                quote!((#x as #u8_ty) as #ty)
            }
            }
            Op::Convert { .. } => {
                let x = &ins[0];
                quote!(#x as #ty)
            }
            // A scalar-only function has no dimension symbols.
            Op::DimSize {
                dim: oxla_core::Dim::Const(c),
                dtype,
            } => float_lit(*c as f64, *dtype),
            // Never scalar: `is_straight_line` excludes them; loops are
            // handled above.
            Op::DimSize { .. }
            | Op::Iota { .. }
            | Op::LinearScan { .. }
            | Op::Loop(_)
            | Op::LoopReverse(_)
            | Op::Cond(_)
            | Op::Custom(_)
            | Op::Collective(_)
            | Op::Pmap(_) => {
                let msg = format!("internal error: {} in a scalar function", e.op);
                { let panic = paths::panic(); quote!(#panic(#msg)) }
            }
        };
        stmts.push(quote!(let #out: #ty = #value;));
    }
    let outs: Vec<syn::Ident> = f.outs.iter().map(|v| local(*v)).collect();
    let result = if tuple_return {
        quote!((#(#outs,)*))
    } else {
        quote!(#(#outs)*)
    };
    quote! {
        #(#stmts)*
        #result
    }
}

/// `f` as a Rust block expression of its results' tuple, with `args` for
/// its params (a loop's body).
pub(crate) fn scalar_block(f: &Function, args: &[TokenStream]) -> TokenStream {
    let params: Vec<syn::Ident> = (0..f.params.len())
        .map(|k| format_ident!("__oxla_arg{}", k))
        .collect();
    let body = scalar_body(f, &params, true);
    quote!({
        #[allow(unused_variables)]
        let (#(#params,)*) = (#(#args,)*);
        #body
    })
}

#[cfg(test)]
pub(crate) fn scalar_body_for_tests(f: &Function) -> TokenStream {
    let params: Vec<syn::Ident> = f
        .param_names
        .iter()
        .map(|n| format_ident!("{}", n))
        .collect();
    scalar_body(f, &params, f.outs.len() != 1)
}
