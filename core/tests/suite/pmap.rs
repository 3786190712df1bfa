//! Collectives and `pmap` (`ops::collective`, `ops::control::Pmap`): every
//! collective's value under a pmap of 4 devices against the same thing
//! computed per device in plain Rust; gradients of functions through
//! collectives (outside the pmap: JAX's transposes) against central
//! differences, and VJP against JVP; a gradient inside the pmap (the
//! data-parallel step) against the full-batch gradient; vmap inside a pmap
//! with a collective over either axis, and a vmap outside; a Hessian
//! through collectives; the text form; an unbound axis.

use crate::common;

use common::*;
use oxla_core::ops::collective::{axis_size, collective, pmean, CollectiveKind};
use oxla_core::transforms::{grad, hessian, jvp, pmap, vjp, vmap, vmap_named};
use oxla_core::*;

const N: usize = 4;

fn f64_ty(dims: &[usize]) -> Type {
    Type::new(
        DType::F64,
        Shape(dims.iter().map(|d| Dim::Const(*d as u64)).collect()),
    )
}
const H: f64 = 1e-6;

/// Example values of `shape`, different per element and per call (`seed`).
fn values(seed: u64, shape: &[usize]) -> Tensor {
    let mut r = rng(seed);
    random_tensor(&mut r, DType::F64, shape.to_vec(), (-1.5, 1.5))
}

/// `x: f64[4] -> kind(sin(x))` over the axis `i`, and its pmap over
/// `N` devices' rows of a `[N, 4]` argument.
fn per_device(kind: CollectiveKind) -> Function {
    let mut f = Function::new("body");
    let x = f.add_param("x", f64_ty(&[4]));
    let s = f.unary(ops::elementwise::UnaryOp::Sin, x);
    let y = collective(&mut f, kind, "i", Some(s)).unwrap();
    f.outs = vec![y];
    verify::verify(&f).unwrap();
    f
}

fn pmapped(f: &Function, in_axes: &[Option<usize>]) -> Function {
    let outs = vec![Some(0); f.outs.len()];
    pmap(f, "i", in_axes, &outs).unwrap_or_else(|e| panic!("{e}"))
}

/// Row `d` of an `[N, m]` tensor.
fn row(t: &Tensor, d: usize) -> Vec<f64> {
    slice0(t, d).data
}

fn kinds() -> Vec<(&'static str, CollectiveKind)> {
    use CollectiveKind::*;
    vec![
        ("psum", Psum),
        ("pmax", Pmax),
        ("pmin", Pmin),
        ("all_gather 0", AllGather { axis: 0 }),
        ("all_gather 1", AllGather { axis: 1 }),
        ("psum_scatter 0", PsumScatter { axis: 0 }),
        (
            "ppermute",
            Ppermute {
                perm: vec![(0, 1), (1, 2), (2, 3)],
            },
        ),
        (
            "ppermute ring",
            Ppermute {
                perm: vec![(0, 3), (3, 2), (2, 1), (1, 0)],
            },
        ),
        (
            "all_to_all",
            AllToAll {
                split: 0,
                concat: 0,
            },
        ),
    ]
}

/// What device `d` computes for `kind` on the devices' operands `s[e]`
/// (each of 4 elements), written out per definition.
fn by_hand(kind: &CollectiveKind, s: &[Vec<f64>], d: usize) -> Vec<f64> {
    use CollectiveKind::*;
    let fold = |f: fn(f64, f64) -> f64| -> Vec<f64> {
        (0..4)
            .map(|k| (1..N).fold(s[0][k], |acc, e| f(acc, s[e][k])))
            .collect()
    };
    match kind {
        Psum => fold(|a, b| a + b),
        Pmax => fold(f64::max),
        Pmin => fold(f64::min),
        // [N, 4]: the devices' operands stacked.
        AllGather { axis: 0 } => s.concat(),
        // [4, N]: element k of device e at (k, e).
        AllGather { .. } => (0..4)
            .flat_map(|k| (0..N).map(move |e| (k, e)))
            .map(|(k, e)| s[e][k])
            .collect(),
        // A scalar: entry d of the sum.
        PsumScatter { .. } => vec![(1..N).fold(s[0][d], |acc, e| acc + s[e][d])],
        Ppermute { perm } => match perm.iter().find(|(_, dst)| *dst == d) {
            Some((src, _)) => s[*src].clone(),
            None => vec![0.0; 4],
        },
        // Entry j is device j's entry d.
        AllToAll { .. } => (0..N).map(|j| s[j][d]).collect(),
        AxisIndex { .. } => vec![d as f64],
    }
}

#[test]
fn every_collective_gives_its_definition_on_every_device() {
    let x = values(1, &[N, 4]);
    let s: Vec<Vec<f64>> = (0..N)
        .map(|d| row(&x, d).iter().map(|v| v.sin()).collect())
        .collect();
    for (name, kind) in kinds() {
        let p = pmapped(&per_device(kind.clone()), &[Some(0)]);
        let out = eval(&p, std::slice::from_ref(&x));
        assert_eq!(out[0].shape[0], N, "{name}: one result per device");
        for d in 0..N {
            let want = by_hand(&kind, &s, d);
            assert_close(
                &format!("{name}, device {d}"),
                &row(&out[0], d),
                &want,
                1e-15,
            );
        }
    }
}

#[test]
fn axis_index_axis_size_and_pmean() {
    let mut f = Function::new("body");
    let x = f.add_param("x", f64_ty(&[3]));
    let i = collective(
        &mut f,
        CollectiveKind::AxisIndex { dtype: DType::F64 },
        "i",
        None,
    )
    .unwrap();
    let n = axis_size(&mut f, "i", DType::F64).unwrap();
    let m = pmean(&mut f, x, "i").unwrap();
    f.outs = vec![i, n, m];
    let p = pmapped(&f, &[Some(0)]);
    let x = values(2, &[N, 3]);
    let out = eval(&p, std::slice::from_ref(&x));
    for d in 0..N {
        assert_eq!(out[0].data[d], d as f64, "axis_index on device {d}");
        assert_eq!(out[1].data[d], N as f64, "axis_size on device {d}");
        let want: Vec<f64> = (0..3)
            .map(|k| (0..N).map(|e| x.data[e * 3 + k]).sum::<f64>() / N as f64)
            .collect();
        assert_close(
            &format!("pmean on device {d}"),
            &row(&out[2], d),
            &want,
            1e-15,
        );
    }
}

/// Gradients of `Σ w·pmap(body)(x)` (a collective's transpose runs on the
/// devices) against central differences, and VJP against JVP.
#[test]
fn derivatives_through_every_collective_match_finite_differences() {
    for (k, (name, kind)) in kinds().into_iter().enumerate() {
        let p = pmapped(&per_device(kind), &[Some(0)]);
        let loss = weighted_sum(&p);
        let x = values(10 + k as u64, &[N, 4]);
        let w_shape = eval(&p, std::slice::from_ref(&x))[0].shape.clone();
        let w = values(20 + k as u64, &w_shape);
        let args = vec![x, w];
        let g = grad(&loss, &[0]).unwrap();
        let got = eval(&g, &args);
        let fd = fd_grad(&loss, &args, 0, 0, H);
        assert_close(&format!("{name}: grad vs fd"), &got[0].data, &fd, 1e-7);
        // ⟨vjp(ct), t⟩ = ⟨ct, jvp(t)⟩ for the pmapped function itself.
        let t = values(30 + k as u64, &[N, 4]);
        let ct = values(40 + k as u64, &w_shape);
        let jv = eval(&jvp(&p), &[args[0].clone(), t.clone()]);
        let vj = eval(&vjp(&p), &[args[0].clone(), ct.clone()]);
        let lhs = inner(&vj[1..], std::slice::from_ref(&t));
        let rhs = inner(std::slice::from_ref(&ct), &jv[1..]);
        assert_close(&format!("{name}: vjp vs jvp"), &[lhs], &[rhs], 1e-12);
    }
}

/// The data-parallel step: each device's gradient of its shard's mean
/// squared error, `pmean`'d, is the full batch's gradient, with the
/// parameters replicated (in_axes None) and the data split.
#[test]
fn a_pmean_of_per_device_gradients_is_the_full_batch_gradient() {
    let (m, k) = (3, 5); // rows per device, features
    let mut f = Function::new("loss");
    let w = f.add_param("w", f64_ty(&[k]));
    let x = f.add_param("x", f64_ty(&[m, k]));
    let y = f.add_param("y", f64_ty(&[m]));
    let wb = f.broadcast(w, f64_ty(&[m, k]).shape, vec![1]);
    let xw = f.mul(x, wb);
    let pred = f.reduce_sum(xw, vec![1]);
    let pred = f.unary(ops::elementwise::UnaryOp::Tanh, pred);
    let r = f.sub(pred, y);
    let r2 = f.mul(r, r);
    let s = f.reduce_sum(r2, vec![0]);
    let count = f.literal((m * N) as f64, DType::F64);
    let l = f.div(s, count);
    f.outs = vec![l];
    // Per device: the gradient of its share of the mean, summed over
    // devices (psum), is the gradient of the full mean.
    let g = grad(&f, &[0]).unwrap();
    let mut step = Function::new("step");
    let ps: Vec<Var> = f
        .params
        .iter()
        .zip(&f.param_names)
        .map(|(p, n)| step.add_param(n, f.ty(*p).clone()))
        .collect();
    let gw = inline(&mut step, &g, &ps)[0];
    let total = collective(&mut step, CollectiveKind::Psum, "i", Some(gw)).unwrap();
    step.outs = vec![total];
    let p = pmap(&step, "i", &[None, Some(0), Some(0)], &[None]).unwrap();
    let wv = values(3, &[k]);
    let xv = values(4, &[N, m, k]);
    let yv = values(5, &[N, m]);
    let got = eval(&p, &[wv.clone(), xv.clone(), yv.clone()]);
    // The full batch on one device.
    let flat_x = Tensor::new(DType::F64, vec![N * m, k], xv.data.clone());
    let flat_y = Tensor::new(DType::F64, vec![N * m], yv.data.clone());
    let mut one = Function::new("full");
    let w1 = one.add_param("w", f64_ty(&[k]));
    let x1 = one.add_param("x", f64_ty(&[N * m, k]));
    let y1 = one.add_param("y", f64_ty(&[N * m]));
    let wb = one.broadcast(w1, f64_ty(&[N * m, k]).shape, vec![1]);
    let xw = one.mul(x1, wb);
    let pred = one.reduce_sum(xw, vec![1]);
    let pred = one.unary(ops::elementwise::UnaryOp::Tanh, pred);
    let r = one.sub(pred, y1);
    let r2 = one.mul(r, r);
    let s = one.reduce_sum(r2, vec![0]);
    let count = one.literal((m * N) as f64, DType::F64);
    let l = one.div(s, count);
    one.outs = vec![l];
    let want = eval(&grad(&one, &[0]).unwrap(), &[wv, flat_x, flat_y]);
    assert_close("pmean'd gradient", &got[0].data, &want[0].data, 1e-14);
}

/// `vmap` inside a pmap: a psum over the vmap's axis `j` sums the batch on
/// each device, one over the pmap's axis `i` sums across devices, per
/// example; and the same body vmapped outside the pmap.
#[test]
fn vmap_inside_and_outside_a_pmap_with_collectives_over_either_axis() {
    let b = 3;
    let mut f = Function::new("body");
    let x = f.add_param("x", f64_ty(&[2]));
    let s = f.unary(ops::elementwise::UnaryOp::Sin, x);
    let over_j = collective(&mut f, CollectiveKind::Psum, "j", Some(s)).unwrap();
    let over_i = collective(&mut f, CollectiveKind::Psum, "i", Some(x)).unwrap();
    let y = f.mul(over_j, over_i);
    f.outs = vec![y];
    let inner_v = vmap_named(&f, &[Some(0)], &[Some(0)], "j").unwrap();
    let p = pmapped(&inner_v, &[Some(0)]);
    let xv = values(6, &[N, b, 2]);
    let got = eval(&p, std::slice::from_ref(&xv));
    let at = |d: usize, e: usize, k: usize| xv.data[(d * b + e) * 2 + k];
    let mut want = Vec::new();
    for d in 0..N {
        for e in 0..b {
            for k in 0..2 {
                let sj: f64 = (0..b).map(|e2| at(d, e2, k).sin()).sum();
                let si: f64 = (0..N).map(|d2| at(d2, e, k)).sum();
                want.push(sj * si);
            }
        }
    }
    assert_close("vmap(j) inside pmap(i)", &got[0].data, &want, 1e-14);
    // The same with the batch outside: vmap over j of the pmap over i,
    // the argument [b, N, 2].
    let outer = vmap_named(&pmapped(&f, &[Some(0)]), &[Some(0)], &[Some(0)], "j").unwrap();
    let xt = Tensor::new(
        DType::F64,
        vec![b, N, 2],
        (0..b * N * 2)
            .map(|q| {
                let (e, d, k) = (q / (N * 2), (q / 2) % N, q % 2);
                at(d, e, k)
            })
            .collect(),
    );
    let got = eval(&outer, &[xt]);
    for e in 0..b {
        for d in 0..N {
            for k in 0..2 {
                let q = (e * N + d) * 2 + k;
                let w = want[(d * b + e) * 2 + k];
                assert_close(
                    &format!("vmap(pmap) at {e},{d},{k}"),
                    &[got[0].data[q]],
                    &[w],
                    1e-14,
                );
            }
        }
    }
    // An unnamed vmap outside leaves the collective over `i` alone.
    let mut g = Function::new("body2");
    let x = g.add_param("x", f64_ty(&[2]));
    let y = collective(&mut g, CollectiveKind::AllGather { axis: 1 }, "i", Some(x)).unwrap();
    g.outs = vec![y];
    let outer = vmap(&pmapped(&g, &[Some(0)]), &[Some(0)]).unwrap();
    let got = eval(&outer, &[xt_of(&xv, b)]);
    for e in 0..b {
        for d in 0..N {
            for k in 0..2 {
                for d2 in 0..N {
                    let q = ((e * N + d) * 2 + k) * N + d2;
                    assert_eq!(got[0].data[q], at(d2, e, k), "all_gather under vmap");
                }
            }
        }
    }
}

/// `[N, b, 2]` → `[b, N, 2]`.
fn xt_of(xv: &Tensor, b: usize) -> Tensor {
    let data = (0..b * N * 2)
        .map(|q| {
            let (e, d, k) = (q / (N * 2), (q / 2) % N, q % 2);
            xv.data[(d * b + e) * 2 + k]
        })
        .collect();
    Tensor::new(DType::F64, vec![b, N, 2], data)
}

/// Forward over reverse through collectives: the Hessian of
/// `Σ w·pmap(body)(x)` against central differences of its gradient.
#[test]
fn hessian_through_collectives_matches_differences_of_the_gradient() {
    for (k, (name, kind)) in kinds().into_iter().enumerate() {
        let p = pmapped(&per_device(kind), &[Some(0)]);
        let loss = weighted_sum(&p);
        let x = values(50 + k as u64, &[N, 4]);
        let w_shape = eval(&p, std::slice::from_ref(&x))[0].shape.clone();
        let w = values(60 + k as u64, &w_shape);
        let args = vec![x, w];
        let h = hessian(&loss, 0).unwrap();
        let got = eval(&h, &args);
        let g = grad(&loss, &[0]).unwrap();
        // Column q of the Hessian: the gradient's central difference along e_q.
        for q in 0..N * 4 {
            let mut dir = vec![args[0].clone(), args[1].clone()];
            dir[0].data.iter_mut().for_each(|v| *v = 0.0);
            dir[1].data.iter_mut().for_each(|v| *v = 0.0);
            dir[0].data[q] = 1.0;
            let fd = fd_jvp(&g, &args, &dir, 1e-5);
            let col: Vec<f64> = (0..N * 4).map(|r| got[0].data[r * N * 4 + q]).collect();
            assert_close(&format!("{name}: Hessian column {q}"), &col, &fd[0], 1e-6);
        }
    }
}

/// The fused programs, run on 4 device threads with the kernel
/// interpreter, against the reference interpreter: values and gradients,
/// vmap inside the pmap, the data-parallel gradient.
#[test]
fn fused_programs_on_device_threads_equal_the_interpreter() {
    exec::set_cpu_device_count(N);
    let mut cases: Vec<(String, Function, Vec<Tensor>)> = Vec::new();
    for (k, (name, kind)) in kinds().into_iter().enumerate() {
        let p = pmapped(&per_device(kind), &[Some(0)]);
        let x = values(70 + k as u64, &[N, 4]);
        let w_shape = eval(&p, std::slice::from_ref(&x))[0].shape.clone();
        let w = values(80 + k as u64, &w_shape);
        cases.push((name.to_string(), p.clone(), vec![x.clone()]));
        let loss = weighted_sum(&p);
        cases.push((
            format!("{name} grad"),
            grad(&loss, &[0]).unwrap(),
            vec![x, w],
        ));
    }
    for (name, f, args) in cases {
        let program = kernel::fusion::fuse(&f).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = run_program(&program, &args);
        let want = eval(&f, &args);
        assert_tensors_close(&format!("{name}: fused on devices"), &got, &want, 1e-15);
    }
}

/// A mapped axis longer than the number of devices is an error naming the
/// argument and the setting.
#[test]
fn more_entries_than_devices_is_an_error_naming_the_argument() {
    let p = pmapped(&per_device(CollectiveKind::Psum), &[Some(0)]);
    let program = kernel::fusion::fuse(&p).unwrap();
    let x = values(90, &[64, 4]).to_buffer();
    let raw = [exec::RawArg {
        dtype: x.dtype(),
        ptr: x.as_ptr(),
        len: x.len(),
        dims: exec::ArgDims::new(&[64, 4]).unwrap(),
    }];
    // SAFETY: `raw` points into `x`, alive for the call; the launcher runs
    // this program's kernels.
    let err =
        unsafe { program.execute(&exec::InterpLauncher(&program.kernels), &raw) }.unwrap_err();
    assert!(
        err.contains("argument `x`") && err.contains("OXLA_CPU_DEVICES"),
        "{err}"
    );
}

#[test]
fn pmap_and_collectives_read_back_from_text() {
    for (name, kind) in kinds() {
        let p = pmapped(&per_device(kind), &[Some(0)]);
        for f in [p.clone(), jvp(&p), vjp(&p)] {
            let text = text::print(&f);
            let back = text::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
            assert_eq!(text::print(&back), text, "{name}");
        }
    }
}

#[test]
fn a_collective_outside_its_axis_is_an_error_not_a_value() {
    let f = per_device(CollectiveKind::Psum);
    let err = interp::eval(&f, &[values(7, &[4])]).unwrap_err();
    assert!(err.contains("psum[i]") && err.contains("`i`"), "{err}");
    assert_eq!(
        ops::collective::free_axes(&f)
            .into_iter()
            .collect::<Vec<_>>(),
        vec!["i".to_string()]
    );
    let p = pmapped(&f, &[Some(0)]);
    assert!(ops::collective::free_axes(&p).is_empty());
    // A pmap whose mapped operands disagree on the number of devices.
    let mut g = Function::new("two");
    let a = g.add_param("a", f64_ty(&[2]));
    let b = g.add_param("b", f64_ty(&[2]));
    let s = g.add(a, b);
    g.outs = vec![s];
    let p = pmap(&g, "i", &[Some(0), Some(1)], &[Some(0)]).unwrap();
    let err = interp::eval(&p, &[values(8, &[3, 2]), values(9, &[2, 4])]).unwrap_err();
    assert!(err.contains("argument `b`"), "{err}");
}
