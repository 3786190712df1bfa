//! The Rust types an oxla function takes and returns, and the IR type each
//! stands for.
//!
//! | Rust | IR |
//! |---|---|
//! | `f32`, `f64`, `f16`, `bf16` | a scalar |
//! | `i32`, `i64`, `bool` (parameter or result) | a scalar of that type |
//! | `usize`, `u32` (parameter) | an `i64` scalar (a `usize` above `i64::MAX` panics at the call) |
//! | `&[T]` | rank 1, one symbolic dimension |
//! | `ArrayView1<T>` … `ArrayView6<T>`, `ArrayView<T, Ix2>`, `&Array2<T>`, … | rank n, symbolic dimensions |
//! | `[T; N]`, `[[T; M]; N]`, `[[[T; L]; M]; N]` (or `&` of them) | static dimensions |
//! | result `Vec<T>` | rank 1 |
//! | result `Array1<T>` … `Array6<T>`, `Array<T, IxN>` | rank n |
//!
//! Array elements are a float type, `i32`/`i64` (labels, indices, results of
//! casts) or `bool` (masks, results of comparisons).

use oxla_core::DType;
use quote::ToTokens;

/// The highest rank with a named ndarray type (`Ix6`).
pub const MAX_NAMED_RANK: usize = 6;

pub(crate) const SUPPORTED_PARAMS: &str = "supported parameter types: a float (f32, f64, f16, bf16), \
     an integer scalar (i32, i64, usize, u32) or a bool, a slice `&[T]`, an ndarray view `ArrayView1<T>`…`ArrayView6<T>` or reference `&Array1<T>`…`&Array6<T>`, \
     or a fixed-size array `[T; N]`, `[[T; M]; N]`, `[[[T; L]; M]; N]` (or a reference to one), \
     where T is f32, f64, f16 or bf16, i32/i64 for an array of labels or indices, or bool";
pub(crate) const SUPPORTED_RETURNS: &str = "supported return types: a float, i32, i64 or bool, `Vec<T>`, \
     `Array1<T>`…`Array6<T>`, or a tuple of these (T a float type, i32/i64 (indices such as `argmax`, casts) or bool (comparisons))";
pub(crate) const PURE: &str = "oxla functions must be pure";

/// What a parameter or result is on the Rust side.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum RustTy {
    /// A float, `i32`, `i64` or `bool`.
    Scalar(DType),
    /// `usize` or `u32` (a parameter): an `i64` in the IR.
    Unsigned(Unsigned),
    /// `&[T]` (a parameter).
    Slice(DType),
    /// An ndarray view or a reference to an array (a parameter), or an owned
    /// array (a result), of this rank.
    NdArray(DType, usize),
    /// Nested fixed-size arrays with these sizes (a parameter); `by_ref`
    /// when passed as `&[..]`.
    Fixed {
        dtype: DType,
        dims: Vec<u64>,
        by_ref: bool,
    },
    /// `Vec<T>` (a result).
    Vec(DType),
}

/// An unsigned integer scalar parameter type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Unsigned {
    Usize,
    U32,
}

impl Unsigned {
    pub fn name(self) -> &'static str {
        match self {
            Unsigned::Usize => "usize",
            Unsigned::U32 => "u32",
        }
    }
}

impl RustTy {
    pub fn dtype(&self) -> DType {
        match self {
            RustTy::Unsigned(_) => DType::I64,
            RustTy::Scalar(d)
            | RustTy::Slice(d)
            | RustTy::NdArray(d, _)
            | RustTy::Vec(d)
            | RustTy::Fixed { dtype: d, .. } => *d,
        }
    }

    pub fn rank(&self) -> usize {
        match self {
            RustTy::Scalar(_) | RustTy::Unsigned(_) => 0,
            RustTy::Slice(_) | RustTy::Vec(_) => 1,
            RustTy::NdArray(_, r) => *r,
            RustTy::Fixed { dims, .. } => dims.len(),
        }
    }

    /// Whether the type is one of ndarray's.
    pub fn is_ndarray(&self) -> bool {
        matches!(self, RustTy::NdArray(..))
    }
}

pub(crate) fn strip_group(ty: &syn::Type) -> &syn::Type {
    match ty {
        syn::Type::Group(g) => strip_group(&g.elem),
        syn::Type::Paren(p) => strip_group(&p.elem),
        t => t,
    }
}

/// The last segment of a plain path type whose leading segments are all in
/// `prefixes` (so `f32`, `core::primitive::f32`, `ndarray::Array2<T>`).
fn last_segment<'a>(ty: &'a syn::Type, prefixes: &[&str]) -> Option<&'a syn::PathSegment> {
    let syn::Type::Path(p) = strip_group(ty) else {
        return None;
    };
    if p.qself.is_some() {
        return None;
    }
    let last = p.path.segments.last()?;
    let prefix_ok = p
        .path
        .segments
        .iter()
        .rev()
        .skip(1)
        .all(|s| s.arguments.is_none() && prefixes.contains(&&*s.ident.to_string()));
    prefix_ok.then_some(last)
}

/// A float element type: `f32`, `f64` (plain or `core::primitive::…`),
/// `f16`, `bf16` (plain or `half::…`, `oxla::half::…`, or as generated code
/// names them, `::oxla::__private::half::…`).
pub(crate) fn float_of(ty: &syn::Type) -> Option<DType> {
    let last = last_segment(
        ty,
        &["core", "std", "primitive", "half", "oxla", "__private"],
    )?;
    if !last.arguments.is_none() {
        return None;
    }
    match last.ident.to_string().as_str() {
        "f32" => Some(DType::F32),
        "f64" => Some(DType::F64),
        "f16" => Some(DType::F16),
        "bf16" => Some(DType::BF16),
        _ => None,
    }
}

/// An array element type: a float, `i32` / `i64` (indices and labels) or
/// `bool`.
pub(crate) fn elem_of(ty: &syn::Type) -> Option<DType> {
    float_of(ty).or_else(|| {
        let last = last_segment(ty, &["core", "std", "primitive"])?;
        match (last.arguments.is_none(), last.ident.to_string().as_str()) {
            (true, "i32") => Some(DType::I32),
            (true, "i64") => Some(DType::I64),
            (true, "bool") => Some(DType::Bool),
            _ => None,
        }
    })
}

/// `usize` or `u32` (plain or `core::primitive::…`).
fn unsigned_of(ty: &syn::Type) -> Option<Unsigned> {
    let last = last_segment(ty, &["core", "std", "primitive"])?;
    match (last.arguments.is_none(), last.ident.to_string().as_str()) {
        (true, "usize") => Some(Unsigned::Usize),
        (true, "u32") => Some(Unsigned::U32),
        _ => None,
    }
}

/// Why an element or parameter type is refused, when it is a near miss.
fn integer_hint(ty: &syn::Type) -> Option<String> {
    let last = last_segment(ty, &["core", "std", "primitive"])?;
    let name = last.ident.to_string();
    matches!(
        name.as_str(),
        "usize" | "isize" | "u32" | "u64" | "i8" | "i16" | "u8" | "u16"
    )
    .then(|| {
        format!(
            "`{name}` is not supported here: integer arrays hold i32 or i64 (labels, indices); integer scalar parameters are i32, i64, usize or u32"
        )
    })
}

/// The generic type arguments of a path segment (lifetimes skipped).
fn type_args(seg: &syn::PathSegment) -> Option<Vec<&syn::Type>> {
    let syn::PathArguments::AngleBracketed(a) = &seg.arguments else {
        return None;
    };
    let mut out = Vec::new();
    for g in &a.args {
        match g {
            syn::GenericArgument::Lifetime(_) => {}
            syn::GenericArgument::Type(t) => out.push(t),
            _ => return None,
        }
    }
    Some(out)
}

/// The segments before an ndarray type's name: `ndarray::Array2`,
/// `oxla::ndarray::Array2`, and generated code's
/// `::oxla::__private::ndarray::Array2`.
const NDARRAY_PREFIXES: &[&str] = &["ndarray", "oxla", "__private"];

/// The rank a dimension type names: `Ix1` … `Ix6` (also `ndarray::Ix2`).
fn ix_rank(ty: &syn::Type) -> Option<usize> {
    let last = last_segment(ty, NDARRAY_PREFIXES)?;
    let name = last.ident.to_string();
    let r: usize = name.strip_prefix("Ix")?.parse().ok()?;
    (1..=MAX_NAMED_RANK).contains(&r).then_some(r)
}

/// An ndarray type named `base` (`ArrayView` or `Array`): `base1`…`base6`
/// with one element type, or `base<T, IxN>`. Returns the element type and rank.
pub(crate) fn ndarray_of(ty: &syn::Type, base: &str) -> Option<Result<(DType, usize), String>> {
    let last = last_segment(ty, NDARRAY_PREFIXES)?;
    let name = last.ident.to_string();
    let rest = name.strip_prefix(base)?;
    let args = type_args(last)?;
    let (elem, rank) = match (rest, args.as_slice()) {
        ("", [t, ix]) => (*t, ix_rank(ix)?),
        ("D", [_]) => {
            return Some(Err(format!(
                "`{name}` has a rank known only at run time: use `{base}1`…`{base}6`, whose rank the function's shapes are built from"
            )))
        }
        (r, [t]) => {
            let r: usize = r.parse().ok()?;
            if !(1..=MAX_NAMED_RANK).contains(&r) {
                return None;
            }
            (*t, r)
        }
        _ => return None,
    };
    Some(match elem_of(elem) {
        Some(d) => Ok((d, rank)),
        None => Err(integer_hint(elem).unwrap_or_else(|| {
            format!(
                "unsupported element type `{}`: arrays hold f32, f64, f16, bf16, i32/i64 or bool",
                elem.to_token_stream()
            )
        })),
    })
}

/// `[T; N]`, `[[T; M]; N]`, …: element type and sizes (literal lengths).
fn fixed_of(ty: &syn::Type) -> Option<Result<(DType, Vec<u64>), String>> {
    let syn::Type::Array(a) = strip_group(ty) else {
        return None;
    };
    let len = match &a.len {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<u64>().ok(),
        _ => None,
    };
    let Some(len) = len else {
        return Some(Err(format!(
            "the length `{}` of a fixed-size array parameter must be an integer literal",
            a.len.to_token_stream()
        )));
    };
    if let Some(d) = elem_of(&a.elem) {
        return Some(Ok((d, vec![len])));
    }
    match fixed_of(&a.elem)? {
        Ok((d, mut dims)) => {
            dims.insert(0, len);
            Some(Ok((d, dims)))
        }
        Err(e) => Some(Err(e)),
    }
}

/// A parameter type (see the module docs).
pub(crate) fn param_ty(ty: &syn::Type) -> Result<RustTy, String> {
    if let Some(d) = elem_of(ty) {
        return Ok(RustTy::Scalar(d));
    }
    if let Some(u) = unsigned_of(ty) {
        return Ok(RustTy::Unsigned(u));
    }
    if integer_hint(ty).is_some() {
        let shown = ty.to_token_stream().to_string();
        return Err(format!(
            "an integer scalar parameter of type `{shown}` is not supported: integer scalars are i32, i64, usize or u32"
        ));
    }
    if let Some(r) = ndarray_of(ty, "ArrayView") {
        return r.map(|(d, rank)| RustTy::NdArray(d, rank));
    }
    if let Some(r) = fixed_of(ty) {
        return r.map(|(dtype, dims)| RustTy::Fixed {
            dtype,
            dims,
            by_ref: false,
        });
    }
    if let syn::Type::Reference(r) = strip_group(ty) {
        let inner = strip_group(&r.elem);
        let known = match inner {
            syn::Type::Slice(s) => match (elem_of(&s.elem), integer_hint(&s.elem)) {
                (Some(d), _) => Some(Ok(RustTy::Slice(d))),
                (None, Some(hint)) => Some(Err(hint)),
                (None, None) => None,
            },
            _ => ndarray_of(inner, "Array")
                .map(|r| r.map(|(d, rank)| RustTy::NdArray(d, rank)))
                .or_else(|| {
                    fixed_of(inner).map(|r| {
                        r.map(|(dtype, dims)| RustTy::Fixed {
                            dtype,
                            dims,
                            by_ref: true,
                        })
                    })
                }),
        };
        if let Some(k) = known {
            if r.mutability.is_some() {
                return Err(format!(
                    "`&mut` parameters are not supported ({PURE}); {SUPPORTED_PARAMS}"
                ));
            }
            return k;
        }
    }
    if let Some(r) = ndarray_of(ty, "Array") {
        return Err(match r {
            Ok(_) => format!(
                "an owned array parameter is not supported: take a view (`ArrayView{0}<T>`) or a reference (`&Array{0}<T>`)",
                r.map(|(_, n)| n).unwrap_or(1)
            ),
            Err(e) => e,
        });
    }
    let shown = ty.to_token_stream().to_string();
    Err(format!(
        "unsupported parameter type `{shown}`: {SUPPORTED_PARAMS}"
    ))
}

/// `Vec<T>` (also `std::vec::Vec<…>`).
pub(crate) fn vec_of(ty: &syn::Type) -> Option<DType> {
    let last = last_segment(ty, &["std", "alloc", "vec"])?;
    if last.ident != "Vec" {
        return None;
    }
    match type_args(last)?.as_slice() {
        [t] => elem_of(t),
        _ => None,
    }
}

/// One result type: a float, `i32`, `i64` or `bool`, a `Vec` or an owned
/// ndarray array.
pub(crate) fn result_ty(ty: &syn::Type) -> Result<RustTy, String> {
    if let Some(d) = elem_of(ty) {
        return Ok(RustTy::Scalar(d));
    }
    if let Some(u) = unsigned_of(ty) {
        return Err(format!(
            "a `{}` result is not supported: integer results are i32 or i64 (`x as i64`)",
            u.name()
        ));
    }
    if let Some(d) = vec_of(ty) {
        return Ok(RustTy::Vec(d));
    }
    if let Some(r) = ndarray_of(ty, "Array") {
        return r.map(|(d, rank)| RustTy::NdArray(d, rank));
    }
    let shown = ty.to_token_stream().to_string();
    Err(format!(
        "unsupported return type `{shown}`: {SUPPORTED_RETURNS}"
    ))
}
