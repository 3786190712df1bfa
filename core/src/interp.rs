//! The reference interpreter: evaluates any IR function on host tensors.

use crate::ir::Function;
use crate::shape::{derived, Dim};
use crate::tensor::Tensor;
use std::collections::BTreeMap;

/// Evaluate `f` on `args` (one tensor per param). Dimension symbols are bound
/// from the arguments' shapes; a mismatch is an error naming the argument.
pub fn eval(f: &Function, args: &[Tensor]) -> Result<Vec<Tensor>, String> {
    if args.len() != f.params.len() {
        return Err(format!(
            "`{}` takes {} arguments, got {}",
            f.name,
            f.params.len(),
            args.len()
        ));
    }
    let mut env: BTreeMap<String, u64> = BTreeMap::new();
    for ((p, name), a) in f.params.iter().zip(&f.param_names).zip(args) {
        let ty = f.ty(*p);
        if ty.dtype != a.dtype || ty.shape.rank() != a.shape.len() {
            return Err(format!(
                "argument `{name}`: expected {ty}, got {}{:?}",
                a.dtype, a.shape
            ));
        }
        for (d, n) in ty.shape.0.iter().zip(&a.shape) {
            let ok = match d {
                Dim::Const(c) => *c == *n as u64,
                // Checked below, once the base symbols are bound.
                Dim::Sym(s) if derived::is_derived(s) => true,
                Dim::Sym(s) => *env.entry(s.clone()).or_insert(*n as u64) == *n as u64,
            };
            if !ok {
                return Err(format!(
                    "argument `{name}`: expected shape {}, got {:?}",
                    ty.shape, a.shape
                ));
            }
        }
    }
    let symbols = f.symbols();
    derived::bind_derived(symbols.iter().map(String::as_str), &mut env)?;
    for ((p, name), a) in f.params.iter().zip(&f.param_names).zip(args) {
        let want = f.shape(*p).concrete(&env)?;
        if want != a.shape {
            return Err(format!(
                "argument `{name}`: expected shape {}, got {:?}",
                f.shape(*p),
                a.shape
            ));
        }
    }
    let mut vals: Vec<Option<Tensor>> = vec![None; f.types.len()];
    for (p, a) in f.params.iter().zip(args) {
        vals[p.index()] = Some(a.clone());
    }
    for e in &f.eqns {
        let ins: Vec<&Tensor> = e
            .ins
            .iter()
            .map(|v| vals[v.index()].as_ref().expect("verified IR"))
            .collect();
        let shapes = e
            .outs
            .iter()
            .map(|o| f.ty(*o).shape.concrete(&env))
            .collect::<Result<Vec<_>, _>>()?;
        let results = e.op.eval(&ins, &shapes, &env)?;
        for (o, t) in e.outs.iter().zip(results) {
            vals[o.index()] = Some(t);
        }
    }
    Ok(f.outs
        .iter()
        .map(|o| vals[o.index()].clone().expect("verified IR"))
        .collect())
}
