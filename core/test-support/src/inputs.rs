//! Inputs for the catalog's functions: size bindings, random arguments in
//! each parameter's domain, the shape-randomized bindings, and params read
//! through permuted strides.

use crate::catalog::{Case, SEP};
use crate::harness::inline;
use oxla_core::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// Bind every symbol to `size`.
pub fn env_all(f: &Function, size: usize) -> BTreeMap<String, usize> {
    try_env_all(f, size).unwrap_or_else(|e| panic!("`{}` at size {size}: {e}", f.name))
}

/// Every base symbol bound to `size`, and the derived ones computed from
/// them; an error when a slice does not fit at that size.
pub fn try_env_all(f: &Function, size: usize) -> Result<BTreeMap<String, usize>, String> {
    use oxla_core::shape::derived;
    let symbols = f.symbols();
    let mut env: BTreeMap<String, u64> = symbols
        .iter()
        .filter(|s| !derived::is_derived(s))
        .map(|s| (s.clone(), size as u64))
        .collect();
    derived::bind_derived(symbols.iter().map(String::as_str), &mut env)?;
    Ok(env.into_iter().map(|(k, v)| (k, v as usize)).collect())
}

pub fn concrete(shape: &Shape, env: &BTreeMap<String, usize>) -> Vec<usize> {
    shape
        .0
        .iter()
        .map(|d| match d {
            Dim::Const(c) => *c as usize,
            Dim::Sym(s) => *env.get(s).unwrap_or_else(|| panic!("unbound `{s}`")),
        })
        .collect()
}

pub fn random_tensor(rng: &mut StdRng, dtype: DType, shape: Vec<usize>, r: (f64, f64)) -> Tensor {
    let n = shape.iter().product();
    // A range of one value (a point such as 0) is that value.
    let data = (0..n)
        .map(|_| {
            if r.0 == r.1 {
                r.0
            } else {
                rng.gen_range(r.0..r.1)
            }
        })
        .collect();
    Tensor::new(dtype, shape, data)
}

/// Random arguments for `f` (params in `ranges`, pairs in `sep` kept apart).
pub fn random_args_for(
    f: &Function,
    ranges: &[(f64, f64)],
    sep: &[(usize, usize)],
    rng: &mut StdRng,
    env: &BTreeMap<String, usize>,
) -> Vec<Tensor> {
    let mut args: Vec<Tensor> = f
        .params
        .iter()
        .zip(ranges)
        .map(|(p, r)| random_tensor(rng, f.dtype(*p), concrete(f.shape(*p), env), *r))
        .collect();
    for (a, b) in sep {
        // (Skipped where the shapes differ, as after a partial vmap.)
        if args[*a].shape != args[*b].shape {
            continue;
        }
        for i in 0..args[*a].numel() {
            let (x, y) = (args[*a].data[i], args[*b].data[i]);
            if (x - y).abs() < SEP {
                let d = if rng.gen_bool(0.5) { SEP } else { -SEP };
                args[*b].data[i] = x + d;
            }
        }
    }
    args
}

pub fn random_args(case: &Case, rng: &mut StdRng, env: &BTreeMap<String, usize>) -> Vec<Tensor> {
    random_args_for(&case.f, &case.ranges, &case.sep, rng, env)
}

/// Random tensors in [-1, 1] of the shapes and dtypes of `like`.
pub fn random_like(rng: &mut StdRng, like: &[Tensor]) -> Vec<Tensor> {
    like.iter()
        .map(|t| random_tensor(rng, t.dtype, t.shape.clone(), (-1.0, 1.0)))
        .collect()
}

/// Random tensors for the outputs of `f` (cotangents, weights).
pub fn random_for_outputs(
    rng: &mut StdRng,
    f: &Function,
    env: &BTreeMap<String, usize>,
) -> Vec<Tensor> {
    f.outs
        .iter()
        .map(|o| random_tensor(rng, f.dtype(*o), concrete(f.shape(*o), env), (-1.0, 1.0)))
        .collect()
}

// ---- random shapes --------------------------------------------------------

/// The sizes a symbol takes in the shape-randomized checks: empty, a unit
/// axis (a broadcast that is not one), and small even and odd sizes.
pub const SHAPE_SIZES: [usize; 6] = [0, 1, 2, 3, 5, 7];

/// Bindings of the symbols of `f` for the shape-randomized checks: with at
/// most one symbol, every size of [`SHAPE_SIZES`]; otherwise every symbol
/// 0, every symbol 1, and four draws (each symbol independently) from
/// `seed`. Constant dimensions keep their sizes.
pub fn shape_envs(f: &Function, seed: u64) -> Vec<BTreeMap<String, usize>> {
    use oxla_core::shape::derived;
    let symbols = f.symbols();
    let syms: Vec<&String> = symbols.iter().filter(|s| !derived::is_derived(s)).collect();
    let same = |v: usize| -> BTreeMap<String, u64> {
        syms.iter().map(|s| ((*s).clone(), v as u64)).collect()
    };
    let bases: Vec<BTreeMap<String, u64>> = if syms.len() <= 1 {
        SHAPE_SIZES.iter().map(|&v| same(v)).collect()
    } else {
        let mut rng = rng(seed);
        let mut envs = vec![same(0), same(1)];
        for _ in 0..4 {
            envs.push(
                syms.iter()
                    .map(|s| {
                        (
                            (*s).clone(),
                            SHAPE_SIZES[rng.gen_range(0..SHAPE_SIZES.len())] as u64,
                        )
                    })
                    .collect(),
            );
        }
        envs
    };
    // Derived sizes (slices, concatenations) follow from the base ones; a
    // binding at which some slice does not fit is left out (the fusion
    // tests check that such a call is refused).
    // A max or min over no elements is an error at the call (JAX raises),
    // tested on its own (`fusion_nd::empty_max_and_min_are_errors`): such
    // bindings are left out here.
    let nonempty = oxla_core::ops::reduce::nonempty_reductions(f);
    bases
        .into_iter()
        .filter_map(|mut env| {
            derived::bind_derived(symbols.iter().map(String::as_str), &mut env).ok()?;
            let empty = nonempty.iter().any(|n| {
                n.dims.iter().any(|d| match d {
                    oxla_core::shape::Dim::Const(c) => *c == 0,
                    oxla_core::shape::Dim::Sym(s) => env.get(s) == Some(&0),
                })
            });
            if empty {
                return None;
            }
            Some(env.into_iter().map(|(k, v)| (k, v as usize)).collect())
        })
        .collect()
}

/// `f` with every parameter of rank ≥ 2 taken with its axes reversed and
/// transposed back before use: run by a backend, those operands are read
/// through non-unit (permuted) strides. `None` when `f` has no such
/// parameter.
pub fn with_transposed_params(f: &Function) -> Option<Function> {
    if f.params.iter().all(|p| f.shape(*p).rank() < 2) {
        return None;
    }
    let mut g = Function::new(&format!("{}_transposed", f.name));
    let args: Vec<Var> = f
        .params
        .iter()
        .zip(&f.param_names)
        .map(|(p, name)| {
            let ty = f.ty(*p).clone();
            let r = ty.shape.rank();
            if r < 2 {
                return g.add_param(name, ty);
            }
            let rev = Shape(ty.shape.0.iter().rev().cloned().collect());
            let q = g.add_param(&format!("{name}_t"), Type::new(ty.dtype, rev));
            let perm = (0..r).rev().collect();
            g.push(Op::Transpose { perm }, &[q]).unwrap()
        })
        .collect();
    g.outs = inline(&mut g, f, &args);
    verify::verify(&g).unwrap();
    Some(g)
}
