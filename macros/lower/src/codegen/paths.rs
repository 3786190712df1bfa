//! Every path the generated code names, in one place. Generated code reaches
//! oxla only through the facade's hidden `::oxla::__private` module (which
//! re-exports what it needs of the public API, `ndarray` and `half`), never
//! `oxla_core` nor the facade's public names directly, so the facade can
//! change its public surface without breaking generated code. Every path
//! is absolute (`::oxla::__private::…`, `::core::…`, `::std::…`), so that
//! nothing the user's module declares or imports (`use oxla::*;`, a type
//! alias `f32`, a module `core`) changes what it names. The only paths
//! emitted elsewhere are the user's own (their signature, their attributes);
//! `tests::paths` checks that no other file of this crate names `::oxla::`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};

/// `::oxla::__private::CompiledFn`: an array function compiled from IR text.
pub fn compiled_fn() -> TokenStream {
    quote!(::oxla::__private::CompiledFn)
}

/// `::oxla::__private::AotKernel`: a kernel the build script compiled.
pub fn aot_kernel() -> TokenStream {
    quote!(::oxla::__private::AotKernel)
}

/// `::oxla::__private::Arg`: one argument of a `CompiledFn` call.
pub fn arg() -> TokenStream {
    quote!(::oxla::__private::Arg)
}

/// `::oxla::__private::Flat`: an argument of rank 0 or 1 of a lean call.
pub fn flat_arg() -> TokenStream {
    quote!(::oxla::__private::Flat)
}

/// An element type (float, integer or bool) that a user type alias cannot
/// shadow: `::core::primitive::f32`, `::oxla::__private::half::f16`, ….
pub fn float(dtype: oxla_core::DType) -> TokenStream {
    match dtype {
        oxla_core::DType::Bool => quote!(::core::primitive::bool),
        oxla_core::DType::F64 => quote!(::core::primitive::f64),
        oxla_core::DType::F16 => quote!(::oxla::__private::half::f16),
        oxla_core::DType::BF16 => quote!(::oxla::__private::half::bf16),
        oxla_core::DType::I32 => quote!(::core::primitive::i32),
        oxla_core::DType::I64 => quote!(::core::primitive::i64),
        _ => quote!(::core::primitive::f32),
    }
}

/// `half`'s type `name` (`f16` or `bf16`), spanned at `name` (a type the
/// user wrote bare in a signature).
pub fn half_type(name: &syn::Ident) -> syn::Path {
    let span = name.span();
    syn::parse_quote_spanned!(span=> ::oxla::__private::half::#name)
}

/// `::oxla::__private::SpecialFn`: the special functions (`erf_inv`, …),
/// whose f64 `eval` generated scalar code calls.
pub fn special_fn() -> TokenStream {
    quote!(::oxla::__private::SpecialFn)
}

/// The f64 error function generated scalar code calls.
pub fn erf() -> TokenStream {
    quote!(::oxla::__private::erf)
}

/// `::oxla::__private::ndarray`: the ndarray crate oxla is built with.
pub fn ndarray() -> TokenStream {
    quote!(::oxla::__private::ndarray)
}

/// ndarray's `concatenate` function (a built-in name the caller may import).
pub fn concatenate() -> TokenStream {
    let nd = ndarray();
    quote!(#nd::concatenate)
}

/// ndarray's `stack` function (a built-in name the caller may import).
pub fn stack() -> TokenStream {
    let nd = ndarray();
    quote!(#nd::stack)
}

/// `oxla::checkpoint` (a built-in name the caller may import).
pub fn checkpoint() -> TokenStream {
    quote!(::oxla::__private::checkpoint)
}

/// `oxla::checkpoint_every` (a built-in name the caller may import).
pub fn checkpoint_every() -> TokenStream {
    quote!(::oxla::__private::checkpoint_every)
}

/// The `oxla::Tree` trait of parameter structs.
pub fn tree() -> TokenStream {
    quote!(::oxla::__private::Tree)
}

/// `oxla::Batched`, a batch of parameter structs.
pub fn batched() -> TokenStream {
    quote!(::oxla::__private::Batched)
}

/// The `oxla::Float` trait, spanned at `span` (the bound of a generic
/// function's float type parameter: errors point there).
pub fn float_trait(span: Span) -> TokenStream {
    quote_spanned!(span=> ::oxla::__private::Float)
}

/// `::oxla::__private::generic`: moving values between a generic
/// function's `T` and its instances' f32 and f64.
pub fn generic() -> TokenStream {
    quote!(::oxla::__private::generic)
}

/// The macro that resolves a helper call (`__resolve!`), passed to a
/// helper's callable macro as the callback it answers to.
pub fn resolve_macro() -> TokenStream {
    quote!(::oxla::__private::__resolve)
}

/// ndarray's dimension type of rank `rank` (`Ix2`; `IxDyn` above `Ix6`).
pub fn ix(rank: usize) -> TokenStream {
    let nd = ndarray();
    if rank <= crate::parse::types::MAX_NAMED_RANK {
        let id = quote::format_ident!("Ix{}", rank);
        quote!(#nd::#id)
    } else {
        quote!(#nd::IxDyn)
    }
}

/// `::std::vec::Vec`.
pub fn vec() -> TokenStream {
    quote!(::std::vec::Vec)
}

/// `::core::primitive::usize` or `::core::primitive::u32`.
pub fn unsigned(u: crate::parse::types::Unsigned) -> TokenStream {
    match u {
        crate::parse::types::Unsigned::Usize => quote!(::core::primitive::usize),
        crate::parse::types::Unsigned::U32 => quote!(::core::primitive::u32),
    }
}

/// `::oxla::__private`: what generated code calls at run time.
pub fn private() -> TokenStream {
    quote!(::oxla::__private)
}

/// `::oxla::__private::IndexBound`: the axis an index parameter picks from.
pub fn index_bound() -> TokenStream {
    quote!(::oxla::__private::IndexBound)
}

/// `::oxla::__private::index_arg`: a `usize`/`u32` argument as an `i64`.
pub fn index_arg() -> TokenStream {
    quote!(::oxla::__private::index_arg)
}

/// `::core::primitive::u8` (a bool converts through it).
pub fn u8() -> TokenStream {
    quote!(::core::primitive::u8)
}

/// `::core::panic!`: the body of every function after an error.
pub fn panic() -> TokenStream {
    quote!(::core::panic!)
}

/// `::core::convert::Infallible`: a type with no value.
pub fn infallible() -> TokenStream {
    quote!(::core::convert::Infallible)
}

/// `::core::convert::Into`.
pub fn into_trait() -> TokenStream {
    quote!(::core::convert::Into)
}

/// `::core::option::Option::None`.
pub fn none() -> TokenStream {
    quote!(::core::option::Option::None)
}

/// `oxla::DeviceArg`: what a `_device` function's parameter accepts.
pub fn device_arg() -> TokenStream {
    quote!(::oxla::__private::DeviceArg)
}

/// `oxla::DeviceArray`: an array on a device.
pub fn device_array() -> TokenStream {
    quote!(::oxla::__private::DeviceArray)
}
