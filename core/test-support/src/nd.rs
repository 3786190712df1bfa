//! Helpers for the tests of whole n-dimensional programs, shared by the
//! core fusion tests (`core/tests/suite/fusion_nd.rs`) and the CPU backend's
//! (`backends/cpu/tests/suite/nd_programs.rs`):
//! dimensions, a function builder whose flat argument lengths bind every
//! size, `dot_general`, and the bindings and arguments to run them at.
#![allow(dead_code)]

use oxla_core::{DType, Dim, DotDims, Function, Op, Shape, Tensor, Type, Var};
use rand::rngs::StdRng;
use std::collections::{BTreeMap, BTreeSet};

pub fn n() -> Dim {
    Dim::sym("n")
}

pub fn m() -> Dim {
    Dim::sym("m")
}

pub fn k(c: u64) -> Dim {
    Dim::Const(c)
}

pub fn sh(dims: &[Dim]) -> Shape {
    Shape(dims.to_vec())
}

pub fn push(f: &mut Function, op: Op, ins: &[Var]) -> Var {
    f.push(op.clone(), ins)
        .unwrap_or_else(|e| panic!("building {op}: {e}"))
}

/// A function of params `(name, dtype, shape)` and a body. A parameter
/// `[s]` is appended for each symbol `s` of their shapes, so that flat
/// argument lengths determine every size (even with empty arguments).
pub fn build(
    name: &str,
    params: &[(&str, DType, Shape)],
    body: impl FnOnce(&mut Function, &[Var]) -> Vec<Var>,
) -> Function {
    let mut f = Function::new(name);
    let ps: Vec<Var> = params
        .iter()
        .map(|(n, d, s)| f.add_param(n, Type::new(*d, s.clone())))
        .collect();
    let syms: BTreeSet<String> = params
        .iter()
        .flat_map(|(_, _, s)| s.symbols().map(str::to_string))
        .collect();
    for s in syms {
        f.add_param(
            &format!("len_{s}"),
            Type::new(DType::F32, sh(&[Dim::sym(&s)])),
        );
    }
    f.outs = body(&mut f, &ps);
    oxla_core::verify::verify(&f).unwrap_or_else(|e| panic!("`{name}` invalid: {e}"));
    f
}

pub fn dot_general(
    f: &mut Function,
    a: Var,
    b: Var,
    lc: &[usize],
    rc: &[usize],
    lb: &[usize],
    rb: &[usize],
) -> Var {
    let d = DotDims {
        lhs_contract: lc.to_vec(),
        rhs_contract: rc.to_vec(),
        lhs_batch: lb.to_vec(),
        rhs_batch: rb.to_vec(),
    };
    push(f, Op::DotGeneral(d), &[a, b])
}

/// Every binding of the symbols of `f` to `sizes`, keeping those whose
/// sizes multiply to at most `max_product`.
pub fn bindings(f: &Function, sizes: &[usize], max_product: usize) -> Vec<BTreeMap<String, usize>> {
    let mut envs: Vec<BTreeMap<String, usize>> = vec![BTreeMap::new()];
    for s in f.symbols() {
        envs = envs
            .into_iter()
            .flat_map(|e| {
                let s = s.clone();
                sizes.iter().map(move |v| {
                    let mut e = e.clone();
                    e.insert(s.clone(), *v);
                    e
                })
            })
            .filter(|e| e.values().product::<usize>() <= max_product)
            .collect();
    }
    envs
}

/// Arguments for `f` at `env`, each element drawn by `value`.
pub fn args_with(
    f: &Function,
    env: &BTreeMap<String, usize>,
    rng: &mut StdRng,
    value: impl Fn(&mut StdRng) -> f64,
) -> Vec<Tensor> {
    f.params
        .iter()
        .map(|p| {
            let shape: Vec<usize> = f
                .shape(*p)
                .0
                .iter()
                .map(|d| match d {
                    Dim::Const(c) => *c as usize,
                    Dim::Sym(s) => env[s],
                })
                .collect();
            let len = shape.iter().product();
            let data = (0..len).map(|_| value(rng)).collect();
            Tensor::new(f.dtype(*p), shape, data)
        })
        .collect()
}
