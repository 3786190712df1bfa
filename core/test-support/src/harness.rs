//! Running and comparing: the interpreters on a function or a fused
//! program, finite differences, tolerance assertions, and the weighted sums
//! that turn a function's outputs into one scalar for gradient checks.

use crate::catalog::sum_all;
use oxla_core::*;
use std::collections::BTreeMap;

/// `g(params…, w_k…) = Σ_k sum(out_k(params) * w_k)`: a scalar function of
/// `f`'s params, with one weight param per output of `f`.
pub fn weighted_sum(f: &Function) -> Function {
    let mut g = Function::new(&format!("{}_wsum", f.name));
    let ps: Vec<Var> = f
        .params
        .iter()
        .zip(&f.param_names)
        .map(|(p, n)| g.add_param(n, f.ty(*p).clone()))
        .collect();
    let ws: Vec<Var> = f
        .outs
        .iter()
        .enumerate()
        .map(|(k, o)| g.add_param(&format!("w{k}"), f.ty(*o).clone()))
        .collect();
    let outs = inline(&mut g, f, &ps);
    let mut acc: Option<Var> = None;
    for (o, w) in outs.iter().zip(&ws) {
        let m = g.mul(*o, *w);
        let s = sum_all(&mut g, m);
        acc = Some(match acc {
            Some(a) => g.add(a, s),
            None => s,
        });
    }
    g.outs = vec![acc.expect("an output")];
    verify::verify(&g).unwrap();
    g
}

/// Copy the equations of `f` into `g`, with `args` for its params; returns
/// the values of `f`'s outputs.
pub fn inline(g: &mut Function, f: &Function, args: &[Var]) -> Vec<Var> {
    let mut map: Vec<Option<Var>> = vec![None; f.types.len()];
    for (p, a) in f.params.iter().zip(args) {
        map[p.index()] = Some(*a);
    }
    for e in &f.eqns {
        let ins: Vec<Var> = e.ins.iter().map(|v| map[v.index()].unwrap()).collect();
        let outs = g.push_all(e.op.clone(), &ins).unwrap();
        for (o, v) in e.outs.iter().zip(outs) {
            map[o.index()] = Some(v);
        }
    }
    f.outs.iter().map(|o| map[o.index()].unwrap()).collect()
}

/// Fuse's program run with the kernel interpreter, after binding the sizes
/// (from the arguments' dimensions, as the macros pass them, so that an
/// empty argument binds too) and checking bounds; the outputs as tensors.
pub fn run_program(p: &exec::Program, args: &[Tensor]) -> Vec<Tensor> {
    let f = &p.function;
    let bufs: Vec<Buffer> = args.iter().map(Tensor::to_buffer).collect();
    let raw: Vec<exec::RawArg> = bufs
        .iter()
        .zip(args)
        .map(|(b, t)| exec::RawArg {
            dtype: b.dtype(),
            ptr: b.as_ptr(),
            len: b.len(),
            dims: exec::ArgDims::new(&t.shape).expect("rank within MAX_RANK"),
        })
        .collect();
    let dims: Vec<(usize, exec::ArgDims)> = raw.iter().map(|a| (a.len, a.dims)).collect();
    let sizes = p
        .bind_dims(&dims)
        .unwrap_or_else(|e| panic!("bind `{}`: {e}", f.name));
    p.check_bounds(&sizes)
        .unwrap_or_else(|e| panic!("check_bounds `{}` at {sizes:?}: {e}", f.name));
    // A max or min over no elements is an error at the call (JAX raises;
    // `fusion_nd::empty_max_and_min_are_errors_at_the_call`): the call is
    // refused with that error, and there is nothing to compare, so the
    // reference's own values stand in (the callers compare with them).
    if let Err(e) = p.check_nonempty(&sizes) {
        assert!(e.contains("no identity"), "{e}");
        return oxla_core::interp::eval(f, args).expect("the reference runs");
    }
    let env: BTreeMap<String, u64> = p.symbols.iter().cloned().zip(sizes).collect();
    p.check_schedule()
        .unwrap_or_else(|e| panic!("check_schedule `{}`: {e}", f.name));
    // SAFETY: `raw` points into `bufs`, alive for the call; the launcher
    // runs this program's kernels; the schedule was checked.
    let out = unsafe { p.execute(&exec::InterpLauncher(&p.kernels), &raw) }
        .unwrap_or_else(|e| panic!("run `{}`: {e}", f.name));
    out.iter()
        .zip(&f.outs)
        .map(|(b, o)| {
            let shape = f.shape(*o).concrete(&env).unwrap();
            Tensor::from_buffer(shape, b)
        })
        .collect()
}

pub fn eval(f: &Function, args: &[Tensor]) -> Vec<Tensor> {
    interp::eval(f, args).unwrap_or_else(|e| panic!("eval of `{}`: {e}", f.name))
}

/// `x + h * d`, elementwise over the argument list.
pub fn axpy(x: &[Tensor], d: &[Tensor], h: f64) -> Vec<Tensor> {
    x.iter()
        .zip(d)
        .map(|(x, d)| {
            let data = x.data.iter().zip(&d.data).map(|(a, b)| a + h * b).collect();
            Tensor::new(x.dtype, x.shape.clone(), data)
        })
        .collect()
}

/// Central finite difference of every output of `f` along `dir`.
pub fn fd_jvp(f: &Function, args: &[Tensor], dir: &[Tensor], h: f64) -> Vec<Vec<f64>> {
    let p = eval(f, &axpy(args, dir, h));
    let m = eval(f, &axpy(args, dir, -h));
    p.iter()
        .zip(&m)
        .map(|(p, m)| {
            p.data
                .iter()
                .zip(&m.data)
                .map(|(a, b)| (a - b) / (2.0 * h))
                .collect()
        })
        .collect()
}

/// Central finite-difference gradient of the scalar output `out` of `f` with
/// respect to every element of param `i`.
pub fn fd_grad(f: &Function, args: &[Tensor], i: usize, out: usize, h: f64) -> Vec<f64> {
    (0..args[i].numel())
        .map(|j| {
            let mut plus = args.to_vec();
            plus[i].data[j] += h;
            let mut minus = args.to_vec();
            minus[i].data[j] -= h;
            let a = eval(f, &plus)[out].data[0];
            let b = eval(f, &minus)[out].data[0];
            (a - b) / (2.0 * h)
        })
        .collect()
}

pub fn dotv(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Σ over a list of tensors of ⟨a_k, b_k⟩.
pub fn inner(a: &[Tensor], b: &[Tensor]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| dotv(&x.data, &y.data)).sum()
}

/// Assert `|got - want| <= rtol * max(1, |want|)` elementwise (so `rtol` is
/// absolute for values below 1 in magnitude).
#[track_caller]
pub fn assert_close(ctx: &str, got: &[f64], want: &[f64], rtol: f64) {
    assert_eq!(got.len(), want.len(), "{ctx}: lengths differ");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if g == w {
            true // also equal infinities
        } else {
            (g - w).abs() <= rtol * w.abs().max(1.0)
        };
        assert!(
            ok,
            "{ctx}: element {i}: got {g:e}, want {w:e} (diff {:e}, rtol {rtol:e})",
            (g - w).abs()
        );
    }
}

#[track_caller]
pub fn assert_tensors_close(ctx: &str, got: &[Tensor], want: &[Tensor], rtol: f64) {
    assert_eq!(got.len(), want.len(), "{ctx}: number of outputs");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.dtype, w.dtype, "{ctx}: output {k} dtype");
        assert_eq!(g.shape, w.shape, "{ctx}: output {k} shape");
        assert_close(&format!("{ctx}: output {k}"), &g.data, &w.data, rtol);
    }
}

/// Slice `t` at index `i` of its leading axis.
pub fn slice0(t: &Tensor, i: usize) -> Tensor {
    let inner: usize = t.shape[1..].iter().product();
    Tensor::new(
        t.dtype,
        t.shape[1..].to_vec(),
        t.data[i * inner..(i + 1) * inner].to_vec(),
    )
}
