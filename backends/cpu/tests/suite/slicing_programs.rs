//! Programs with slices (offset loads), pads and concatenations (region
//! stores) fused, compiled for the host and for baseline SSE2, and run by
//! the executor against the reference interpreter on the unfused function,
//! at awkward lengths (0, 1, odd, past a vector block). Lengths a slice
//! does not fit must be a binding error, on every launcher.

use oxla_core::exec::{FnLauncher, InterpLauncher, Launcher};
use oxla_core::kernel::fusion::fuse;
use oxla_core::ops::elementwise::{BinaryOp, UnaryOp};
use oxla_core::ops::slicing::{concatenate, slice_bounds};
use oxla_core::shape::derived::Bound::{self, End, Start};
use oxla_core::transforms::vjp;
use oxla_core::{interp, Buffer, DType, Dim, Function, KernelFn, Op, Shape, Tensor, Type, Var};
use oxla_cpu::{IsaLevel, JitModule};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const LENGTHS: [usize; 9] = [0, 1, 2, 3, 4, 5, 17, 33, 1001];

fn n() -> Dim {
    Dim::sym("n")
}

fn sh(d: &[Dim]) -> Shape {
    Shape(d.to_vec())
}

fn build(
    name: &str,
    dtype: DType,
    params: &[Shape],
    body: impl FnOnce(&mut Function, &[Var]) -> Var,
) -> Function {
    let mut f = Function::new(name);
    let ps: Vec<Var> = params
        .iter()
        .enumerate()
        .map(|(i, s)| f.add_param(&format!("x{i}"), Type::new(dtype, s.clone())))
        .collect();
    let out = body(&mut f, &ps);
    f.outs = vec![out];
    f
}

fn sl(f: &mut Function, x: Var, b: &[(Bound, Bound, u64)]) -> Var {
    slice_bounds(f, x, b).unwrap()
}

fn bin(f: &mut Function, op: BinaryOp, a: Var, b: Var) -> Var {
    f.push(Op::Binary(op), &[a, b]).unwrap()
}

const ALL: (Bound, Bound, u64) = (Start(0), End(0), 1);

fn functions(dtype: DType) -> Vec<Function> {
    let v = sh(&[n()]);
    let m5 = sh(&[n(), Dim::Const(5)]);
    let mut fs = vec![
        build(
            "forward_difference",
            dtype,
            std::slice::from_ref(&v),
            |f, p| {
                let a = sl(f, p[0], &[(Start(1), End(0), 1)]);
                let b = sl(f, p[0], &[(Start(0), End(1), 1)]);
                bin(f, BinaryOp::Sub, a, b)
            },
        ),
        build(
            "rows_step_3_cols_step_2_exp",
            dtype,
            std::slice::from_ref(&m5),
            |f, p| {
                let s = sl(f, p[0], &[(Start(1), End(0), 3), (Start(0), End(0), 2)]);
                f.push(Op::Unary(UnaryOp::Exp), &[s]).unwrap()
            },
        ),
        build("last_3_step_2", dtype, std::slice::from_ref(&v), |f, p| {
            sl(f, p[0], &[(End(3), End(0), 2)])
        }),
        build(
            "empty_columns",
            dtype,
            &[sh(&[n(), Dim::Const(3)])],
            |f, p| sl(f, p[0], &[ALL, (Start(3), End(0), 1)]),
        ),
        build(
            "slice_of_product_from_end",
            dtype,
            std::slice::from_ref(&m5),
            |f, p| {
                let y = bin(f, BinaryOp::Mul, p[0], p[0]);
                sl(f, y, &[(End(2), End(0), 1), (Start(1), End(1), 1)])
            },
        ),
        build("sum_of_concat", dtype, &[v.clone(), v.clone()], |f, p| {
            let two = f.full_like(2.0, p[0]);
            let a = bin(f, BinaryOp::Mul, p[0], two);
            let c = concatenate(f, &[a, p[1]], 0);
            f.reduce_sum(c, vec![0])
        }),
        build(
            "concat_columns",
            dtype,
            &[sh(&[n(), Dim::Const(3)]), sh(&[n(), Dim::Const(2)])],
            |f, p| concatenate(f, &[p[0], p[1], p[0]], 1),
        ),
        build("stack_rows", dtype, &[v.clone(), v.clone()], |f, p| {
            let rows: Vec<Var> = p
                .iter()
                .map(|x| {
                    let s = sh(&[Dim::Const(1), n()]);
                    f.push(Op::Reshape { shape: s }, &[*x]).unwrap()
                })
                .collect();
            concatenate(f, &rows, 0)
        }),
    ];
    // Transposes: a pad with interior zeros (step 3 on the last axis), and
    // the slices of a concatenation's cotangent.
    let strided = build("strided", dtype, std::slice::from_ref(&m5), |f, p| {
        sl(f, p[0], &[(Start(1), End(1), 2), (Start(1), End(0), 3)])
    });
    fs.push(vjp(&strided));
    let joined = fs[6].clone();
    fs.push(vjp(&joined));
    fs
}

fn check(f: &Function) {
    let p = fuse(f).unwrap_or_else(|e| panic!("fuse `{}`: {e}", f.name));
    p.check_schedule().unwrap();
    let host = JitModule::compile(&p.kernels).expect("compile");
    let base = JitModule::compile_at(&p.kernels, IsaLevel::Baseline).expect("baseline");
    let host_fns: Vec<KernelFn> = (0..host.len()).map(|i| host.function(i)).collect();
    let base_fns: Vec<KernelFn> = (0..base.len()).map(|i| base.function(i)).collect();
    let launchers: [(&str, &dyn Launcher); 3] = [
        ("kernel interpreter", &InterpLauncher(&p.kernels)),
        ("JIT host", &FnLauncher(&host_fns)),
        ("JIT baseline", &FnLauncher(&base_fns)),
    ];
    for len in LENGTHS {
        let mut rng = StdRng::seed_from_u64(len as u64 + 7 * f.eqns.len() as u64);
        // Parameters have base symbols only (`n`), except a cotangent,
        // whose shape is derived: bound through the interpreter's rules.
        let mut env = std::collections::BTreeMap::new();
        env.insert("n".to_string(), len as u64);
        let symbols = f.symbols();
        let fits =
            oxla_core::shape::derived::bind_derived(symbols.iter().map(String::as_str), &mut env);
        let args: Vec<Tensor> = match fits {
            Ok(()) => f
                .params
                .iter()
                .map(|q| {
                    let shape = f.shape(*q).concrete(&env).unwrap();
                    let len = shape.iter().product();
                    let data = (0..len).map(|_| rng.gen_range(-2.0..2.0)).collect();
                    Tensor::new(f.dtype(*q), shape, data)
                })
                .collect(),
            Err(_) => {
                // Arguments of length `len` for the `n`-shaped parameters.
                let bufs: Vec<Buffer> = f
                    .params
                    .iter()
                    .map(|q| {
                        let shape: Vec<usize> = f
                            .shape(*q)
                            .0
                            .iter()
                            .map(|d| match d {
                                Dim::Const(c) => *c as usize,
                                Dim::Sym(_) => len,
                            })
                            .collect();
                        Buffer::zeros(f.dtype(*q), shape.iter().product())
                    })
                    .collect();
                for (name, l) in launchers {
                    let e = p.run(l, &bufs).expect_err("a slice out of range ran");
                    assert!(e.contains("out of range"), "{name}: `{}`: {e}", f.name);
                }
                continue;
            }
        };
        let want = interp::eval(f, &args).unwrap_or_else(|e| panic!("eval: {e}"));
        let bufs: Vec<Buffer> = args.iter().map(Tensor::to_buffer).collect();
        for (name, l) in launchers {
            let got = p
                .run(l, &bufs)
                .unwrap_or_else(|e| panic!("{name}: `{}` at n = {len}: {e}", f.name));
            for (o, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g.len(), w.numel(), "{name}: `{}` output {o}", f.name);
                for j in 0..w.numel() {
                    let (a, b) = (g.get(j), w.data[j]);
                    // Sums are pairwise in another order than the
                    // reference's and `exp` is within a few ulp; everything
                    // else (slices, pads, concatenations, products) is exact.
                    let eps = if f.dtype(f.outs[0]) == DType::F32 {
                        f32::EPSILON as f64
                    } else {
                        f64::EPSILON
                    };
                    let tol = match f.name.as_str() {
                        "sum_of_concat" => 4.0 * eps * (1.0 + len as f64),
                        "rows_step_3_cols_step_2_exp" => 4.0 * eps,
                        _ => 0.0,
                    };
                    assert!(
                        (a - b).abs() <= tol * b.abs().max(1.0),
                        "{name}: `{}` at n = {len}: output {o}[{j}] = {a}, expected {b}\n{}",
                        f.name,
                        p.text()
                    );
                }
            }
        }
    }
}

#[test]
fn slicing_programs_f32() {
    for f in functions(DType::F32) {
        check(&f);
    }
}

#[test]
fn slicing_programs_f64() {
    for f in functions(DType::F64) {
        check(&f);
    }
}
