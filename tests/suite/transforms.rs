//! One definition, several transforms: the entries of `#[transforms(…)]`
//! and `of = …` are transforms of the function itself (not of each other),
//! and `wrt` on `jvp`/`vjp` keeps tangents and cotangents to the listed
//! parameters. Checked against central finite differences in f64 and
//! against each other (⟨u, J t⟩ = ⟨Jᵀ u, t⟩), through the Cranelift JIT.

use oxla::ndarray::{array, Array1, Array2, ArrayView1, ArrayView2};
use oxla::{grad, transforms, value_and_grad};

#[transforms(
    grad(example_grad, wrt = w),
    value_and_grad(example_vg, wrt = w),
    vmap(per_example_grad, in_axes = (None, 0, 0), of = grad(wrt = w)),
    hessian(example_hessian, wrt = w),
)]
fn example_loss(w: ArrayView1<f64>, x: ArrayView1<f64>, y: f64) -> f64 {
    let r = (x.dot(&w) - y).tanh();
    r * r + 0.1 * (&w * &w).sum()
}

// `of` picks the original back out of a stack, or any function below.
#[value_and_grad(cube_grad_vg, of = cube_grad)]
#[value_and_grad(cube_vg, of = cube)]
#[grad(cube_grad)]
fn cube(x: f64) -> f64 {
    x * x * x
}

// Without `of`, stacking composes: `quartic_grad_vg = value_and_grad(grad(quartic))`.
#[value_and_grad(quartic_grad_vg)]
#[grad(quartic_grad)]
fn quartic(x: f64) -> f64 {
    x * x * x * x
}

#[transforms(
    jvp(layer_jvp_w, wrt = w),
    jvp(layer_jvp_wb, wrt = (w, b)),
    vjp(layer_vjp_wb, wrt = (w, b)),
    vjp(layer_vjp_x, wrt = x),
)]
fn layer(w: ArrayView2<f64>, b: ArrayView1<f64>, x: ArrayView1<f64>) -> Array1<f64> {
    (w.dot(&x) + &b).tanh()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs()))
}

fn data() -> (Array1<f64>, Array2<f64>, Array1<f64>) {
    let w = array![0.3, -0.7, 0.2];
    let x = array![[1.0, 0.5, -1.0], [0.2, -0.3, 0.8], [-1.5, 1.0, 0.4]];
    let y = array![0.5, -0.2, 1.1];
    (w, x, y)
}

/// ∂ example_loss / ∂ w[k] by central differences.
fn fd_grad(w: &Array1<f64>, x: ArrayView1<f64>, y: f64) -> Vec<f64> {
    let h = 1e-6;
    (0..w.len())
        .map(|k| {
            let (mut hi, mut lo) = (w.clone(), w.clone());
            hi[k] += h;
            lo[k] -= h;
            (example_loss(hi.view(), x, y) - example_loss(lo.view(), x, y)) / (2.0 * h)
        })
        .collect()
}

#[test]
fn listed_grad_and_value_and_grad_match_finite_differences_and_each_other() {
    let (w, xs, ys) = data();
    for (x, &y) in xs.rows().into_iter().zip(&ys) {
        let g: Array1<f64> = example_grad(&w, x, y);
        let (value, vg): (f64, Array1<f64>) = example_vg(&w, x, y);
        assert_eq!(value, example_loss(w.view(), x, y));
        for (k, want) in fd_grad(&w, x, y).into_iter().enumerate() {
            assert!(close(g[k], want, 1e-7), "grad[{k}]: {} vs {want}", g[k]);
            assert!(close(vg[k], g[k], 1e-12), "value_and_grad vs grad at {k}");
        }
    }
}

#[test]
fn a_listed_vmap_of_a_nested_grad_is_the_grad_per_example() {
    let (w, xs, ys) = data();
    let per: Array2<f64> = per_example_grad(&w, &xs, &ys);
    assert_eq!(per.dim(), (3, 3));
    for (i, (x, &y)) in xs.rows().into_iter().zip(&ys).enumerate() {
        let g: Array1<f64> = example_grad(&w, x, y);
        for k in 0..3 {
            assert!(close(per[[i, k]], g[k], 1e-12), "row {i}, [{k}]");
        }
    }
}

#[test]
fn a_listed_hessian_is_the_derivative_of_the_listed_grad() {
    let (w, xs, ys) = data();
    let (x, y) = (xs.row(1), ys[1]);
    let hess: Array2<f64> = example_hessian(&w, x, y);
    let h = 1e-6;
    for k in 0..3 {
        let (mut hi, mut lo) = (w.clone(), w.clone());
        hi[k] += h;
        lo[k] -= h;
        let (ghi, glo): (Array1<f64>, Array1<f64>) =
            (example_grad(&hi, x, y), example_grad(&lo, x, y));
        for j in 0..3 {
            let want = (ghi[j] - glo[j]) / (2.0 * h);
            assert!(
                close(hess[[j, k]], want, 1e-6),
                "H[{j},{k}]: {} vs {want}",
                hess[[j, k]]
            );
        }
    }
}

#[test]
fn of_in_a_stack_and_stacking_compose_as_written() {
    // Small integers: every product below is exact.
    for x in [-3.0, 1.0, 2.0] {
        assert_eq!(cube_grad(x), 3.0 * x * x);
        assert_eq!(cube_vg(x), (x * x * x, 3.0 * x * x));
        assert_eq!(cube_grad_vg(x), (3.0 * x * x, 6.0 * x));
        assert_eq!(quartic_grad(x), 4.0 * x * x * x);
        assert_eq!(quartic_grad_vg(x), (4.0 * x * x * x, 12.0 * x * x));
    }
}

/// ⟨u, J t⟩ = ⟨Jᵀ u, t⟩, with J the Jacobian with respect to (w, b).
#[test]
fn jvp_and_vjp_with_wrt_agree_and_match_finite_differences() {
    let w = array![[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]];
    let b = array![0.05, -0.1];
    let x = array![0.7, -1.2, 0.4];
    let tw = array![[1.0, -0.5, 0.25], [0.3, 0.2, -0.1]];
    let tb = array![-0.4, 0.9];
    let u = array![0.6, -1.3];

    let (y, jt): (Array1<f64>, Array1<f64>) = layer_jvp_wb(&w, &b, &x, &tw, &tb);
    assert_eq!(y, layer(w.view(), b.view(), x.view()));
    // Cotangents for w and b only: the value, then two, not three.
    let (y2, ct_w, ct_b): (Array1<f64>, Array2<f64>, Array1<f64>) = layer_vjp_wb(&w, &b, &x, &u);
    assert_eq!(y2, y);
    let lhs = u.dot(&jt);
    let rhs = (&ct_w * &tw).sum() + ct_b.dot(&tb);
    assert!(close(lhs, rhs, 1e-12), "{lhs} vs {rhs}");

    // The jvp in w alone against central differences along tw (b held).
    let h = 1e-6;
    let (_, jw): (Array1<f64>, Array1<f64>) = layer_jvp_w(&w, &b, &x, &tw);
    let hi = layer((&w + &(&tw * h)).view(), b.view(), x.view());
    let lo = layer((&w - &(&tw * h)).view(), b.view(), x.view());
    for i in 0..2 {
        let want = (hi[i] - lo[i]) / (2.0 * h);
        assert!(close(jw[i], want, 1e-7), "{} vs {want}", jw[i]);
    }

    // The vjp in x alone: ⟨u, ∂y/∂x e_k⟩ by central differences.
    let (_, ct_x): (Array1<f64>, Array1<f64>) = layer_vjp_x(&w, &b, &x, &u);
    for k in 0..3 {
        let (mut xh, mut xl) = (x.clone(), x.clone());
        xh[k] += h;
        xl[k] -= h;
        let d = (layer(w.view(), b.view(), xh.view()) - layer(w.view(), b.view(), xl.view()))
            / (2.0 * h);
        assert!(close(ct_x[k], u.dot(&d), 1e-7));
    }
}
