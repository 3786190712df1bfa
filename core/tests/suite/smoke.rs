use oxla_core::exec::InterpLauncher;
use oxla_core::kernel::fusion::fuse;
use oxla_core::transforms::{grad, vmap};
use oxla_core::*;

fn fused_sum() -> Function {
    let mut f = Function::new("fused");
    let n = Shape::vector(Dim::sym("n"));
    let x = f.add_param("x", Type::new(DType::F32, n.clone()));
    let y = f.add_param("y", Type::new(DType::F32, n.clone()));
    let z = f.add_param("z", Type::new(DType::F32, n.clone()));
    let two = f.full(2.0, DType::F32, &n);
    let a = f.mul(x, two);
    let b = f.mul(a, y);
    let c = f.add(b, z);
    let s = f.reduce_sum(c, vec![0]);
    f.outs.push(s);
    f
}

#[test]
fn smoke() {
    let f = fused_sum();
    let p = fuse(&f).unwrap();
    assert_eq!(p.kernels.len(), 1);
    let xs: Vec<Buffer> = (0..3)
        .map(|k| Buffer::from_f64(DType::F32, &[1.0 + k as f64, 2.0, 3.0]))
        .collect();
    let out = p.run(&InterpLauncher(&p.kernels), &xs).unwrap();
    let args: Vec<Tensor> = xs.iter().map(|b| Tensor::from_buffer(vec![3], b)).collect();
    let want = interp::eval(&f, &args).unwrap();
    assert_eq!(out[0].to_f64(), want[0].data);
    let g = grad(&f, &[0, 1]).unwrap();
    let back = text::parse(&text::print(&g)).unwrap();
    assert_eq!(text::print(&back), text::print(&g));
    // The fused gradient, and its vmap, run by the kernel interpreter, give
    // the reference interpreter's values: d/dx = 2y, d/dy = 2x, with x = [1, 2, 3]
    // and y = [2, 2, 3].
    let pg = fuse(&g).unwrap();
    let outs = pg.run(&InterpLauncher(&pg.kernels), &xs).unwrap();
    let want = interp::eval(&g, &args).unwrap();
    assert_eq!(outs.len(), 2);
    for (o, w) in outs.iter().zip(&want) {
        assert_eq!(o.to_f64(), w.data);
    }
    assert_eq!(outs[0].to_f64(), vec![4.0, 4.0, 6.0]);
    assert_eq!(outs[1].to_f64(), vec![2.0, 4.0, 6.0]);
    let v = vmap(&g, &[Some(0), None, Some(0)]).unwrap();
    let pv = fuse(&v).unwrap();
    let rows = |k: f64| (0..6).map(|i| k + i as f64).collect::<Vec<f64>>();
    let vargs = [
        Tensor::new(DType::F32, vec![2, 3], rows(1.0)),
        Tensor::vector(DType::F32, &[2.0, 3.0, 4.0]),
        Tensor::new(DType::F32, vec![2, 3], rows(-1.0)),
    ];
    let bufs: Vec<Buffer> = vargs
        .iter()
        .map(|t| Buffer::from_f64(DType::F32, &t.data))
        .collect();
    let outs = pv.run(&InterpLauncher(&pv.kernels), &bufs).unwrap();
    let want = interp::eval(&v, &vargs).unwrap();
    for (o, w) in outs.iter().zip(&want) {
        assert_eq!(o.to_f64(), w.data);
    }
    // Row-wise d/dx = 2y (y unbatched): both rows are [4, 6, 8].
    assert_eq!(outs[0].to_f64(), vec![4.0, 6.0, 8.0, 4.0, 6.0, 8.0]);
    let s = grad(&grad(&grad(&sin_fn(), &[0]).unwrap(), &[0]).unwrap(), &[0]).unwrap();
    let r = interp::eval(&s, &[Tensor::scalar(DType::F64, 1.0)]).unwrap();
    assert!((r[0].data[0] + 1f64.cos()).abs() < 1e-12);
}

fn sin_fn() -> Function {
    let mut f = Function::new("sin");
    let x = f.add_param("x", Type::scalar(DType::F64));
    let y = f.unary(ops::elementwise::UnaryOp::Sin, x);
    f.outs.push(y);
    f
}
