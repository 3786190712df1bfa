//! Checks that a kernel can be written as PTX before any is written, so the
//! emitter can index freely and every error names what is wrong.
//!
//! Whether the kernel is well formed (operands defined before use, loads of
//! inputs with one stride per axis, known size symbols, types per
//! instruction, stores, regions, scans) is `Kernel::verify`, the one
//! verifier of the kernel IR, run first. What this file adds is only what
//! the PTX backend cannot lower: names PTX does not accept and scatter-adds
//! without an atomic add. (Every compute type the IR allows has a register
//! class, `Ty::of`.)

use oxla_core::kernel::Kernel;
use oxla_core::DType;

pub(crate) fn validate(k: &Kernel) -> Result<(), String> {
    k.verify()?;
    let err = |msg: String| Err(format!("kernel `{}`: {msg}", k.name));
    if !is_identifier(&k.name) {
        return err("the name is not a PTX identifier".into());
    }
    let scatter = k.region().is_some_and(|r| r.scatter.is_some());
    for st in &k.stores {
        let dtype = k.args[st.arg].dtype;
        if scatter && !matches!(dtype, DType::F32 | DType::F64) {
            return err(format!(
                "a scatter-add into {dtype} (the atomic add is emitted for f32 and f64 only)"
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
