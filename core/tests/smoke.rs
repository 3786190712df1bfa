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
    println!("{}", text::print(&f));
    let p = fuse(&f).unwrap();
    println!("{}", p.text());
    assert_eq!(p.kernels.len(), 1);
    let xs: Vec<Buffer> = (0..3)
        .map(|k| Buffer::from_f64(DType::F32, &[1.0 + k as f64, 2.0, 3.0]))
        .collect();
    let out = p.run(&InterpLauncher(&p.kernels), &xs).unwrap();
    let args: Vec<Tensor> = xs.iter().map(|b| Tensor::from_buffer(vec![3], b)).collect();
    let want = interp::eval(&f, &args).unwrap();
    assert_eq!(out[0].to_f64(), want[0].data);
    let g = grad(&f, &[0, 1]).unwrap();
    println!("{}", text::print(&g));
    let back = text::parse(&text::print(&g)).unwrap();
    assert_eq!(text::print(&back), text::print(&g));
    let pg = fuse(&g).unwrap();
    println!("{}", pg.text());
    let v = vmap(&g, &[Some(0), None, Some(0)]).unwrap();
    println!("{}", text::print(&v));
    let pv = fuse(&v).unwrap();
    println!("{}", pv.text());
    let s = grad(&grad(&grad(&sin_fn(), &[0]).unwrap(), &[0]).unwrap(), &[0]).unwrap();
    println!("{}", text::print(&s));
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
