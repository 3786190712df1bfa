//! Checks that a kernel is well formed before any PTX is written, so the
//! emitter can index freely and every error names what is wrong.

use crate::values::Ty;
use oxla_core::kernel::{InstKind, Kernel};
use oxla_core::Size;

pub(crate) fn validate(k: &Kernel) -> Result<(), String> {
    let err = |msg: String| Err(format!("kernel `{}`: {msg}", k.name));
    if !is_identifier(&k.name) {
        return err("the name is not a PTX identifier".into());
    }
    if k.reduce_dims > k.domain.len() {
        return err(format!(
            "reduce_dims {} exceeds rank {}",
            k.reduce_dims,
            k.domain.len()
        ));
    }
    // Sizes, offsets and region stores (a region only on a map kernel).
    k.check_sizes().or_else(err)?;
    let known = |s: &Size| s.syms.iter().all(|n| k.sizes.contains(n));
    if !k.domain.iter().all(known) {
        return err("the domain names a size symbol not in `sizes`".into());
    }
    for (i, inst) in k.insts.iter().enumerate() {
        Ty::of(inst.ty).map_err(|e| format!("kernel `{}`: v{i}: {e}", k.name))?;
        let operands: Vec<usize> = match &inst.kind {
            InstKind::Load {
                arg,
                strides,
                offset,
            } => {
                match k.args.get(*arg) {
                    Some(a) if !a.output => {}
                    _ => return err(format!("v{i} loads a{arg}, which is not an input")),
                }
                if strides.len() != k.domain.len() || !strides.iter().chain(offset).all(known) {
                    return err(format!(
                        "v{i}: strides must be one per domain axis over known sizes"
                    ));
                }
                Vec::new()
            }
            InstKind::LoadIndexed { arg, index, .. } => {
                match k.args.get(*arg) {
                    Some(a) if !a.output && inst.ty != oxla_core::DType::Bool => {}
                    _ => return err(format!("v{i} loads a{arg}, not a float input")),
                }
                // Strides, sizes and the index load: `check_sizes`.
                vec![*index]
            }
            InstKind::Const(_) | InstKind::Carry => Vec::new(),
            InstKind::Size(s) => {
                if !known(s) || inst.ty == oxla_core::DType::Bool {
                    return err(format!("v{i}: a size over unknown symbols, or as bool"));
                }
                Vec::new()
            }
            InstKind::Index(axis) => {
                if *axis >= k.domain.len() || inst.ty == oxla_core::DType::Bool {
                    return err(format!(
                        "v{i}: index of axis {axis} past the domain, or as bool"
                    ));
                }
                Vec::new()
            }
            InstKind::Unary(_, a) => vec![*a],
            InstKind::Binary(_, a, b) | InstKind::Cmp(_, a, b) => vec![*a, *b],
            InstKind::Select(c, a, b) => vec![*c, *a, *b],
        };
        if operands.iter().any(|&o| o >= i) {
            return err(format!("v{i} uses a value not defined before it"));
        }
    }
    for st in &k.stores {
        match k.args.get(st.arg) {
            Some(a) if a.output => {}
            _ => {
                return err(format!(
                    "a store targets a{}, which is not an output",
                    st.arg
                ))
            }
        }
        if st.value >= k.insts.len() {
            return err(format!("a store of undefined value v{}", st.value));
        }
        let scatter = k.region().is_some_and(|r| r.scatter.is_some());
        let float = matches!(
            k.args[st.arg].dtype,
            oxla_core::DType::F32 | oxla_core::DType::F64
        );
        if scatter && !float {
            return err(format!(
                "a scatter-add into {} (the atomic add is emitted for f32 and f64 only)",
                k.args[st.arg].dtype
            ));
        }
    }
    Ok(())
}

/// `[A-Za-z_][A-Za-z0-9_$]*`: safe as a PTX entry name.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}
