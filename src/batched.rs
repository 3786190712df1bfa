//! A batch of parameter structs: what `vmap` takes and returns where a
//! struct is batched (JAX's pytree whose every leaf has a leading batch
//! axis).

use crate::Tree;
use ndarray::{ArrayD, ArrayView, Axis, Dimension, NdFloat};
use std::marker::PhantomData;

/// A batch of `T`s stored leaf by leaf: each leaf of `T` with a leading
/// batch axis (an `Array2` field of `T` is an array of rank 3 here, a scalar
/// field an array of rank 1).
///
/// `#[vmap]` returns one for a struct result (the gradients of
/// `vmap(grad(loss, wrt = p), in_axes = (None, 0, 0))` are a
/// `Batched<Params>`: the per-example gradients) and takes one for a struct
/// parameter batched with `in_axes` 0 (`&Batched<Params>`):
///
/// ```
/// use oxla::ndarray::{array, Array1};
/// use oxla::{Batched, Tree};
///
/// #[derive(oxla::Tree, Clone, Debug, PartialEq)]
/// struct Line { w: Array1<f64>, b: f64 }
///
/// let a = Line { w: array![1.0, 2.0], b: 0.5 };
/// let b = Line { w: array![3.0, 0.0], b: -0.5 };
/// let batch = Batched::stack(&[a.clone(), b.clone()]);
/// assert_eq!(batch.len(), 2);
/// assert_eq!(batch.leaf("w"), array![[1.0, 2.0], [3.0, 0.0]].into_dyn().view());
/// assert_eq!(batch.example(1), b);
/// assert_eq!(batch.mean(), Line { w: array![2.0, 1.0], b: 0.0 });
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Batched<T: Tree> {
    leaves: Vec<ArrayD<T::Elem>>,
    len: usize,
    tree: PhantomData<fn() -> T>,
}

impl<T: Tree> Batched<T> {
    /// The batch of `examples`, each leaf stacked along a new leading axis.
    /// Panics if `examples` is empty or two examples' leaves differ in
    /// shape.
    pub fn stack(examples: &[T]) -> Self {
        assert!(
            !examples.is_empty(),
            "Batched::stack needs at least one example"
        );
        let mut each: Vec<Vec<ArrayD<T::Elem>>> = Vec::new();
        for e in examples {
            let mut k = 0;
            e.for_each_leaf(&mut |l| {
                if each.len() <= k {
                    each.push(Vec::new());
                }
                each[k].push(l.to_owned());
                k += 1;
            });
        }
        let leaves = each
            .iter()
            .enumerate()
            .map(|(k, ls)| {
                let views: Vec<_> = ls.iter().map(|l| l.view()).collect();
                ndarray::stack(Axis(0), &views).unwrap_or_else(|_| {
                    panic!(
                        "Batched::stack: the examples' leaf `{}` differ in shape",
                        T::leaf_names()[k]
                    )
                })
            })
            .collect();
        Batched {
            leaves,
            len: examples.len(),
            tree: PhantomData,
        }
    }

    /// How many examples the batch holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the batch holds no example.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Example `i` of the batch. Panics if `i >= self.len()`.
    pub fn example(&self, i: usize) -> T {
        assert!(
            i < self.len,
            "Batched::example({i}) of a batch of {}",
            self.len
        );
        T::__from_leaves(
            &mut self
                .leaves
                .iter()
                .map(|l| l.index_axis(Axis(0), i).to_owned()),
        )
    }

    /// The examples in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len).map(|i| self.example(i))
    }

    /// The sum of the examples, leaf by leaf.
    pub fn sum(&self) -> T {
        T::__from_leaves(&mut self.leaves.iter().map(|l| l.sum_axis(Axis(0))))
    }

    /// The mean of the examples, leaf by leaf. Panics on an empty batch.
    pub fn mean(&self) -> T {
        assert!(self.len > 0, "Batched::mean of an empty batch");
        // The batch size as a float, exactly (a sum of ones).
        let n = ndarray::Array1::from_elem(self.len, one::<T::Elem>()).sum();
        T::__from_leaves(&mut self.leaves.iter().map(|l| l.sum_axis(Axis(0)) / n))
    }

    /// The leaf `name` (as in [`Tree::leaf_names`]: `w1`, `layer.w`) with
    /// its leading batch axis. Panics if `T` has no such leaf.
    pub fn leaf(&self, name: &str) -> ndarray::ArrayViewD<'_, T::Elem> {
        let names = T::leaf_names();
        match names.iter().position(|n| n == name) {
            Some(k) => self.leaves[k].view(),
            None => panic!(
                "Batched::leaf: no leaf `{name}`; the leaves are: {}",
                names.join(", ")
            ),
        }
    }

    /// Every leaf with its leading batch axis, in [`Tree::leaf_names`]
    /// order.
    pub fn leaves(&self) -> &[ArrayD<T::Elem>] {
        &self.leaves
    }

    /// Generated code: the batch of these leaves (each with the batch axis
    /// first). Panics on a leaf count or batch size mismatch.
    #[doc(hidden)]
    pub fn __from_leaves(leaves: Vec<ArrayD<T::Elem>>) -> Self {
        let n = T::leaf_names().len();
        assert_eq!(leaves.len(), n, "a batch of {n} leaves");
        let len = leaves[0].shape()[0];
        assert!(
            leaves.iter().all(|l| l.ndim() > 0 && l.shape()[0] == len),
            "every leaf of a batch has the same batch size"
        );
        Batched {
            leaves,
            len,
            tree: PhantomData,
        }
    }

    /// Generated code: leaf `k` as a view of rank `D` (its field's rank
    /// plus one). Panics on a rank mismatch.
    #[doc(hidden)]
    pub fn __leaf<D: Dimension>(&self, k: usize) -> ArrayView<'_, T::Elem, D> {
        self.leaves[k]
            .view()
            .into_dimensionality::<D>()
            .expect("a batched leaf of its field's rank plus one")
    }
}

// Through a type parameter, whose bounds bring the float methods into
// scope (an associated type's do not).
fn one<F: NdFloat>() -> F {
    F::one()
}
