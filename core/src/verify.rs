//! The IR verifier: run after every pass in tests and debug builds.

use crate::ir::{Function, Type};
use crate::text::eqn_text;

/// Check that `f` is well formed: every value is defined once before use,
/// params are not redefined, and every equation's type is its op's rule.
pub fn verify(f: &Function) -> Result<(), String> {
    let mut defined = vec![false; f.types.len()];
    if f.params.len() != f.param_names.len() {
        return Err(format!(
            "`{}`: {} params but {} names",
            f.name,
            f.params.len(),
            f.param_names.len()
        ));
    }
    for p in &f.params {
        if std::mem::replace(&mut defined[p.index()], true) {
            return Err(format!("`{}`: param {p} appears twice", f.name));
        }
    }
    for e in &f.eqns {
        for i in &e.ins {
            if !defined.get(i.index()).copied().unwrap_or(false) {
                return Err(format!(
                    "`{}`: {i} used before definition in `{}`",
                    f.name,
                    eqn_text(f, e)
                ));
            }
        }
        let in_types: Vec<_> = e.ins.iter().map(|v| f.ty(*v)).collect();
        let tys =
            e.op.infer_all(&in_types)
                .map_err(|m| format!("`{}`: {m} in `{}`", f.name, eqn_text(f, e)))?;
        let have: Vec<&Type> = e.outs.iter().map(|o| f.ty(*o)).collect();
        if tys.iter().collect::<Vec<_>>() != have {
            let tys: Vec<String> = tys.iter().map(|t| t.to_string()).collect();
            return Err(format!(
                "`{}`: `{}` should have types {}",
                f.name,
                eqn_text(f, e),
                tys.join(", ")
            ));
        }
        for o in &e.outs {
            if std::mem::replace(&mut defined[o.index()], true) {
                return Err(format!("`{}`: {o} defined twice", f.name));
            }
        }
        // A loop's functions are checked as functions of their own.
        for g in crate::text::nested_functions(&e.op) {
            verify(g).map_err(|m| format!("in a loop of `{}`: {m}", f.name))?;
        }
    }
    for o in &f.outs {
        if !defined.get(o.index()).copied().unwrap_or(false) {
            return Err(format!("`{}`: output {o} is not defined", f.name));
        }
    }
    Ok(())
}

/// Verify in debug builds and tests; a failure is a bug in a pass.
pub fn debug_verify(f: &Function, pass: &str) {
    if cfg!(debug_assertions) {
        if let Err(e) = verify(f) {
            panic!("internal error: IR invalid after {pass}: {e}");
        }
    }
}
