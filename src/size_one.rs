//! numpy broadcasting of argument axes that are 1 at the call.
//!
//! A compiled program expects every operand combined elementwise at one
//! size (the macros unify their sizes). A call that passes an argument of
//! size 1 on such an axis gets, on first use of that pattern, a program
//! derived again from the original function with that argument broadcast
//! (`oxla_core::transforms::broadcast`) and the same transform steps: one
//! program per pattern of size-1 axes, never one per size. Patterns the
//! specialization cannot make exact are refused with the reason.

use crate::__private::CompiledFn;
use crate::runtime::{Compiled, Ready};
use oxla_core::exec::RawArg;
use oxla_core::transforms::broadcast::size_one_params;
use oxla_core::transforms::Step;
use oxla_core::{Dim, Function};
use std::sync::Mutex;
use std::time::Instant;

/// The programs derived so far: by the generated function's IR text and
/// its size-1 axes, the program or why there is none.
type Derived = Vec<(
    (&'static str, Vec<(usize, usize)>),
    Result<&'static Ready, String>,
)>;
static DERIVED: Mutex<Derived> = Mutex::new(Vec::new());

/// The program that runs `f` (whose program is `ready`) on `args` with
/// their size-1 axes broadcast, or why there is none; `None` when the
/// arguments' dimensions are wrong in another way than size-1 axes.
pub(crate) fn program_for(
    f: &CompiledFn,
    ready: &Ready,
    args: &[RawArg],
) -> Option<Result<&'static Ready, String>> {
    let ones = ready.program.size_one_axes(args)?;
    let key = (f.ir, ones);
    // Held while deriving: another thread asking for the same pattern
    // waits rather than deriving it again.
    let mut derived = DERIVED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, r)) = derived.iter().find(|(k, _)| *k == key) {
        return Some(r.clone());
    }
    let start = Instant::now();
    let made = derive(f, &ready.program.function, &key.1)
        .and_then(|g| Compiled::build_function(g, &[], start).map(|r| &*Box::leak(Box::new(r))));
    derived.push((key, made.clone()));
    Some(made)
}

/// The function of `f` (here `g`) derived from the original with the
/// parameter axes `ones` of `g` at size 1.
fn derive(f: &CompiledFn, g: &Function, ones: &[(usize, usize)]) -> Result<Function, String> {
    let describe = || {
        let parts: Vec<String> = ones
            .iter()
            .map(|(p, a)| format!("axis {a} of `{}`", g.param_names[*p]))
            .collect();
        parts.join(", ")
    };
    let Some((original, steps)) = f.origin else {
        return Err(format!(
            "`{}` cannot broadcast size-1 arguments ({} is 1): pass them at the full size",
            g.name,
            describe()
        ));
    };
    let original = oxla_core::text::parse(original)?;
    let at_original: Vec<(usize, usize)> = ones
        .iter()
        .filter_map(|&(p, a)| original_axis(g, &original, p, a))
        .collect();
    if at_original.is_empty() {
        return Err(format!(
            "{} is 1, and only the original arguments of `{}` broadcast as numpy does (a batch axis or a tangent must have the full size)",
            describe(),
            original.name
        ));
    }
    let narrow = size_one_params(&original, &at_original).map_err(|why| {
        format!(
            "numpy broadcasting of {} is not possible in `{}`: it is exact only when the argument meets an array of the full size in an elementwise operation before anything else uses it, but {why}; pass it at the full size",
            describe(),
            original.name
        )
    })?;
    Step::apply_all(&Step::parse_all(steps)?, &narrow, &g.name)
}

/// The axis of the original function's parameter that is axis `a` of `g`'s
/// parameter `p`: the parameter of the same name, the axis with the same
/// size symbol (the same occurrence of it). `None` for a parameter the
/// original does not have (a tangent, a cotangent) or an axis it does not
/// have (a batch axis).
fn original_axis(g: &Function, original: &Function, p: usize, a: usize) -> Option<(usize, usize)> {
    let dims = &g.shape(g.params[p]).0;
    let Dim::Sym(sym) = &dims[a] else { return None };
    let nth = dims[..a].iter().filter(|d| *d == &dims[a]).count();
    let q = original
        .param_names
        .iter()
        .position(|n| *n == g.param_names[p])?;
    let axis = original
        .shape(original.params[q])
        .0
        .iter()
        .enumerate()
        .filter(|(_, d)| matches!(d, Dim::Sym(s) if s == sym))
        .nth(nth)?
        .0;
    Some((q, axis))
}
