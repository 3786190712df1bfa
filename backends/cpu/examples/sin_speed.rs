//! Speed of the JIT'd `sum(sin(x))`, `cos(x)` and (for scale) `sqrt(x)` over 10^6
//! in-range f32 (|x| < 100), best of 50 runs, host ISA and SSE2 baseline.
//! Run: `cargo run --release -p oxla-cpu --example sin_speed`.

use oxla_core::kernel::fusion::fuse;
use oxla_core::ops::elementwise::UnaryOp;
use oxla_core::{DType, Dim, Function, Kernel, KernelFn, Shape, Type};
use oxla_cpu::{IsaLevel, JitModule};
use std::time::Instant;

fn kernel(reduce: bool, op: UnaryOp) -> Kernel {
    let mut f = Function::new("speed");
    let ty = Type::new(DType::F32, Shape::vector(Dim::sym("n")));
    let x = f.add_param("x", ty);
    let s = f.unary(op, x);
    let out = if reduce { f.reduce_sum(s, vec![0]) } else { s };
    f.outs.push(out);
    let program = fuse(&f).expect("fuse");
    program.kernels[0].clone()
}

fn time(f: KernelFn, x: &[f32], out: &mut [f32]) -> f64 {
    let args = [x.as_ptr() as *mut u8, out.as_mut_ptr() as *mut u8];
    let sizes = [x.len() as i64];
    (0..50)
        .map(|_| {
            let t = Instant::now();
            // SAFETY: `f` is a one-input kernel over `n` f32 writing `out`,
            // which holds its `n` (or 1, for the sum) outputs.
            unsafe { f(args.as_ptr(), sizes.as_ptr()) };
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let n = 1_000_000;
    let x: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 20000) as f32 * 0.01 - 100.0)
        .collect();
    let mut out = vec![0f32; n];
    // sqrt (one instruction): the cost of the loop and memory alone.
    for (reduce, op) in [
        (true, UnaryOp::Sin),
        (false, UnaryOp::Cos),
        (false, UnaryOp::Sqrt),
    ] {
        let k = kernel(reduce, op);
        for level in [None, Some(IsaLevel::Baseline)] {
            let jit = match level {
                None => JitModule::compile(std::slice::from_ref(&k)),
                Some(l) => JitModule::compile_at(std::slice::from_ref(&k), l),
            }
            .expect("compile");
            let t = time(jit.function(0), &x, &mut out);
            println!(
                "{:<11} {:>8}: {:.3} ms, {:.2} ns/element",
                if reduce {
                    "sum(sin(x))".to_string()
                } else {
                    format!("{}(x)", op.name())
                },
                if level.is_none() { "host" } else { "baseline" },
                t * 1e3,
                t * 1e9 / n as f64
            );
        }
    }
}
