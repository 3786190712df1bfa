//! Gathers and scatter-adds whose indices are out of range — what an index
//! computed inside a program (an `argmax`, arithmetic) can be, since only
//! index *parameters* are checked at the call: every executor reads 0 for
//! such an index and adds nothing for it, never touching memory outside a
//! buffer. JIT at both ISA levels and the kernel interpreter against the
//! reference interpreter, in f64 and f32, on the function and its VJP (the
//! scatter-add), with indices -1, the axis length, i64::MIN and i64::MAX
//! among in-range and repeated ones.

use crate::common as kernels;

use oxla_core::exec::{FnLauncher, InterpLauncher, Launcher};
use oxla_core::kernel::fusion::fuse;
use oxla_core::transforms::vjp;
use oxla_core::{DType, Function, Tensor};

/// `f` on every executor against the reference interpreter (bit for bit:
/// a gather and a sequential scatter-add round as the reference does).
fn check(f: &Function, args: &[Tensor]) {
    let want = oxla_core::interp::eval(f, args).expect("reference");
    let p = fuse(f).expect("fuses");
    let jit = kernels::Compiled::new(&p.kernels);
    let launchers: [(&str, &dyn Launcher); 3] = [
        ("interpreter", &InterpLauncher(&p.kernels)),
        ("JIT host", &FnLauncher(&jit.host)),
        ("JIT baseline", &FnLauncher(&jit.base)),
    ];
    for (name, launcher) in launchers {
        let got = kernels::run_program(&p, launcher, args);
        for (g, w) in got.iter().zip(&want) {
            let g: Vec<f64> = (0..g.len()).map(|j| g.get(j)).collect();
            assert_eq!(g, w.data, "{name}: `{}`\n{}", f.name, p.text());
        }
    }
}

fn table(dtype: DType, rows: usize, cols: usize) -> Tensor {
    let data = (0..rows * cols).map(|i| 1.0 + i as f64 * 0.5).collect();
    Tensor::new(dtype, vec![rows, cols], data)
}

#[test]
fn indices_out_of_range_read_and_write_nothing() {
    let ids = [
        1.0,
        -1.0,
        4.0,
        i64::MIN as f64,
        i64::MAX as f64,
        3.0,
        1.0,
        0.0,
        5.0,
    ];
    for (dtype, name) in [(DType::F64, "f64"), (DType::F32, "f32")] {
        let f = oxla_core::text::parse(&format!(
            "fn gather_rows(x %0: {name}[v, d], ids %1: i64[n]) {{\n  %2: {name}[n, d] = gather[0,0] %0 %1\n  return %2\n}}"
        ))
        .unwrap();
        let ids = Tensor::new(DType::I64, vec![ids.len()], ids.to_vec());
        let x = table(dtype, 4, 3);
        check(&f, &[x.clone(), ids.clone()]);
        // The VJP: a zero fill and a scatter-add with a repeated row.
        let g = vjp(&f);
        let ct = table(dtype, ids.numel(), 3);
        check(&g, &[x.clone(), ids.clone(), ct]);
        // An empty table: every index is out of range.
        check(&f, &[table(dtype, 0, 3), ids.clone()]);
        // Columns by a matrix of indices (the index moves along the inner
        // loop).
        let f = oxla_core::text::parse(&format!(
            "fn gather_cols(x %0: {name}[v, d], ids %1: i32[a, b]) {{\n  %2: {name}[v, a, b] = gather[1,0] %0 %1\n  return %2\n}}"
        ))
        .unwrap();
        let ids = Tensor::new(DType::I32, vec![2, 3], vec![2.0, -1.0, 0.0, 3.0, 2.0, 1.0]);
        check(&f, &[x.clone(), ids.clone()]);
        let ct = Tensor::new(dtype, vec![4, 2, 3], (0..24).map(|i| i as f64).collect());
        check(&vjp(&f), &[x, ids, ct]);
    }
}

/// JAX's rule for an index `i` into an axis of `n` elements, in plain
/// integer Rust: a negative index is wrapped once, Python-style (`i + n`),
/// then clamped into `0..n` (the gather's default mode).
fn jax_position(i: i64, n: usize) -> usize {
    let n = n as i64;
    let i = if i < 0 { i.saturating_add(n) } else { i };
    i.clamp(0, n - 1) as usize
}

/// Issue 20, item 3b: a negative computed index wraps once, then clamps
/// (-1 is the last row, -v the first, -v-1 and below the first), on every
/// executor, in the gather and in its VJP's scatter-add position; against
/// the rule evaluated in plain Rust, not against the reference.
#[test]
fn negative_indices_wrap_once_then_clamp_as_jax() {
    let (v, d) = (4usize, 3usize);
    let ids: Vec<i64> = vec![-1, -2, -4, -5, -1000, i64::MIN, 0, 3, 4, -3, i64::MAX, 2];
    let n = ids.len();
    for (dtype, name) in [(DType::F64, "f64"), (DType::F32, "f32")] {
        let f = oxla_core::text::parse(&format!(
            "fn gather_rows(x %0: {name}[v, d], ids %1: i64[n]) {{\n  %2: {name}[n, d] = gather[0,0] %0 %1\n  return %2\n}}"
        ))
        .unwrap();
        let x = table(dtype, v, d);
        let idx = Tensor::new(DType::I64, vec![n], ids.iter().map(|i| *i as f64).collect());
        // The gather: row `jax_position(id)` of x for each id.
        let want_gather: Vec<f64> = ids
            .iter()
            .flat_map(|&i| {
                let r = jax_position(i, v);
                (0..d).map(move |j| 1.0 + (r * d + j) as f64 * 0.5)
            })
            .collect();
        // The VJP: each cotangent row added at the same position.
        let ct_data: Vec<f64> = (0..n * d).map(|i| (i % 7) as f64 + 0.25).collect();
        let mut want_grad = vec![0.0; v * d];
        for (b, &i) in ids.iter().enumerate() {
            let r = jax_position(i, v);
            for j in 0..d {
                want_grad[r * d + j] += ct_data[b * d + j];
            }
        }
        let ct = Tensor::new(dtype, vec![n, d], ct_data);
        let g = vjp(&f);
        // The reference interpreter.
        let got = oxla_core::interp::eval(&f, &[x.clone(), idx.clone()]).unwrap();
        assert_eq!(got[0].data, want_gather, "reference gather, {name}");
        let got = oxla_core::interp::eval(&g, &[x.clone(), idx.clone(), ct.clone()]).unwrap();
        let grad = got.last().expect("the cotangent of x");
        assert_eq!(grad.data, want_grad, "reference VJP, {name}");
        // Every executor of the fused programs.
        for (prog, args, want) in [
            (&f, vec![x.clone(), idx.clone()], &want_gather),
            (&g, vec![x.clone(), idx.clone(), ct.clone()], &want_grad),
        ] {
            let p = fuse(prog).expect("fuses");
            let jit = kernels::Compiled::new(&p.kernels);
            let launchers: [(&str, &dyn Launcher); 3] = [
                ("interpreter", &InterpLauncher(&p.kernels)),
                ("JIT host", &FnLauncher(&jit.host)),
                ("JIT baseline", &FnLauncher(&jit.base)),
            ];
            for (lname, launcher) in launchers {
                let got = kernels::run_program(&p, launcher, &args);
                let r = got.last().expect("a result");
                let r: Vec<f64> = (0..r.len()).map(|j| r.get(j)).collect();
                assert_eq!(&r, want, "{lname}, {name}: `{}`", prog.name);
            }
        }
    }
}
