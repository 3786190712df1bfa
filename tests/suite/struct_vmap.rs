//! Parameter structs under `vmap` (`oxla::Batched`), and Jacobians and
//! Hessians of functions taking one, against JAX's values for the same
//! functions on the same inputs (`tests/reference/struct_vmap_jax.py`, its
//! output `struct_vmap_jax.txt` read here) and against central differences.

use oxla::ndarray::{Array, Array1, Array2, ArrayD, ArrayView1, ArrayView2, Dimension, IxDyn};
use oxla::{Batched, Tree};

/// JAX's values: `name` → (shape, values).
fn jax(name: &str) -> (Vec<usize>, Vec<f64>) {
    let text = include_str!("../reference/struct_vmap_jax.txt");
    let a = crate::reference::reference_array(text, "struct_vmap_jax.txt", name);
    (a.shape().to_vec(), a.into_raw_vec_and_offset().0)
}

/// `got` is JAX's `name` to within `tol` relative to its scale.
#[track_caller]
fn close_to_jax<D: Dimension>(name: &str, got: &Array<f64, D>, tol: f64) {
    let (shape, want) = jax(name);
    assert_eq!(got.shape(), &shape[..], "{name}: shape");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{name}[{i}]: {g}, JAX {w}"
        );
    }
}

/// `sin(a·k + b)` for the row-major index `k` (the reference's `grid`).
fn grid<D: Dimension>(shape: D, a: f64, b: f64) -> Array<f64, D> {
    let mut k = 0.0;
    Array::from_shape_simple_fn(shape, || {
        let v = (a * k + b).sin();
        k += 1.0;
        v
    })
}

#[derive(oxla::Tree, Clone, Debug, PartialEq)]
struct Mlp {
    w1: Array2<f64>,
    b1: Array1<f64>,
    w2: Array1<f64>,
    b2: f64,
}

fn mlp() -> Mlp {
    Mlp {
        w1: grid(oxla::ndarray::Ix2(3, 4), 0.7, 0.1),
        b1: grid(oxla::ndarray::Ix1(4), 1.3, 0.2) * 0.1,
        w2: grid(oxla::ndarray::Ix1(4), 0.9, 0.3),
        b2: 0.25,
    }
}

fn data() -> (Array2<f64>, Array1<f64>) {
    (
        grid(oxla::ndarray::Ix2(5, 3), 0.37, 0.5),
        grid(oxla::ndarray::Ix1(5), 1.1, -0.4),
    )
}

// JAX's `vmap(grad(loss), in_axes=(None, 0, 0))`, in the three spellings:
// an entry of `#[transforms(…)]` transforming an unnamed `grad`, a `vmap`
// stacked on a `grad`, and `of = name` of a generated gradient.
#[oxla::transforms(
    vmap(per_example, in_axes = (None, 0, 0), of = grad(wrt = p)),
    grad(loss_grad, wrt = p),
    vmap(per_example_of_named, in_axes = (None, 0, 0), of = loss_grad),
    vmap(per_example_loss, in_axes = (None, 0, 0))
)]
fn loss(p: &Mlp, x: ArrayView1<f64>, y: f64) -> f64 {
    let h = (x.dot(&p.w1) + &p.b1).tanh();
    let r = h.dot(&p.w2) + p.b2 - y;
    r * r
}

#[oxla::vmap(per_example_stacked, in_axes = (None, 0, 0))]
#[oxla::grad(loss_grad_stacked, wrt = p)]
fn loss_again(p: &Mlp, x: ArrayView1<f64>, y: f64) -> f64 {
    let h = (x.dot(&p.w1) + &p.b1).tanh();
    let r = h.dot(&p.w2) + p.b2 - y;
    r * r
}

/// The mean of `loss` over a batch, for its gradient.
#[oxla::grad(batch_loss_grad, wrt = p)]
fn batch_loss(p: &Mlp, xs: ArrayView2<f64>, ys: ArrayView1<f64>) -> f64 {
    let h = (xs.dot(&p.w1) + &p.b1).tanh();
    let r = h.dot(&p.w2) + p.b2 - ys;
    (&r * &r).mean()
}

fn leaf_to_jax(name: &str, batch: &Batched<Mlp>, tol: f64) {
    let leaf: ArrayD<f64> = batch.leaf(name).to_owned();
    close_to_jax(&format!("per_example.{name}"), &leaf, tol);
}

#[test]
fn per_example_gradients_of_a_struct_are_jax_values() {
    let p = mlp();
    let (xs, ys) = data();
    let g: Batched<Mlp> = per_example(&p, xs.view(), ys.view());
    assert_eq!(g.len(), 5);
    for name in ["w1", "b1", "w2", "b2"] {
        leaf_to_jax(name, &g, 1e-13);
    }
    // Each leaf gains a leading batch axis.
    assert_eq!(g.leaf("w1").shape(), &[5, 3, 4]);
    assert_eq!(g.leaf("b2").shape(), &[5]);
    // The other spellings give the same batch.
    assert_eq!(per_example_stacked(&p, xs.view(), ys.view()), g);
    assert_eq!(per_example_of_named(&p, xs.view(), ys.view()), g);
    close_to_jax(
        "per_example_loss",
        &per_example_loss(&p, xs.view(), ys.view()),
        1e-13,
    );
}

#[test]
fn each_per_example_gradient_is_that_examples_gradient_and_central_differences() {
    let p = mlp();
    let (xs, ys) = data();
    let g = per_example(&p, xs.view(), ys.view());
    for i in 0..xs.nrows() {
        let one: Mlp = loss_grad(&p, xs.row(i), ys[i]);
        let gi = g.example(i);
        let diff = one.zip_map(&gi, |a, b| a - b).norm2();
        assert!(diff < 1e-14, "example {i}: {diff}");
        // Central differences of the example's loss, element by element.
        let flat = gi.flatten();
        let h = 1e-6;
        for (k, gk) in flat.iter().enumerate() {
            let at = |d: f64| {
                let mut q = p.clone();
                let mut j = 0;
                q.for_each_leaf_mut(&mut |mut l| {
                    for v in l.iter_mut() {
                        if j == k {
                            *v += d;
                        }
                        j += 1;
                    }
                });
                loss(&q, xs.row(i), ys[i])
            };
            let fd = (at(h) - at(-h)) / (2.0 * h);
            assert!(
                (gk - fd).abs() < 1e-8 * (1.0 + fd.abs()),
                "example {i}, element {k}: {gk} vs {fd}"
            );
        }
    }
}

#[test]
fn the_mean_of_per_example_gradients_is_the_batch_gradient() {
    let p = mlp();
    let (xs, ys) = data();
    let mean = per_example(&p, xs.view(), ys.view()).mean();
    let batch: Mlp = batch_loss_grad(&p, xs.view(), ys.view());
    let diff = mean.zip_map(&batch, |a, b| a - b).norm2();
    assert!(diff < 1e-14, "{diff}");
    close_to_jax("batch_grad.w1", &batch.w1, 1e-13);
    close_to_jax("batch_grad.b1", &batch.b1, 1e-13);
    close_to_jax("batch_grad.w2", &batch.w2, 1e-13);
    close_to_jax(
        "batch_grad.b2",
        &Array::from_elem(IxDyn(&[]), batch.b2),
        1e-13,
    );
}

// `vmap` batching a struct: `in_axes` 0 takes a `&Batched<Line>`.
#[derive(oxla::Tree, Clone, Debug, PartialEq)]
struct Line {
    w: Array1<f64>,
    b: f64,
}

#[oxla::transforms(
    vmap(predict_batched, in_axes = (0, 0)),
    vmap(predict_lines, in_axes = (0, None)),
    vmap(predict_grad_batched, in_axes = (0, 0), of = grad(wrt = l))
)]
fn predict(l: &Line, x: ArrayView1<f64>) -> f64 {
    (l.w.dot(&x) + l.b).tanh()
}

fn lines() -> Batched<Line> {
    let w = grid(oxla::ndarray::Ix2(4, 3), 0.53, 0.7);
    let b = grid(oxla::ndarray::Ix1(4), 0.8, 0.9);
    let each: Vec<Line> = (0..4)
        .map(|i| Line {
            w: w.row(i).to_owned(),
            b: b[i],
        })
        .collect();
    Batched::stack(&each)
}

fn line() -> Line {
    Line {
        w: grid(oxla::ndarray::Ix1(3), 0.61, -0.2),
        b: 0.4,
    }
}

#[test]
fn vmap_batches_a_struct_argument() {
    let ls = lines();
    let (xs, _) = data();
    let x4 = xs.slice(oxla::ndarray::s![..4, ..]);
    let got = predict_batched(&ls, x4);
    close_to_jax("predict_batched", &got, 1e-14);
    for i in 0..4 {
        assert_eq!(got[i], predict(&ls.example(i), x4.row(i)));
    }
    close_to_jax("predict_lines", &predict_lines(&ls, xs.row(0)), 1e-14);
    let g: Batched<Line> = predict_grad_batched(&ls, x4);
    close_to_jax("predict_grad_batched.w", &g.leaf("w").to_owned(), 1e-13);
    close_to_jax("predict_grad_batched.b", &g.leaf("b").to_owned(), 1e-13);
}

// `vmap` of a function returning a struct: a `Batched` result.
#[oxla::vmap(shift_each, in_axes = (None, 0))]
fn shift(l: &Line, a: f64) -> Line {
    Line {
        w: &l.w * a,
        b: l.b + a,
    }
}

#[test]
fn vmap_of_a_struct_result_is_a_batch() {
    let a = grid(oxla::ndarray::Ix1(4), 0.45, 0.3);
    let s: Batched<Line> = shift_each(&line(), a.view());
    close_to_jax("shift.w", &s.leaf("w").to_owned(), 1e-15);
    close_to_jax("shift.b", &s.leaf("b").to_owned(), 1e-15);
    assert_eq!(s.example(2), shift(&line(), a[2]));
}

// Jacobians and Hessians of functions taking a struct, with respect to an
// array parameter.
#[oxla::transforms(jacfwd(feat_jacfwd, wrt = x), jacrev(feat_jacrev, wrt = x))]
fn feat(l: &Line, x: ArrayView1<f64>) -> Array1<f64> {
    (&l.w * &x).sin() + l.b
}

#[oxla::transforms(hessian(energy_hessian, wrt = x), grad(energy_grad, wrt = x))]
fn energy(l: &Line, x: ArrayView1<f64>) -> f64 {
    sum((&l.w * &x).sin()) * l.b + x.dot(&x) * sum(&l.w)
}

#[test]
fn jacobians_and_hessians_of_functions_taking_a_struct() {
    let (xs, _) = data();
    let x = xs.row(1);
    let l = line();
    let jf = feat_jacfwd(&l, x);
    close_to_jax("feat_jacfwd", &jf, 1e-14);
    close_to_jax("feat_jacrev", &feat_jacrev(&l, x), 1e-14);
    let hess = energy_hessian(&l, x);
    close_to_jax("energy_hessian", &hess, 1e-13);
    // Columns of the Jacobian and the Hessian against central differences.
    let h = 1e-6;
    for j in 0..3 {
        let mut up = x.to_owned();
        let mut down = x.to_owned();
        up[j] += h;
        down[j] -= h;
        let fd = (feat(&l, up.view()) - feat(&l, down.view())) / (2.0 * h);
        let gfd = (energy_grad(&l, up.view()) - energy_grad(&l, down.view())) / (2.0 * h);
        for i in 0..3 {
            assert!((jf[[i, j]] - fd[i]).abs() < 1e-8, "jacobian [{i}, {j}]");
            assert!((hess[[i, j]] - gfd[i]).abs() < 1e-7, "hessian [{i}, {j}]");
        }
    }
}
