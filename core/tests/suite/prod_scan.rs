//! Products and scans at the points that matter: products with exactly one
//! and two zeros (gradients and Hessians against the brute-force formulas
//! `Π_{j≠i} x_j` and `Π_{j≠i,k} x_j`, computed here by plain loops), a
//! zero-length axis, and cumulative sums and products against plain Rust
//! loops; each through the IR interpreter and the fused program on the
//! kernel interpreter.

use crate::common;

use common::*;
use oxla_core::ops::scan::{cumprod, cumsum, linear_scan, reduce_prod};
use oxla_core::transforms::{grad, hessian};
use oxla_core::*;

fn vector(n: usize) -> Shape {
    Shape(vec![Dim::Const(n as u64)])
}

/// `f` at `args` by the reference and by the fused program; both must agree.
fn run(f: &Function, args: &[Tensor]) -> Vec<Tensor> {
    let want = eval(f, args);
    let got = run_program(&kernel::fusion::fuse(f).unwrap(), args);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.shape, w.shape, "`{}`", f.name);
        for (a, b) in g.data.iter().zip(&w.data) {
            assert!(
                (a - b).abs() <= 1e-12 * b.abs().max(1.0),
                "`{}`: {a} vs {b}",
                f.name
            );
        }
    }
    want
}

/// `Π_{j ∉ skip} x_j` by a loop.
fn product_without(x: &[f64], skip: &[usize]) -> f64 {
    (0..x.len())
        .filter(|j| !skip.contains(j))
        .map(|j| x[j])
        .product()
}

const POINTS: [&[f64]; 5] = [
    &[1.5, 0.0, -2.0, 0.7],
    &[0.0, 3.0, -1.25, 2.0, 0.5],
    &[1.5, 0.0, -2.0, 0.0, 0.9],
    &[0.0, 0.0],
    &[-0.5, 1.25, 2.0],
];

#[test]
fn prod_gradient_and_hessian_at_zeros_match_the_brute_force_formulas() {
    for x in POINTS {
        let n = x.len();
        let f = build("prod", &[("x", vector(n))], |f, p| {
            vec![reduce_prod(f, p[0], vec![0])]
        });
        let args = [Tensor::new(F, vec![n], x.to_vec())];
        let value = run(&f, &args)[0].data[0];
        assert_eq!(value, product_without(x, &[]));
        let g = run(&grad(&f, &[0]).unwrap(), &args);
        for i in 0..n {
            assert_eq!(g[0].data[i], product_without(x, &[i]), "d/dx{i} at {x:?}");
        }
        let h = run(&hessian(&f, 0).unwrap(), &args);
        assert_eq!(h[0].shape, vec![n, n]);
        for i in 0..n {
            for k in 0..n {
                let want = if i == k {
                    0.0
                } else {
                    product_without(x, &[i, k])
                };
                assert_eq!(h[0].data[i * n + k], want, "d²/dx{i}dx{k} at {x:?}");
            }
        }
    }
}

#[test]
fn prod_over_a_zero_length_axis_is_one_with_an_empty_gradient() {
    let f = build(
        "prod",
        &[("x", Shape(vec![Dim::sym("n"), Dim::Const(2)]))],
        |f, p| vec![reduce_prod(f, p[0], vec![0])],
    );
    let args = [Tensor::new(F, vec![0, 2], vec![])];
    assert_eq!(run(&f, &args)[0].data, vec![1.0, 1.0]);
    let g = grad(
        &build("prod_sum", &[("x", vector(0))], |f, p| {
            vec![reduce_prod(f, p[0], vec![0])]
        }),
        &[0],
    )
    .unwrap();
    let out = run(&g, &[Tensor::new(F, vec![0], vec![])]);
    assert!(out[0].data.is_empty());
}

#[test]
fn cumsum_cumprod_and_scans_match_plain_loops() {
    let (rows, n) = (3, 6);
    let mut rng = rng(7);
    let x = random_tensor(&mut rng, F, vec![rows, n], (-2.0, 2.0));
    let mut x0 = x.clone();
    x0.data[2] = 0.0; // a zero in the first row
    let a = random_tensor(&mut rng, F, vec![rows, n], (-1.0, 1.0));
    let shape = Shape(vec![Dim::Const(rows as u64), Dim::Const(n as u64)]);
    let ops = build("ops", &[("x", shape.clone()), ("a", shape)], |f, p| {
        vec![
            cumsum(f, p[0], 1),
            cumprod(f, p[0], 1),
            linear_scan(f, p[1], p[0], 1, false),
            linear_scan(f, p[1], p[0], 1, true),
            cumsum(f, p[0], 0),
        ]
    });
    for x in [&x, &x0] {
        let out = run(&ops, &[x.clone(), a.clone()]);
        for r in 0..rows {
            let row = &x.data[r * n..(r + 1) * n];
            let ar = &a.data[r * n..(r + 1) * n];
            let (mut s, mut p) = (0.0, 1.0);
            let mut z = 0.0;
            for i in 0..n {
                s += row[i];
                p *= row[i];
                assert!((out[0].data[r * n + i] - s).abs() < 1e-14, "cumsum");
                assert!((out[1].data[r * n + i] - p).abs() < 1e-14, "cumprod");
                assert_eq!(out[2].data[r * n + i], z, "forward scan");
                z = ar[i] * z + row[i];
            }
            let mut z = 0.0;
            for i in (0..n).rev() {
                assert_eq!(out[3].data[r * n + i], z, "reverse scan");
                z = ar[i] * z + row[i];
            }
        }
        for c in 0..n {
            let mut s = 0.0;
            for r in 0..rows {
                s += x.data[r * n + c];
                assert!((out[4].data[r * n + c] - s).abs() < 1e-14, "cumsum axis 0");
            }
        }
    }
}
