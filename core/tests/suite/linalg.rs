//! The linear algebra ops (`ops::linalg`): the fused program (its host
//! step) against the reference interpreter, each result against the
//! equation it solves, a non-positive-definite Cholesky's NaN, gradients
//! against central differences and VJP against JVP (which checks each
//! solve's transpose against its JVP), second derivatives, `vmap` against
//! a loop, and the text form.

use crate::common;

use common::*;
use oxla_core::ops::linalg::{
    cho_solve, cholesky, det, inv, matmul, slogdet, solve, swap_last, symmetrize, triangular_solve,
    LinalgOp, TriangularSolve,
};
use oxla_core::transforms::{grad, hessian, jvp, vmap};
use oxla_core::*;
use rand::Rng;

fn ty(dims: &[u64]) -> Type {
    Type::new(
        DType::F64,
        Shape(dims.iter().map(|d| Dim::Const(*d)).collect()),
    )
}

/// A function of an `a` of `a_dims` and a `b` of `b_dims`.
fn function(
    name: &str,
    a_dims: &[u64],
    b_dims: &[u64],
    body: impl FnOnce(&mut Function, Var, Var) -> Vec<Var>,
) -> Function {
    let mut f = Function::new(name);
    let a = f.add_param("a", ty(a_dims));
    let b = f.add_param("b", ty(b_dims));
    let outs = body(&mut f, a, b);
    f.outs = outs;
    verify::verify(&f).unwrap();
    f
}

/// Random matrices, each made well conditioned by a dominant diagonal
/// (so every triangle, and the whole, is far from singular).
fn matrices(r: &mut impl Rng, batch: usize, n: usize) -> Tensor {
    let mut data = Vec::new();
    for _ in 0..batch {
        for i in 0..n {
            for j in 0..n {
                let v: f64 = r.gen_range(-1.0..1.0);
                data.push(if i == j { v + 2.0 * n as f64 } else { v });
            }
        }
    }
    let mut shape = if batch == 1 { vec![] } else { vec![batch] };
    shape.extend([n, n]);
    Tensor::new(DType::F64, shape, data)
}

fn uniform(r: &mut impl Rng, shape: &[usize]) -> Tensor {
    let n = shape.iter().product();
    let data = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
    Tensor::new(DType::F64, shape.to_vec(), data)
}

fn run_both(f: &Function, args: &[Tensor]) -> Vec<Tensor> {
    let want = eval(f, args);
    let p = kernel::fusion::fuse(f).unwrap();
    let got = run_program(&p, args);
    assert_tensors_close(&f.name, &got, &want, 1e-12);
    want
}

/// Row-major `x y` of the last two axes, batched over the leading ones.
fn host_matmul(x: &Tensor, y: &Tensor) -> Vec<f64> {
    let r = x.shape.len();
    let (n, k, m) = (x.shape[r - 2], x.shape[r - 1], y.shape[r - 1]);
    let count: usize = x.shape[..r - 2].iter().product();
    let mut out = vec![0.0; count * n * m];
    for c in 0..count {
        for i in 0..n {
            for j in 0..m {
                out[(c * n + i) * m + j] = (0..k)
                    .map(|p| x.data[(c * n + i) * k + p] * y.data[(c * k + p) * m + j])
                    .sum();
            }
        }
    }
    out
}

/// `a`'s triangle as a triangular solve with `t` reads it, `op(a)`.
fn host_triangle(a: &Tensor, t: TriangularSolve) -> Tensor {
    let n = a.shape[a.shape.len() - 1];
    let mut out = a.clone();
    for (p, v) in out.data.iter_mut().enumerate() {
        let (i, j) = ((p / n) % n, p % n);
        let inside = if t.lower { j <= i } else { j >= i };
        *v = match (inside, i == j && t.unit_diagonal) {
            (_, true) => 1.0,
            (true, false) => *v,
            (false, _) => 0.0,
        };
    }
    if t.transpose_a {
        let src = out.clone();
        for (p, v) in out.data.iter_mut().enumerate() {
            let (base, i, j) = (p - p % (n * n), (p / n) % n, p % n);
            *v = src.data[base + j * n + i];
        }
    }
    out
}

fn flags() -> Vec<TriangularSolve> {
    (0..16u8)
        .map(|bits| TriangularSolve {
            left_side: bits & 1 != 0,
            lower: bits & 2 != 0,
            transpose_a: bits & 4 != 0,
            unit_diagonal: bits & 8 != 0,
        })
        .collect()
}

#[test]
fn factors_and_solves_satisfy_their_equations_in_programs_and_the_interpreter() {
    let mut r = rng(5);
    let a = matrices(&mut r, 2, 3);
    let b = uniform(&mut r, &[2, 3, 3]);
    // Cholesky of a symmetric positive definite a·aᵀ: L Lᵀ gives it back.
    let f = function("cholesky", &[2, 3, 3], &[2, 3, 3], |f, a, _| {
        let at = swap_last(f, a);
        let spd = matmul(f, a, at);
        vec![spd, cholesky(f, spd)]
    });
    let out = run_both(&f, &[a.clone(), b.clone()]);
    let lt = {
        let mut t = out[1].clone();
        for (p, v) in t.data.iter_mut().enumerate() {
            let (base, i, j) = (p - p % 9, (p / 3) % 3, p % 3);
            *v = out[1].data[base + j * 3 + i];
        }
        t
    };
    assert_close("L Lᵀ", &host_matmul(&out[1], &lt), &out[0].data, 1e-12);
    for t in flags() {
        let f = function("triangular_solve", &[2, 3, 3], &[2, 3, 3], |f, a, b| {
            vec![triangular_solve(f, a, b, t)]
        });
        let x = &run_both(&f, &[a.clone(), b.clone()])[0];
        let op_a = host_triangle(&a, t);
        let back = if t.left_side {
            host_matmul(&op_a, x)
        } else {
            host_matmul(x, &op_a)
        };
        assert_close(&format!("{t:?}"), &back, &b.data, 1e-12);
    }
    let f = function("solve", &[2, 3, 3], &[2, 3, 3], |f, a, b| {
        let ai = inv(f, a);
        vec![solve(f, a, b), ai]
    });
    let out = run_both(&f, &[a.clone(), b.clone()]);
    assert_close("a x", &host_matmul(&a, &out[0]), &b.data, 1e-12);
    let eye: Vec<f64> = (0..18)
        .map(|p| f64::from(u8::from((p / 3) % 3 == p % 3)))
        .collect();
    assert_close("a a⁻¹", &host_matmul(&a, &out[1]), &eye, 1e-12);
}

#[test]
fn determinants_agree_with_cofactors_and_each_other() {
    let mut r = rng(9);
    let mut a = matrices(&mut r, 3, 3);
    // A negative determinant and a singular matrix among them.
    for k in 0..3 {
        a.data[9 + k] = -a.data[9 + k];
    }
    for k in 0..3 {
        a.data[18 + 3 + k] = 2.0 * a.data[18 + k];
    }
    let f = function("det", &[3, 3, 3], &[1], |f, a, _| {
        let (s, l) = slogdet(f, a);
        vec![det(f, a), s, l]
    });
    let out = run_both(&f, &[a.clone(), Tensor::vector(DType::F64, &[0.0])]);
    for k in 0..3 {
        let m = &a.data[9 * k..9 * k + 9];
        let cofactor = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6])
            + m[2] * (m[3] * m[7] - m[4] * m[6]);
        assert_close("det", &[out[0].data[k]], &[cofactor], 1e-12);
        if k < 2 {
            let from_slogdet = out[1].data[k] * out[2].data[k].exp();
            assert_close("slogdet", &[from_slogdet], &[cofactor], 1e-12);
        }
    }
    assert_eq!(out[0].data[1].signum(), -1.0);
    // The singular one: sign 0, log|det| -∞ (jnp.linalg.slogdet's).
    assert_eq!((out[1].data[2], out[2].data[2]), (0.0, f64::NEG_INFINITY));
}

#[test]
fn cholesky_of_a_matrix_that_is_not_positive_definite_is_nan_below_the_diagonal() {
    let a = Tensor::new(
        DType::F64,
        vec![2, 2, 2],
        vec![4.0, 1.0, 1.0, 3.0, 1.0, 2.0, 2.0, 1.0],
    );
    let f = function("cholesky_nan", &[2, 2, 2], &[1], |f, a, _| {
        vec![cholesky(f, a)]
    });
    let out = run_both(&f, &[a, Tensor::vector(DType::F64, &[0.0])]);
    assert!(out[0].data[..4].iter().all(|v| v.is_finite()));
    // JAX's: NaN in the lower triangle, zero above.
    let second = &out[0].data[4..];
    assert!(second[0].is_nan() && second[2].is_nan() && second[3].is_nan());
    assert_eq!(second[1], 0.0);
}

/// Every op in one scalar: `Σ w ∘ (each result)` squared, so second
/// derivatives are not trivial.
fn everything(f: &mut Function, a: Var, b: Var) -> Vec<Var> {
    let spd = {
        let at = swap_last(f, a);
        let p = matmul(f, a, at);
        symmetrize(f, p)
    };
    let l = cholesky(f, spd);
    let mut parts = vec![l, cho_solve(f, l, b), solve(f, a, b), inv(f, a)];
    let bt = swap_last(f, b);
    for t in flags() {
        let rhs = if t.left_side { b } else { bt };
        parts.push(triangular_solve(f, a, rhs, t));
    }
    let mut total = None;
    for (k, p) in parts.into_iter().enumerate() {
        let shape = f.shape(p).clone();
        let w = f
            .push(
                Op::Iota {
                    shape,
                    axis: f.shape(p).rank() - 1,
                    dtype: DType::F64,
                },
                &[],
            )
            .unwrap();
        let scale = f.full_like(0.1 * (k + 1) as f64, w);
        let w = f.mul(w, scale);
        let w = f.unary(oxla_core::ops::elementwise::UnaryOp::Sin, w);
        let wp = f.mul(w, p);
        let s = sum_all(f, wp);
        total = Some(match total {
            None => s,
            Some(t) => f.add(t, s),
        });
    }
    let d = det(f, a);
    let (_, logdet) = slogdet(f, a);
    let d = sum_all(f, d);
    let logdet = sum_all(f, logdet);
    let t = f.add(total.unwrap(), d);
    let t = f.add(t, logdet);
    vec![f.mul(t, t)]
}

#[test]
fn gradients_match_central_differences_and_the_jvp() {
    let mut r = rng(13);
    let f = function("everything", &[2, 3, 3], &[2, 3, 2], everything);
    let args = [matrices(&mut r, 2, 3), uniform(&mut r, &[2, 3, 2])];
    let g = grad(&f, &[0, 1]).unwrap();
    let got = run_both(&g, &args);
    for (i, gi) in got.iter().enumerate() {
        let fd = fd_grad(&f, &args, i, 0, 1e-6);
        assert_close(&format!("d/d{i}"), &gi.data, &fd, 1e-5);
    }
    // ⟨grad, direction⟩ is the JVP (the transposes against the JVPs).
    let dirs = [uniform(&mut r, &[2, 3, 3]), uniform(&mut r, &[2, 3, 2])];
    let j = jvp(&f);
    let mut jargs = args.to_vec();
    jargs.extend(dirs.iter().cloned());
    let t = eval(&j, &jargs);
    assert_close("jvp", &t[1].data, &[inner(&got, &dirs)], 1e-10);
}

#[test]
fn hessians_match_differences_of_gradients() {
    let mut r = rng(17);
    let f = function("everything", &[3, 3], &[3, 2], everything);
    let args = [matrices(&mut r, 1, 3), uniform(&mut r, &[3, 2])];
    let h = hessian(&f, 0).unwrap();
    let got = &run_both(&h, &args)[0];
    let g = grad(&f, &[0]).unwrap();
    let eps = 1e-5;
    for j in 0..9 {
        let mut plus = args.to_vec();
        plus[0].data[j] += eps;
        let mut minus = args.to_vec();
        minus[0].data[j] -= eps;
        let (gp, gm) = (&eval(&g, &plus)[0], &eval(&g, &minus)[0]);
        let fd: Vec<f64> = gp
            .data
            .iter()
            .zip(&gm.data)
            .map(|(p, m)| (p - m) / (2.0 * eps))
            .collect();
        let row: Vec<f64> = (0..9).map(|i| got.data[i * 9 + j]).collect();
        assert_close(&format!("column {j}"), &row, &fd, 1e-5);
    }
}

#[test]
fn vmap_is_a_loop_over_examples_with_a_shared_or_batched_operand() {
    let f = function("everything", &[3, 3], &[3, 2], |f, a, b| {
        let mut outs = everything(f, a, b);
        let at = swap_last(f, a);
        let spd = matmul(f, a, at);
        outs.push(cholesky(f, spd));
        outs.push(solve(f, a, b));
        outs.push(det(f, a));
        outs
    });
    let mut r = rng(19);
    let a_batch = matrices(&mut r, 4, 3);
    let b_one = uniform(&mut r, &[3, 2]);
    let b_batch = uniform(&mut r, &[4, 3, 2]);
    for (axes, b) in [([Some(0), None], &b_one), ([Some(0), Some(0)], &b_batch)] {
        let v = vmap(&f, &axes).unwrap();
        let batched = run_both(&v, &[a_batch.clone(), b.clone()]);
        for e in 0..4 {
            let b_e = if axes[1].is_some() {
                slice0(b, e)
            } else {
                b.clone()
            };
            let one = eval(&f, &[slice0(&a_batch, e), b_e]);
            for (k, o) in one.iter().enumerate() {
                assert_close(
                    &format!("example {e}, result {k}"),
                    &slice0(&batched[k], e).data,
                    &o.data,
                    1e-12,
                );
            }
        }
    }
    // The unbatched matrix under a batched right-hand side.
    let v = vmap(&f, &[None, Some(0)]).unwrap();
    let a_one = slice0(&a_batch, 1);
    let batched = run_both(&v, &[a_one.clone(), b_batch.clone()]);
    for e in 0..4 {
        let one = eval(&f, &[a_one.clone(), slice0(&b_batch, e)]);
        assert_close(
            "b batched",
            &slice0(&batched[0], e).data,
            &one[0].data,
            1e-12,
        );
    }
}

#[test]
fn text_form_round_trips() {
    let f = function("text", &[2, 3, 3], &[2, 3, 2], |f, a, b| {
        let (s, l) = slogdet(f, a);
        vec![
            cholesky(f, a),
            triangular_solve(
                f,
                a,
                b,
                TriangularSolve {
                    left_side: true,
                    lower: false,
                    transpose_a: true,
                    unit_diagonal: false,
                },
            ),
            solve(f, a, b),
            det(f, a),
            s,
            l,
        ]
    });
    let printed = text::print(&f);
    assert!(printed.contains("triangular_solve[1,0,1,0]"), "{printed}");
    let back = text::parse(&printed).unwrap();
    assert_eq!(text::print(&back), printed);
    assert_eq!(
        LinalgOp::parse("solve", Some("1")),
        Ok(LinalgOp::Solve { transpose_a: true })
    );
}
