//! `oxla::Float`: the bound of an annotated function's float type parameter
//! (`fn f<T: oxla::Float>(x: T) -> T`).
//!
//! The macros lower such a function once per float type (f32 and f64) and
//! emit a generic function that calls the instance of `T`. Moving a value
//! from `T` to the instance's concrete type and back is `Float`'s job: for
//! each kind of value (a scalar, a slice, a view, an owned array, …) a
//! [`Family`] names the type built from an element type, and
//! `Float::__to_f32::<Family>` gives the value back as the concrete type when
//! `T` is that type (the identity) and `None` otherwise. No `unsafe`, no copy,
//! nothing per element: each implementation is either `Some(x)` or `None`.

use ndarray::{Array, ArrayView, ArrayViewMut, Dimension};
use std::fmt::{Debug, Display};
use std::marker::PhantomData;
use std::ops::{Add, Div, Mul, Neg, Sub};

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A float type an oxla function may be generic over: `f32` or `f64`
/// (sealed). In an annotated function `fn f<T: oxla::Float>(x: T) -> T`,
/// literals take `T`'s type, and `T::zero()`, `T::one()`, `T::from(v)` (also
/// `T::from(v).unwrap()`, `T::from_f64(v)`), `x as T`, `T::EPSILON`,
/// `T::PI()`-style constants and `T::exp(x)`-style paths mean what they
/// mean for the concrete type.
pub trait Float:
    sealed::Sealed
    + Copy
    + Default
    + PartialEq
    + PartialOrd
    + Debug
    + Display
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// `"f32"` or `"f64"`.
    const NAME: &'static str;
    /// Whether this is f32 (else f64): which instance generated code calls.
    #[doc(hidden)]
    const __IS_F32: bool;
    /// 0.
    fn zero() -> Self;
    /// 1.
    fn one() -> Self;
    /// `v` rounded to this type.
    fn from_f64(v: f64) -> Self;
    /// This value as an f64 (exact).
    fn to_f64(self) -> f64;

    /// `x` as the f32 form of its family when `Self` is f32.
    #[doc(hidden)]
    fn __to_f32<X: Family>(x: X::Of<Self>) -> Option<X::Of<f32>>;
    /// `x` as the f64 form of its family when `Self` is f64.
    #[doc(hidden)]
    fn __to_f64<X: Family>(x: X::Of<Self>) -> Option<X::Of<f64>>;
    /// An f32 value as `Self`'s form when `Self` is f32.
    #[doc(hidden)]
    fn __from_f32<X: Family>(x: X::Of<f32>) -> Option<X::Of<Self>>;
    /// An f64 value as `Self`'s form when `Self` is f64.
    #[doc(hidden)]
    fn __from_f64<X: Family>(x: X::Of<f64>) -> Option<X::Of<Self>>;
}

impl Float for f32 {
    const NAME: &'static str = "f32";
    const __IS_F32: bool = true;
    fn zero() -> f32 {
        0.0
    }
    fn one() -> f32 {
        1.0
    }
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn __to_f32<X: Family>(x: X::Of<f32>) -> Option<X::Of<f32>> {
        Some(x)
    }
    fn __to_f64<X: Family>(_: X::Of<f32>) -> Option<X::Of<f64>> {
        None
    }
    fn __from_f32<X: Family>(x: X::Of<f32>) -> Option<X::Of<f32>> {
        Some(x)
    }
    fn __from_f64<X: Family>(_: X::Of<f64>) -> Option<X::Of<f32>> {
        None
    }
}

impl Float for f64 {
    const NAME: &'static str = "f64";
    const __IS_F32: bool = false;
    fn zero() -> f64 {
        0.0
    }
    fn one() -> f64 {
        1.0
    }
    fn from_f64(v: f64) -> f64 {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn __to_f32<X: Family>(_: X::Of<f64>) -> Option<X::Of<f32>> {
        None
    }
    fn __to_f64<X: Family>(x: X::Of<f64>) -> Option<X::Of<f64>> {
        Some(x)
    }
    fn __from_f32<X: Family>(_: X::Of<f32>) -> Option<X::Of<f64>> {
        None
    }
    fn __from_f64<X: Family>(x: X::Of<f64>) -> Option<X::Of<f64>> {
        Some(x)
    }
}

/// A kind of value built from an element type: `Of<f32>` and `Of<f64>` are
/// its two forms. Generated code names one per parameter and result.
#[doc(hidden)]
pub trait Family {
    type Of<F: Float>;
}

/// A fixed-size form: no borrow inside, so a reference to it is a family too.
#[doc(hidden)]
pub trait Owned: Family {
    type Own<F: Float>: 'static;
}

/// `F`.
#[doc(hidden)]
pub struct Scalar;
impl Family for Scalar {
    type Of<F: Float> = F;
}
impl Owned for Scalar {
    type Own<F: Float> = F;
}

/// `[X; N]` (nested for `[[F; M]; N]`).
#[doc(hidden)]
pub struct Fixed<X, const N: usize>(PhantomData<X>);
impl<X: Owned, const N: usize> Family for Fixed<X, N> {
    type Of<F: Float> = [X::Own<F>; N];
}
impl<X: Owned, const N: usize> Owned for Fixed<X, N> {
    type Own<F: Float> = [X::Own<F>; N];
}

/// `&'a X` for a fixed-size `X`.
#[doc(hidden)]
pub struct FixedRef<'a, X>(PhantomData<&'a X>);
impl<'a, X: Owned> Family for FixedRef<'a, X> {
    type Of<F: Float> = &'a X::Own<F>;
}

/// `&'a [F]`.
#[doc(hidden)]
pub struct Slice<'a>(PhantomData<&'a ()>);
impl<'a> Family for Slice<'a> {
    type Of<F: Float> = &'a [F];
}

/// `ArrayView<'a, F, D>`.
#[doc(hidden)]
pub struct View<'a, D>(PhantomData<&'a D>);
impl<'a, D: Dimension> Family for View<'a, D> {
    type Of<F: Float> = ArrayView<'a, F, D>;
}

/// `ArrayViewMut<'a, F, D>` (a destination of `name_into`).
#[doc(hidden)]
pub struct ViewMut<'a, D>(PhantomData<&'a D>);
impl<'a, D: Dimension> Family for ViewMut<'a, D> {
    type Of<F: Float> = ArrayViewMut<'a, F, D>;
}

/// `&'a mut [F]` (a destination of `name_into`).
#[doc(hidden)]
pub struct SliceMut<'a>(PhantomData<&'a ()>);
impl<'a> Family for SliceMut<'a> {
    type Of<F: Float> = &'a mut [F];
}

/// `&'a Array<F, D>`.
#[doc(hidden)]
pub struct ArrayRef<'a, D>(PhantomData<&'a D>);
impl<'a, D: Dimension + 'static> Family for ArrayRef<'a, D> {
    type Of<F: Float> = &'a Array<F, D>;
}

/// `Array<F, D>`.
#[doc(hidden)]
pub struct Owning<D>(PhantomData<D>);
impl<D: Dimension> Family for Owning<D> {
    type Of<F: Float> = Array<F, D>;
}

/// `Vec<F>`.
#[doc(hidden)]
pub struct VecOf;
impl Family for VecOf {
    type Of<F: Float> = Vec<F>;
}

/// `x` (of `T`'s form) in its f32 form: the f32 instance of a generic
/// function was chosen because `T` is f32.
#[doc(hidden)]
#[inline(always)]
pub fn to_f32<T: Float, X: Family>(x: X::Of<T>) -> X::Of<f32> {
    match T::__to_f32::<X>(x) {
        Some(v) => v,
        None => unreachable!("oxla: the f32 instance called for {}", T::NAME),
    }
}

/// `x` (of `T`'s form) in its f64 form, as `to_f32`.
#[doc(hidden)]
#[inline(always)]
pub fn to_f64<T: Float, X: Family>(x: X::Of<T>) -> X::Of<f64> {
    match T::__to_f64::<X>(x) {
        Some(v) => v,
        None => unreachable!("oxla: the f64 instance called for {}", T::NAME),
    }
}

/// An f32 instance's result in `T`'s form.
#[doc(hidden)]
#[inline(always)]
pub fn from_f32<T: Float, X: Family>(x: X::Of<f32>) -> X::Of<T> {
    match T::__from_f32::<X>(x) {
        Some(v) => v,
        None => unreachable!("oxla: an f32 result for {}", T::NAME),
    }
}

/// An f64 instance's result in `T`'s form.
#[doc(hidden)]
#[inline(always)]
pub fn from_f64<T: Float, X: Family>(x: X::Of<f64>) -> X::Of<T> {
    match T::__from_f64::<X>(x) {
        Some(v) => v,
        None => unreachable!("oxla: an f64 result for {}", T::NAME),
    }
}

/// Whether `T` is f32 (else f64): which instance a generic function calls.
#[doc(hidden)]
#[inline(always)]
pub fn is_f32<T: Float>() -> bool {
    T::__IS_F32
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Ix1};

    #[test]
    fn each_form_is_the_identity_for_its_own_type() {
        let v = [1.0f32, 2.0];
        let s: &[f32] = to_f32::<f32, Slice<'_>>(&v);
        assert!(std::ptr::eq(s, &v[..]));
        let a = array![1.0f64, 2.0];
        let view = to_f64::<f64, View<'_, Ix1>>(a.view());
        assert_eq!(view.as_ptr(), a.as_ptr());
        let r = to_f64::<f64, ArrayRef<'_, Ix1>>(&a);
        assert!(std::ptr::eq(r, &a));
        let fixed = [[1.0f32; 3]; 2];
        let f = to_f32::<f32, FixedRef<'_, Fixed<Fixed<Scalar, 3>, 2>>>(&fixed);
        assert!(std::ptr::eq(f, &fixed));
        assert_eq!(from_f64::<f64, VecOf>(vec![3.0]), vec![3.0]);
        assert!(is_f32::<f32>() && !is_f32::<f64>());
        assert!(f32::__to_f64::<Scalar>(1.0).is_none());
        assert!(f64::__from_f32::<Scalar>(1.0).is_none());
    }

    #[test]
    #[should_panic(expected = "f32 instance called for f64")]
    fn the_wrong_instance_panics() {
        to_f32::<f64, Scalar>(1.0);
    }
}
