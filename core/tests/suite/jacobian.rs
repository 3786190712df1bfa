//! Full Jacobians and Hessians: jacfwd = jacrev on every single-output
//! catalog function and parameter, each contracted with a direction against
//! central finite differences; the Hessian symmetric and equal to
//! jacfwd(jacrev) and to jacrev(jacfwd).

use crate::common;

use common::*;
use oxla_core::transforms::{hessian, jacfwd, jacrev};
use oxla_core::*;

/// `Σ_x J[y.., x..] v[x..]` for a Jacobian stored as `S_y ++ S_x` (`v`
/// not empty).
fn contract(j: &Tensor, v: &Tensor) -> Vec<f64> {
    j.data
        .chunks(v.numel())
        .map(|row| dotv(row, &v.data))
        .collect()
}

#[test]
fn jacfwd_equals_jacrev_and_differences() {
    let n = Dim::sym("n");
    let mut checked = 0;
    for (i, c) in catalog(&n).iter().enumerate() {
        let f = &c.f;
        if f.outs.len() != 1 {
            continue;
        }
        for (e, env) in jacobian_envs(f, i as u64).iter().enumerate() {
            checked += check_jacobians(c, env, 500 + 10 * i as u64 + e as u64);
        }
    }
    assert!(checked > 100, "{checked}");
}

/// Sizes for the Jacobian checks: three of `shape_envs` (0 and 1 among
/// them, so empty Jacobians and unit axes are checked), to keep the
/// quadratic cost of full Jacobians and Hessians small.
fn jacobian_envs(f: &Function, seed: u64) -> Vec<std::collections::BTreeMap<String, usize>> {
    let mut envs = shape_envs(f, seed);
    if envs.len() > 3 {
        // The smallest two (0 and 1 where a slice fits) and one other.
        let other = envs[2 + seed as usize % (envs.len() - 2)].clone();
        envs.truncate(2);
        envs.push(other);
    }
    envs
}

/// jacfwd = jacrev for each param of the single-output `c` at `env`, and
/// J·v against differences; the number of (param, env) pairs checked
/// against differences.
fn check_jacobians(c: &Case, env: &std::collections::BTreeMap<String, usize>, seed: u64) -> usize {
    let f = &c.f;
    let mut checked = 0;
    {
        let mut rng = rng(seed);
        let env = env.clone();
        let args = random_args(c, &mut rng, &env);
        let y_shape = concrete(f.shape(f.outs[0]), &env);
        for wrt in 0..f.params.len() {
            let ctx = format!("{} wrt {} at {env:?}", f.name, f.param_names[wrt]);
            let jf = jacfwd(f, wrt).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            let jr = jacrev(f, wrt).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            verify::verify(&jf).unwrap();
            verify::verify(&jr).unwrap();
            let a = eval(&jf, &args).remove(0);
            let b = eval(&jr, &args).remove(0);
            let mut shape = y_shape.clone();
            shape.extend(&args[wrt].shape);
            assert_eq!(a.shape, shape, "{ctx}: jacfwd shape");
            assert_eq!(b.shape, shape, "{ctx}: jacrev shape");
            assert_close(&format!("{ctx}: jacfwd vs jacrev"), &a.data, &b.data, 1e-12);
            if args[wrt].numel() == 0 || a.numel() == 0 {
                continue;
            }
            let mut dir: Vec<Tensor> = args
                .iter()
                .map(|t| Tensor::new(t.dtype, t.shape.clone(), vec![0.0; t.numel()]))
                .collect();
            dir[wrt] = random_like(&mut rng, &args[wrt..wrt + 1]).remove(0);
            let fd = fd_jvp(f, &args, &dir, 1e-6).remove(0);
            assert_close(
                &format!("{ctx}: J·v vs differences"),
                &contract(&a, &dir[wrt]),
                &fd,
                1e-6,
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn hessians_are_symmetric_and_agree() {
    let n = Dim::sym("n");
    let mut checked = 0;
    for (i, c) in catalog(&n).iter().enumerate() {
        // A scalar function of every param: a weighted sum of the outputs.
        let g = weighted_sum(&c.f);
        let np = c.f.params.len();
        for (e, env) in jacobian_envs(&g, i as u64).iter().enumerate() {
            let mut rng = rng(900 + 10 * i as u64 + e as u64);
            let mut args = random_args(c, &mut rng, env);
            args.extend(random_for_outputs(&mut rng, &c.f, env));
            for wrt in 0..np {
                let ctx = format!("{} wrt {} at {env:?}", c.f.name, c.f.param_names[wrt]);
                let h = eval(&hessian(&g, wrt).unwrap(), &args).remove(0);
                let fr = eval(&jacrev(&jacfwd(&g, wrt).unwrap(), wrt).unwrap(), &args).remove(0);
                let k = args[wrt].numel();
                assert_eq!(h.numel(), k * k, "{ctx}");
                let ht: Vec<f64> = (0..k * k).map(|e| h.data[(e % k) * k + e / k]).collect();
                assert_close(&format!("{ctx}: symmetric"), &h.data, &ht, 1e-12);
                assert_close(
                    &format!("{ctx}: jacfwd(jacrev) vs jacrev(jacfwd)"),
                    &h.data,
                    &fr.data,
                    1e-12,
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked}");
}
