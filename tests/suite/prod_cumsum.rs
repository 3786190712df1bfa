//! `prod`, `cumsum` and `cumprod` through the macros: values against plain
//! loops, the gradient and Hessian of a product at points with zeros
//! against the brute-force products `Π_{j≠i} x_j` and `Π_{j≠i,k} x_j`, and
//! a gradient through cumulative ops against central differences.

use oxla::ndarray::{array, Array1, Array2, ArrayView1, ArrayView2, Axis};
use oxla::{grad, hessian, jit};

#[grad(prod_grad)]
fn prod_all(x: ArrayView1<f64>) -> f64 {
    x.product()
}

#[hessian(prod_hessian)]
fn prod_fn(x: ArrayView1<f64>) -> f64 {
    prod(x)
}

/// `Π_{j ∉ skip} x_j` by a loop.
fn product_without(x: &[f64], skip: &[usize]) -> f64 {
    (0..x.len())
        .filter(|j| !skip.contains(j))
        .map(|j| x[j])
        .product()
}

#[test]
fn prod_gradient_and_hessian_at_zeros() {
    for x in [
        array![1.5, 0.0, -2.0, 0.7],
        array![0.0, 3.0, 0.0, 2.0],
        array![-0.5, 1.25, 2.0],
        Array1::zeros(0),
    ] {
        let xs = x.as_slice().unwrap();
        let n = xs.len();
        assert_eq!(prod_all(x.view()), product_without(xs, &[]));
        let g = prod_grad(&x);
        for i in 0..n {
            assert_eq!(g[i], product_without(xs, &[i]), "d/dx{i} at {x}");
        }
        let h = prod_hessian(&x);
        for i in 0..n {
            for k in 0..n {
                let want = if i == k {
                    0.0
                } else {
                    product_without(xs, &[i, k])
                };
                assert_eq!(h[[i, k]], want, "d²/dx{i}dx{k} at {x}");
            }
        }
    }
}

#[jit]
fn cumulative(x: ArrayView2<f64>) -> (Array2<f64>, Array2<f64>, Array1<f64>, Array1<f64>) {
    (
        x.cumsum(Axis(1)),
        cumprod(x, Axis(0)),
        x.product_axis(Axis(1)),
        prod(x, Axis(0)),
    )
}

#[test]
fn cumulative_sums_and_products_match_loops() {
    let x = array![
        [1.5, -0.5, 2.0],
        [0.0, 0.75, -1.25],
        [2.0, 0.5, 1.0],
        [-1.0, 3.0, 0.5]
    ];
    let (cs, cp, pr, pc) = cumulative(x.view());
    let (m, n) = x.dim();
    for i in 0..m {
        let mut s = 0.0;
        for j in 0..n {
            s += x[[i, j]];
            assert!((cs[[i, j]] - s).abs() < 1e-14);
        }
        assert_eq!(pr[i], x.row(i).iter().product::<f64>());
    }
    for j in 0..n {
        let mut p = 1.0;
        for i in 0..m {
            p *= x[[i, j]];
            assert_eq!(cp[[i, j]], p);
        }
        assert_eq!(pc[j], p);
    }
}

#[grad(scans_grad)]
fn scans(x: ArrayView1<f64>) -> f64 {
    let c = x.cumprod(Axis(0));
    let s = cumsum(x, Axis(0));
    (c * s).sum() + x.prod_axis(Axis(0))
}

#[test]
fn a_gradient_through_cumulative_ops_matches_central_differences() {
    let x = array![0.8, -1.2, 0.0, 1.7, 0.4];
    let g = scans_grad(&x);
    let h = 1e-6;
    for i in 0..x.len() {
        let (mut up, mut down) = (x.clone(), x.clone());
        up[i] += h;
        down[i] -= h;
        let fd = (scans(up.view()) - scans(down.view())) / (2.0 * h);
        assert!(
            (g[i] - fd).abs() < 1e-7 * (1.0 + fd.abs()),
            "d/dx{i}: {} vs {fd}",
            g[i]
        );
    }
}
