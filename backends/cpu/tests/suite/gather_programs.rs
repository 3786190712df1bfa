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
