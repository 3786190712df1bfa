//! Every path the generated code names, in one place. Generated code reaches
//! the runtime only through the facade's hidden `::oxla::__private` module.

use proc_macro2::TokenStream;
use quote::quote;

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

/// `::core::primitive::<float>`: a float type that a user type alias cannot shadow.
pub fn float(dtype: oxla_core::DType) -> TokenStream {
    match dtype {
        oxla_core::DType::F64 => quote!(::core::primitive::f64),
        _ => quote!(::core::primitive::f32),
    }
}

/// `::std::vec::Vec`.
pub fn vec() -> TokenStream {
    quote!(::std::vec::Vec)
}
