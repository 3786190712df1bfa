//! Parameter structs (JAX's pytrees): `#[derive(oxla::Tree)]` and the
//! operations an optimizer step needs.

use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, NdFloat, Zip};

/// A struct of parameters: its leaves are arrays (`Array1<F>`…`Array6<F>`)
/// and scalars of one float type `F` (f32 or f64), and other `Tree`
/// structs, in field order.
///
/// `#[derive(oxla::Tree)]` implements it; an oxla function may then take
/// the struct as a parameter (`p: &Mlp`, with `p.w1` in its body), return
/// it, and differentiate with respect to it: the gradient is the same
/// struct type. The provided methods are what an optimizer step needs:
///
/// ```
/// use oxla::ndarray::{array, Array1};
/// use oxla::Tree;
///
/// #[derive(oxla::Tree, Clone, Debug, PartialEq)]
/// struct Line { w: Array1<f64>, b: f64 }
///
/// let mut p = Line { w: array![1.0, 2.0], b: 0.5 };
/// let g = Line { w: array![0.5, -1.0], b: 1.0 };
/// p.axpy(-0.1, &g); // p ← p − 0.1·g
/// assert_eq!(p, Line { w: array![0.95, 2.1], b: 0.4 });
/// assert_eq!(p.num_leaves(), 2);
/// assert_eq!(p.flatten(), vec![0.95, 2.1, 0.4]);
/// assert_eq!(g.zeros_like().norm2(), 0.0);
/// ```
pub trait Tree: Clone {
    /// The float type of every leaf.
    type Elem: NdFloat;

    /// The leaves' names in order: `w1`, and `layer.w` for a field of a
    /// nested struct.
    fn leaf_names() -> Vec<String>;

    /// Call `f` on each leaf, in order (a scalar leaf as a 0-d view).
    fn for_each_leaf(&self, f: &mut dyn FnMut(ArrayViewD<'_, Self::Elem>));

    /// Call `f` on each leaf, mutably, in order: `tree_map` in place.
    fn for_each_leaf_mut(&mut self, f: &mut dyn FnMut(ArrayViewMutD<'_, Self::Elem>));

    /// Call `f` on each pair of corresponding leaves of `self` and `other`.
    #[allow(clippy::type_complexity)]
    fn zip_leaves_mut(
        &mut self,
        other: &Self,
        f: &mut dyn FnMut(ArrayViewMutD<'_, Self::Elem>, ArrayViewD<'_, Self::Elem>),
    );

    /// Generated code: the tree built from its leaves, in order (each of
    /// the field's rank; a scalar as 0-d). Panics on a rank mismatch.
    #[doc(hidden)]
    fn __from_leaves(leaves: &mut dyn Iterator<Item = ArrayD<Self::Elem>>) -> Self;

    /// How many leaves the tree has.
    fn num_leaves(&self) -> usize {
        Self::leaf_names().len()
    }

    /// How many floats the leaves hold together.
    fn num_elements(&self) -> usize {
        let mut n = 0;
        self.for_each_leaf(&mut |l| n += l.len());
        n
    }

    /// The same tree with every element zero.
    fn zeros_like(&self) -> Self {
        self.map(|_| zero::<Self::Elem>())
    }

    /// The same tree with `f` applied to every element.
    fn map(&self, mut f: impl FnMut(Self::Elem) -> Self::Elem) -> Self {
        let mut out = self.clone();
        out.for_each_leaf_mut(&mut |mut l| l.mapv_inplace(&mut f));
        out
    }

    /// The tree of `f(a, b)` for corresponding elements of `self` and
    /// `other`. Panics if a leaf's shapes differ.
    fn zip_map(
        &self,
        other: &Self,
        mut f: impl FnMut(Self::Elem, Self::Elem) -> Self::Elem,
    ) -> Self {
        let mut out = self.clone();
        out.zip_leaves_mut(other, &mut |a, b| {
            Zip::from(a).and(&b).for_each(|a, &b| *a = f(*a, b))
        });
        out
    }

    /// `self ← self + a·x`, leaf by leaf (an SGD step is
    /// `params.axpy(-lr, &grad)`). Panics if a leaf's shapes differ.
    fn axpy(&mut self, a: Self::Elem, x: &Self) {
        self.zip_leaves_mut(x, &mut |s, x| {
            Zip::from(s).and(&x).for_each(|s, &x| *s += a * x)
        });
    }

    /// `self ← a·self`.
    fn scale(&mut self, a: Self::Elem) {
        self.for_each_leaf_mut(&mut |mut l| l.mapv_inplace(|v| a * v));
    }

    /// The sum over every element of `self · other`. Panics if a leaf's
    /// shapes differ.
    fn dot(&self, other: &Self) -> Self::Elem {
        let mut sum = zero::<Self::Elem>();
        self.clone().zip_leaves_mut(other, &mut |a, b| {
            Zip::from(a).and(&b).for_each(|a, &b| sum += *a * b)
        });
        sum
    }

    /// The Euclidean norm of all the elements together.
    fn norm2(&self) -> Self::Elem {
        let mut sum = zero::<Self::Elem>();
        self.for_each_leaf(&mut |l| l.for_each(|&v| sum += v * v));
        sqrt(sum)
    }

    /// Every element, leaf after leaf (each in row-major order).
    fn flatten(&self) -> Vec<Self::Elem> {
        let mut out = Vec::with_capacity(self.num_elements());
        self.for_each_leaf(&mut |l| out.extend(l.iter().copied()));
        out
    }
}

// Through a type parameter, whose bounds bring the float methods into
// scope (an associated type's do not).
fn zero<F: NdFloat>() -> F {
    F::zero()
}

fn sqrt<F: NdFloat>(x: F) -> F {
    x.sqrt()
}
