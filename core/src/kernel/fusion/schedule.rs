//! `fuse`: an IR function's program, its values materialized, grouped
//! into kernels and launched in the function's order, its control ops
//! host steps.

use super::assemble::assemble;
use super::builder::KernelBuilder;
use super::host_steps::host_step;
use super::materialize::{check_kernel_types, is_int, materialize};
use crate::exec::{BufferInfo, Launch, Program};
use crate::ir::{Function, Var};
use crate::kernel::{InstKind, Kernel, Reduce};
use crate::ops::elementwise::BinaryOp;
use crate::ops::{FusionKind, Op};
use crate::shape::Size;
use crate::transforms::{expand_special, simplify};
use crate::verify::verify;
use std::collections::HashMap;

/// Group elementwise chains and broadcasts with the reduction that consumes
/// them into kernels; return the program that runs them in order.
pub fn fuse(f: &Function) -> Result<Program, String> {
    verify(f)?;
    // Custom derivative rules have done their work in the transforms: what
    // runs is each custom call's primal function.
    let inlined = crate::ops::control::inline_primal(f)?;
    let f = simplify(&expand_special(inlined.as_ref().unwrap_or(f)));
    let defs = f.definitions();
    let materialized = materialize(&f, &defs);

    let mut buffers: Vec<BufferInfo> = Vec::new();
    let mut buffer_of: HashMap<Var, usize> = HashMap::new();
    for (i, p) in f.params.iter().enumerate() {
        buffer_of.insert(*p, buffers.len());
        buffers.push(BufferInfo {
            dtype: f.dtype(*p),
            shape: f.shape(*p).clone(),
            param: Some(i),
        });
    }
    check_kernel_types(&f, &defs, &materialized)?;
    let mut kernels: Vec<Kernel> = Vec::new();
    let mut launches = Vec::new();
    let mut host_steps = Vec::new();
    for e in &f.eqns {
        let kind = e.op.fusion_kind();
        if kind.is_host_step() {
            let args = e.ins.iter().map(|v| buffer_of[v]).collect();
            let outs = e
                .outs
                .iter()
                .map(|o| {
                    buffer_of.insert(*o, buffers.len());
                    buffers.push(BufferInfo {
                        dtype: f.dtype(*o),
                        shape: f.shape(*o).clone(),
                        param: None,
                    });
                    buffers.len() - 1
                })
                .collect();
            let at = launches.len();
            host_steps.push(host_step(&f, e, at, args, outs, &mut kernels)?);
            continue;
        }
        if !materialized[e.out().index()] {
            continue;
        }
        let out_buffer = buffers.len();
        buffers.push(BufferInfo {
            dtype: f.dtype(e.out()),
            shape: f.shape(e.out()).clone(),
            param: None,
        });
        buffer_of.insert(e.out(), out_buffer);
        if kind == FusionKind::Assemble {
            for (kernel, inputs) in assemble(&f, &defs, &materialized, e) {
                let mut args: Vec<usize> = inputs.iter().map(|v| buffer_of[v]).collect();
                args.push(out_buffer);
                launch(&mut kernels, &mut launches, kernel, args);
            }
            continue;
        }
        let mut b = KernelBuilder::new(&f, &defs, &materialized);
        let out_arg_dtype = f.dtype(e.out());
        let value = match (kind, &e.op) {
            (FusionKind::Reduction, Op::ReduceSum { axes }) => {
                b.reduction(e.ins[0], axes, Reduce::Sum)
            }
            (FusionKind::Reduction, Op::ReduceMax { axes }) => {
                b.reduction(e.ins[0], axes, Reduce::Max)
            }
            (FusionKind::Reduction, Op::ReduceMin { axes }) => {
                b.reduction(e.ins[0], axes, Reduce::Min)
            }
            (FusionKind::Reduction, Op::ReduceProd { axes }) => {
                b.reduction(e.ins[0], axes, Reduce::Prod)
            }
            (FusionKind::Reduction, Op::Dot) => {
                b.domain = vec![Size::of(&f.shape(e.ins[0]).0[0])];
                b.reduce_dims = 1;
                let l = b.value(e.ins[0], &[0]);
                let r = b.value(e.ins[1], &[0]);
                b.inst(f.dtype(e.out()), InstKind::Binary(BinaryOp::Mul, l, r))
            }
            (FusionKind::Reduction, Op::DotGeneral(d)) => {
                b.dot_general(e.ins[0], e.ins[1], d, f.dtype(e.out()))
            }
            (FusionKind::Reduction, op) => unreachable!("internal error: no reduction for {op}"),
            (FusionKind::Scan, Op::LinearScan { axis, reverse }) => {
                b.linear_scan(e, *axis, *reverse)
            }
            (FusionKind::Scan, op) => unreachable!("internal error: no scan kernel for {op}"),
            // An integer literal in a buffer of its own (a loop's bound):
            // the constant in f64, converted by the store.
            (_, Op::Literal { value, .. }) if is_int(out_arg_dtype) => {
                b.domain = f.shape(e.out()).0.iter().map(Size::of).collect();
                let v = out_arg_dtype.round(*value);
                b.inst(crate::dtype::DType::F64, InstKind::Const(v))
            }
            // Elementwise, broadcast, layout and indexed values: the
            // expression below the value, over the value's own domain.
            _ => {
                let shape = f.shape(e.out());
                b.domain = shape.0.iter().map(Size::of).collect();
                let cmap: Vec<usize> = (0..shape.rank()).collect();
                b.root_value(e.out(), &cmap)
            }
        };
        let (kernel, inputs) = b.finish(value, out_arg_dtype, None);
        let mut args: Vec<usize> = inputs.iter().map(|v| buffer_of[v]).collect();
        args.push(out_buffer);
        launch(&mut kernels, &mut launches, kernel, args);
    }
    if cfg!(debug_assertions) {
        for k in &kernels {
            k.verify()
                .map_err(|e| format!("internal error: fused {e}"))?;
        }
    }
    let outputs = f.outs.iter().map(|o| buffer_of[o]).collect();
    Ok(Program::new(f.clone(), kernels, buffers, launches, outputs).with_host_steps(host_steps))
}

/// Launch `kernel` on `args`, sharing one kernel among launches whose
/// kernels have the same text (and so the same name).
fn launch(kernels: &mut Vec<Kernel>, launches: &mut Vec<Launch>, kernel: Kernel, args: Vec<usize>) {
    let index = match kernels.iter().position(|k| k.name == kernel.name) {
        Some(i) => i,
        None => {
            kernels.push(kernel);
            kernels.len() - 1
        }
    };
    launches.push(Launch {
        kernel: index,
        args,
    });
}
