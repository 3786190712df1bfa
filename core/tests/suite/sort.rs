//! `argsort` and what is built on it (`sort`, `top_k`): the fused program
//! (its host step) against the reference interpreter, JAX's order (NaN
//! last, `-0.0 == 0.0`, stable in both directions), derivatives against
//! central differences and VJP against JVP, and `vmap` against a loop.

use crate::common;

use common::*;
use oxla_core::ops::sort::{argsort, sort, top_k};
use oxla_core::transforms::{grad, jvp, vmap};
use oxla_core::*;

fn ty(dims: &[u64]) -> Type {
    Type::new(
        DType::F64,
        Shape(dims.iter().map(|d| Dim::Const(*d)).collect()),
    )
}

fn function(
    name: &str,
    dims: &[u64],
    body: impl FnOnce(&mut Function, Var) -> Vec<Var>,
) -> Function {
    let mut f = Function::new(name);
    let x = f.add_param("x", ty(dims));
    let outs = body(&mut f, x);
    f.outs = outs;
    verify::verify(&f).unwrap();
    f
}

fn run_both(f: &Function, args: &[Tensor]) -> Vec<Tensor> {
    let want = eval(f, args);
    let p = kernel::fusion::fuse(f).unwrap();
    let got = run_program(&p, args);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.shape, w.shape, "{}", f.name);
        let same = g
            .data
            .iter()
            .zip(&w.data)
            .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
        assert!(
            same,
            "{}: program {:?}, interpreter {:?}",
            f.name, g.data, w.data
        );
    }
    want
}

#[test]
fn argsort_is_jaxs_order_in_both_directions() {
    let nan = f64::NAN;
    let x = Tensor::new(
        DType::F64,
        vec![7],
        vec![1.0, nan, 3.0, 3.0, -0.0, 0.0, f64::NEG_INFINITY],
    );
    let asc = function("argsort_asc", &[7], |f, x| vec![argsort(f, x, 0, false)]);
    let desc = function("argsort_desc", &[7], |f, x| vec![argsort(f, x, 0, true)]);
    // JAX 0.10: jnp.argsort(x) and jnp.argsort(x, descending=True).
    assert_eq!(
        run_both(&asc, std::slice::from_ref(&x))[0].data,
        [6.0, 4.0, 5.0, 0.0, 2.0, 3.0, 1.0]
    );
    assert_eq!(
        run_both(&desc, &[x])[0].data,
        [1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0]
    );
}

#[test]
fn sort_and_top_k_programs_match_the_interpreter_on_every_axis() {
    let mut r = rng(7);
    for (dims, axis) in [
        (vec![5u64], 0),
        (vec![3, 4], 0),
        (vec![3, 4], 1),
        (vec![2, 3, 4], 1),
    ] {
        let n: usize = dims.iter().map(|d| *d as usize).product();
        // Values with repeats, so stability matters.
        let data: Vec<f64> = (0..n)
            .map(|_| (rand::Rng::gen_range(&mut r, 0..5) as f64) - 2.0)
            .collect();
        let x = Tensor::new(DType::F64, dims.iter().map(|d| *d as usize).collect(), data);
        for descending in [false, true] {
            let f = function("sort", &dims, |f, x| {
                vec![
                    sort(f, x, axis, descending),
                    argsort(f, x, axis, descending),
                ]
            });
            let out = run_both(&f, std::slice::from_ref(&x));
            // Sorted lanes, and each is x gathered by the permutation.
            let shape = &x.shape;
            let inner: usize = shape[axis + 1..].iter().product();
            for (p, v) in out[0].data.iter().enumerate() {
                let k = (p / inner) % shape[axis];
                let src = p - k * inner + out[1].data[p] as usize * inner;
                assert_eq!(*v, x.data[src]);
                if k > 0 {
                    let prev = out[0].data[p - inner];
                    assert!(if descending { prev >= *v } else { prev <= *v });
                    if prev == *v {
                        assert!(out[1].data[p - inner] < out[1].data[p], "stable");
                    }
                }
            }
        }
        {
            let last = *dims.last().unwrap();
            let f = function("top_k", &dims, |f, x| {
                let (v, i) = top_k(f, x, last.min(2));
                vec![v, i]
            });
            run_both(&f, &[x]);
        }
    }
}

/// `sum(w · sort(x))` and `sum(w · top_k(x))`: gradients by VJP against
/// central differences and against the JVP, at points without ties.
#[test]
fn sort_and_top_k_derivatives_are_a_gather_by_the_permutation() {
    let mut r = rng(11);
    for (name, k) in [("sort", None), ("top_k", Some(3))] {
        let dims = [2u64, 5];
        let f = {
            let mut f = Function::new(name);
            let x = f.add_param("x", ty(&dims));
            let y = match k {
                None => sort(&mut f, x, 1, false),
                Some(k) => top_k(&mut f, x, k).0,
            };
            // Distinct weights by position: the permutation matters.
            let shape = f.shape(y).clone();
            let w = f
                .push(
                    Op::Iota {
                        shape,
                        axis: 1,
                        dtype: DType::F64,
                    },
                    &[],
                )
                .unwrap();
            let w = f.unary(oxla_core::ops::elementwise::UnaryOp::Exp, w);
            let p = f.mul(w, y);
            let s = sum_all(&mut f, p);
            let s = f.mul(s, s);
            f.outs = vec![s];
            verify::verify(&f).unwrap();
            f
        };
        let data: Vec<f64> = (0..10)
            .map(|_| rand::Rng::gen_range(&mut r, -1.0..1.0))
            .collect();
        let x = Tensor::new(DType::F64, vec![2, 5], data);
        let g = grad(&f, &[0]).unwrap();
        let got = run_both(&g, std::slice::from_ref(&x));
        let fd = fd_grad(&f, std::slice::from_ref(&x), 0, 0, 1e-6);
        assert_close(name, &got[0].data, &fd, 1e-6);
        // JVP along a direction equals ⟨grad, direction⟩.
        let dir = Tensor::new(
            DType::F64,
            vec![2, 5],
            (0..10).map(|i| (i as f64).sin()).collect(),
        );
        let j = jvp(&f);
        let t = eval(&j, &[x, dir.clone()]);
        let want = dotv(&got[0].data, &dir.data);
        assert_close(name, &t[t.len() - 1].data, &[want], 1e-10);
    }
}

#[test]
fn vmap_of_sort_and_top_k_is_a_loop_over_examples() {
    let f = function("sort_top_k", &[4, 3], |f, x| {
        let s = sort(f, x, 0, false);
        let (v, i) = top_k(f, x, 2);
        vec![s, v, i]
    });
    let b = vmap(&f, &[Some(0)]).unwrap();
    let mut r = rng(3);
    let data: Vec<f64> = (0..36)
        .map(|_| rand::Rng::gen_range(&mut r, 0..4) as f64)
        .collect();
    let xs = Tensor::new(DType::F64, vec![3, 4, 3], data);
    let batched = run_both(&b, std::slice::from_ref(&xs));
    for e in 0..3 {
        let one = eval(&f, &[slice0(&xs, e)]);
        for (k, o) in one.iter().enumerate() {
            assert_eq!(
                slice0(&batched[k], e).data,
                o.data,
                "example {e}, result {k}"
            );
        }
    }
}
