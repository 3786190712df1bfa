//! Indexing by integer literals on axes of static size: values, the
//! gradient (the cotangent put back at the index), a Hessian, and the
//! rank-2 form `x[[i, j]]`.

use oxla::{grad, hessian, jit};

#[jit]
fn corners(m: [[f64; 3]; 2]) -> f64 {
    m[[0, 0]] + 10.0 * m[[1, 2]] + 100.0 * m[1][0]
}

#[grad(pick_grad)]
fn pick(x: [f64; 4]) -> f64 {
    x[1] * x[3] + x[1].sin()
}

#[hessian(cubic_hessian)]
fn cubic(x: [f64; 3]) -> f64 {
    x[0] * x[1] * x[2] + x[0].powi(3)
}

#[test]
fn index_values_gradients_and_hessians() {
    let m = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    assert_eq!(corners(m), 1.0 + 60.0 + 400.0);
    let x = [0.5, -1.25, 2.0, 3.5];
    assert_eq!(pick(x), x[1] * x[3] + x[1].sin());
    let g = pick_grad(&x);
    assert_eq!(g, vec![0.0, x[3] + x[1].cos(), 0.0, x[1]]);
    let y = [0.7, -0.4, 1.9];
    let h = cubic_hessian(&y);
    let want = [
        [6.0 * y[0], y[2], y[1]],
        [y[2], 0.0, y[0]],
        [y[1], y[0], 0.0],
    ];
    for i in 0..3 {
        for j in 0..3 {
            assert!(
                (h[[i, j]] - want[i][j]).abs() <= 1e-14,
                "H[{i},{j}] {} vs {}",
                h[[i, j]],
                want[i][j]
            );
        }
    }
}
