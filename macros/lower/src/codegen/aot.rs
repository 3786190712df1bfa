//! What the macro and the build helper must agree on: which functions need
//! kernels, and the kernels' symbol names. Both call these functions on the
//! same IR (from `expand_stack`), so they agree by construction.

use crate::stack::guard;
use oxla_core::Function;
use proc_macro2::Span;

/// The indices of the equations that the outputs depend on, in order.
pub(crate) fn live_eqns(f: &Function) -> Vec<usize> {
    let defs = f.definitions();
    let mut live = vec![false; f.eqns.len()];
    let mut stack: Vec<oxla_core::Var> = f.outs.clone();
    while let Some(v) = stack.pop() {
        if let Some(i) = defs.get(v.index()).copied().flatten() {
            if !live[i] {
                live[i] = true;
                stack.extend(f.eqns[i].ins.iter().copied());
            }
        }
    }
    (0..f.eqns.len()).filter(|i| live[*i]).collect()
}

/// Whether the macro emits `f` as straight-line Rust: every parameter,
/// output and live value is a scalar. Such functions need no kernels.
pub fn is_straight_line(f: &Function) -> bool {
    // Half-precision scalars compute in f32 inside kernels; Rust has no
    // arithmetic of its own for them.
    let full_precision = f
        .params
        .iter()
        .chain(&f.outs)
        .all(|v| !matches!(f.dtype(*v), oxla_core::DType::F16 | oxla_core::DType::BF16));
    full_precision && f.is_scalar_only() && all_scalar(f)
}

/// Whether every live value of `f`, and of the loop bodies it holds, is a
/// scalar.
fn all_scalar(f: &Function) -> bool {
    live_eqns(f).iter().all(|&i| {
        let e = &f.eqns[i];
        // A collective reaches other devices: never straight-line Rust.
        e.outs.iter().all(|o| f.shape(*o).is_scalar())
            && !matches!(e.op, oxla_core::Op::Collective(_) | oxla_core::Op::Pmap(_))
            && oxla_core::text::nested_functions(&e.op)
                .into_iter()
                .all(|g| g.params.iter().all(|p| g.shape(*p).is_scalar()) && all_scalar(g))
    })
}

/// The kernel symbols the generated code for `f` binds to when they were
/// compiled ahead of time: the `name`s of the kernels of `fuse(f)`, in
/// order, without repeats. Empty for straight-line functions (no kernels) and
/// when fusion fails (then the runtime reports the problem). The build
/// helper compiles each symbol `s` as `s_v3` and `s_base`.
pub fn aot_symbols(f: &Function) -> Vec<String> {
    if is_straight_line(f) {
        return Vec::new();
    }
    let program = guard("fusion", Span::call_site(), || {
        oxla_core::kernel::fusion::fuse(f)
    });
    let mut out: Vec<String> = Vec::new();
    if let Ok(p) = program {
        for k in p.kernels {
            if !out.contains(&k.name) {
                out.push(k.name);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::aot_symbols;
    use oxla_core::ir::Type;
    use oxla_core::ops::control::{self, Checkpoint};
    use oxla_core::{DType, Dim, Function, Shape};

    /// The build script compiles the kernels of a loop's nested programs
    /// too: they are in the one list `aot_symbols` reads.
    #[test]
    fn a_loop_body_kernels_are_among_the_symbols() {
        let v = Type::new(DType::F64, Shape(vec![Dim::sym("n")]));
        let mut body = Function::new("step");
        let a = body.add_param("a", v.clone());
        let _i = body.add_param("i", Type::scalar(DType::I64));
        let u = body.add_param("u", v.clone());
        let ua = body.mul(u, a);
        body.outs = vec![body.unary(oxla_core::ops::elementwise::UnaryOp::Tanh, ua)];
        let mut f = Function::new("f");
        let a = f.add_param("a", v.clone());
        let u0 = f.add_param("u0", v);
        let lo = f.add_param("lo", Type::scalar(DType::I64));
        let hi = f.add_param("hi", Type::scalar(DType::I64));
        let r = control::push_for(&mut f, lo, hi, &[a], &[u0], body, Checkpoint::All).unwrap();
        let e = f.unary(oxla_core::ops::elementwise::UnaryOp::Exp, r[0]);
        f.outs = vec![f.reduce_sum(e, vec![0])];
        let p = oxla_core::kernel::fusion::fuse(&f).unwrap();
        let symbols = aot_symbols(&f);
        let body = &p.host_steps[0].as_loop().expect("a loop step").body.program;
        assert!(!body.kernels.is_empty());
        for k in body.kernels.iter().chain(&p.kernels) {
            assert!(
                symbols.contains(&k.name),
                "{} missing from {symbols:?}",
                k.name
            );
        }
    }
}
