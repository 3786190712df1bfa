//! Max and min reductions and the `Size` and `Index` instructions, compiled
//! for the host, for x86-64-v3 where it runs and for baseline SSE2, against
//! the kernel interpreter: awkward lengths (vector-width tails, blocks of
//! the unrolled loop), NaN anywhere, ±inf, empty rows, strided (scalar)
//! loops, several reduced axes, half-precision storage.

use crate::common;
use common::*;
use oxla_core::kernel::{interp, Reduce};
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use oxla_core::{Buffer, DType, Kernel, Size};
use oxla_cpu::{host_supports_v3, run_checked, IsaLevel, JitModule};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const FLOATS: [DType; 2] = [DType::F32, DType::F64];
const CHOOSERS: [Reduce; 2] = [Reduce::Max, Reduce::Min];

/// Lengths around every vector width, unroll and tail boundary.
const LENGTHS: [i64; 20] = [
    0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 1000, 1001, 1029, 4099,
];

/// `k` compiled for the host, for x86-64-v3 where it runs, and for baseline.
fn compiled(k: &Kernel) -> Vec<(&'static str, JitModule)> {
    let one = std::slice::from_ref(k);
    let mut out = vec![("host", JitModule::compile(one).expect("host"))];
    if host_supports_v3() {
        out.push((
            "x86-64-v3",
            JitModule::compile_at(one, IsaLevel::X86_64V3).expect("v3"),
        ));
    }
    out.push((
        "baseline",
        JitModule::compile_at(one, IsaLevel::Baseline).expect("baseline"),
    ));
    out
}

/// Every compiled variant of `k` against the interpreter, within `tol`
/// (NaN only matches NaN, infinities only themselves, unwritten outputs
/// fail).
fn check_all(k: &Kernel, sizes: &[i64], inputs: &[Buffer], tol: f64) {
    let mut want = with_outputs(k, sizes, inputs);
    interp::run(k, &mut want, sizes).expect("interpreter");
    for (isa, jit) in compiled(k) {
        let mut got = with_outputs(k, sizes, inputs);
        run_checked(jit.function(0), k, &mut got, sizes).expect("run_checked");
        if let Err(e) = compare(k, &got, &want, tol) {
            panic!("{isa}: kernel {} sizes {sizes:?}: {e}\n{k}", k.name);
        }
    }
}

/// `r` over `x[j * stride]`, `j < n` (a symbolic stride bound to 1 keeps
/// the loop scalar; a constant 1 vectorizes it).
fn choose_kernel(ty: DType, r: Reduce, vector: bool) -> Kernel {
    let mut kb = KernelBuilder::new(
        &format!("{}_{ty}_{vector}", r.name()),
        &["n", "s"],
        vec![sym("n")],
        1,
    );
    let x = kb.arg(ty, false);
    let out = kb.arg(ty, true);
    let v = kb.load(x, vec![if vector { c(1) } else { sym("s") }]);
    kb.store(out, v);
    kb.reduce(r);
    kb.build()
}

fn random(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen_range(-4.0..4.0)).collect()
}

/// Inputs of length `n` for a max/min: random, a NaN at the start, middle,
/// end (in the scalar tail), all -inf, all +inf, both infinities, and every
/// value -0 except one +0.
fn special_inputs(n: usize) -> Vec<Vec<f64>> {
    let mut out = vec![random(n, n as u64)];
    if n == 0 {
        return out;
    }
    for at in [0, n / 2, n - 1] {
        let mut x = random(n, 3 * n as u64 + at as u64);
        x[at] = f64::NAN;
        out.push(x);
    }
    out.push(vec![f64::NEG_INFINITY; n]);
    out.push(vec![f64::INFINITY; n]);
    let mut both = random(n, 5);
    both[n / 3] = f64::INFINITY;
    both[(2 * n) / 3] = f64::NEG_INFINITY;
    out.push(both);
    let mut zeros = vec![-0.0; n];
    zeros[n / 2] = 0.0;
    out.push(zeros);
    out
}

#[test]
fn max_min_of_one_row_match_the_interpreter() {
    for ty in FLOATS {
        for r in CHOOSERS {
            for vector in [true, false] {
                let k = choose_kernel(ty, r, vector);
                for n in LENGTHS {
                    for x in special_inputs(n as usize) {
                        check_all(&k, &[n, 1], &[Buffer::from_f64(ty, &x)], 0.0);
                    }
                }
            }
        }
    }
}

/// NaN propagates from every position of a row, on every path.
#[test]
fn nan_at_every_position_propagates() {
    for ty in FLOATS {
        for r in CHOOSERS {
            for vector in [true, false] {
                let k = choose_kernel(ty, r, vector);
                let n = 37;
                for at in 0..n {
                    let mut x = random(n, at as u64);
                    x[at] = f64::NAN;
                    check_all(&k, &[n as i64, 1], &[Buffer::from_f64(ty, &x)], 0.0);
                }
            }
        }
    }
}

/// The empty max is -inf and the empty min +inf, also per row.
#[test]
fn empty_rows_give_the_identity() {
    for ty in FLOATS {
        for r in CHOOSERS {
            let mut kb = KernelBuilder::new("rows", &["m", "n"], vec![sym("m"), sym("n")], 1);
            let x = kb.arg(ty, false);
            let out = kb.arg(ty, true);
            let v = kb.load(x, vec![sym("n"), c(1)]);
            kb.store(out, v);
            kb.reduce(r);
            let k = kb.build();
            for (isa, jit) in compiled(&k) {
                let mut bufs = with_outputs(&k, &[5, 0], &[Buffer::zeros(ty, 0)]);
                run_checked(jit.function(0), &k, &mut bufs, &[5, 0]).unwrap();
                let want = r.identity();
                assert!(
                    bufs[1].to_f64().iter().all(|v| *v == want),
                    "{isa} {ty} {r:?}: {:?}",
                    bufs[1].to_f64()
                );
            }
        }
    }
}

/// Row maxima of `exp(x) * y` and of `-x` (two stores), column minima read
/// through a transposed stride (scalar loop), and max/min over two reduced
/// axes with short and long rows.
#[test]
fn rows_columns_and_two_reduced_axes() {
    for ty in FLOATS {
        for r in CHOOSERS {
            let mut kb = KernelBuilder::new("rows2", &["m", "n"], vec![sym("m"), sym("n")], 1);
            let (x, y) = (kb.arg(ty, false), kb.arg(ty, false));
            let (o1, o2) = (kb.arg(ty, true), kb.arg(ty, true));
            let a = kb.load(x, vec![sym("n"), c(1)]);
            let b = kb.load(y, vec![sym("n"), c(1)]);
            let e = kb.unary(UnaryOp::Exp, a);
            let p = kb.binary(BinaryOp::Mul, e, b);
            let na = kb.unary(UnaryOp::Neg, a);
            kb.store(o1, p);
            kb.store(o2, na);
            kb.reduce(r);
            let rows = kb.build();

            let mut kb = KernelBuilder::new("cols", &["m", "n"], vec![sym("n"), sym("m")], 1);
            let x = kb.arg(ty, false);
            let out = kb.arg(ty, true);
            let v = kb.load(x, vec![c(1), sym("n")]);
            kb.store(out, v);
            kb.reduce(r);
            let cols = kb.build();

            let mut kb = KernelBuilder::new("both", &["m", "n"], vec![sym("m"), sym("n")], 2);
            let x = kb.arg(ty, false);
            let out = kb.arg(ty, true);
            let v = kb.load(x, vec![sym("n"), c(1)]);
            kb.store(out, v);
            kb.reduce(r);
            let both = kb.build();

            for (m, n) in [
                (1, 1),
                (3, 5),
                (4, 17),
                (17, 3),
                (2, 1029),
                (300, 7),
                (0, 4),
                (4, 0),
            ] {
                for k in [&rows, &cols, &both] {
                    for s in 0..2u64 {
                        let mut inputs = random_inputs(k, &[m, n], 11 + s, -3.0, 3.0);
                        if s == 1 && m * n > 0 {
                            // A NaN in the last row's middle, an infinity in the first.
                            let len = inputs[0].len();
                            inputs[0].set(len - 1 - (n as usize) / 2, f64::NAN);
                            inputs[0].set(0, f64::INFINITY);
                        }
                        check_all(k, &[m, n], &inputs, 4.0 * tol(ty));
                    }
                }
            }
        }
    }
}

/// Half-precision storage: f16 and bf16 inputs reduced in f32 into f16,
/// bf16 and f32 outputs.
#[test]
fn max_min_with_half_storage() {
    for (input, output) in [
        (DType::F16, DType::F16),
        (DType::BF16, DType::BF16),
        (DType::F16, DType::F32),
        (DType::F32, DType::BF16),
    ] {
        for r in CHOOSERS {
            let mut kb = KernelBuilder::new("half", &["n"], vec![sym("n")], 1);
            let x = kb.arg(input, false);
            let out = kb.arg(output, true);
            let v = kb.load(x, vec![c(1)]);
            kb.store(out, v);
            kb.reduce(r);
            let k = kb.build();
            for n in LENGTHS {
                for x in special_inputs(n as usize) {
                    check_all(&k, &[n], &[Buffer::from_f64(input, &x)], 0.0);
                }
            }
        }
    }
}

/// `out[i, j] = i * 1000 + j + x[i, j] / (m·n)` and `y = m` over `[m, n]`,
/// contiguous (vector loop) and strided (scalar loop), f32 and f64.
#[test]
fn index_and_size_in_maps() {
    for ty in FLOATS {
        for strided in [false, true] {
            let mut kb = KernelBuilder::new("iota", &["m", "n", "s"], vec![sym("m"), sym("n")], 0);
            let x = kb.arg(ty, false);
            let (o1, o2) = (kb.arg(ty, true), kb.arg(ty, true));
            let inner = if strided { sym("s") } else { c(1) };
            let a = kb.load(x, vec![sym("n"), inner]);
            let i = kb.index(ty, 0);
            let j = kb.index(ty, 1);
            let thousand = kb.konst(ty, 1000.0);
            let mn = kb.size(
                ty,
                Size {
                    factor: 1,
                    syms: vec!["m".into(), "n".into()],
                },
            );
            let m = kb.size(ty, sym("m"));
            let i1000 = kb.binary(BinaryOp::Mul, i, thousand);
            let ij = kb.binary(BinaryOp::Add, i1000, j);
            let q = kb.binary(BinaryOp::Div, a, mn);
            let y = kb.binary(BinaryOp::Add, ij, q);
            kb.store(o1, y);
            kb.store(o2, m);
            let k = kb.build();
            for (m, n) in [
                (1, 1),
                (1, 5),
                (3, 4),
                (2, 17),
                (5, 1001),
                (0, 3),
                (3, 0),
                (1100, 3),
            ] {
                let s = if strided { 1 } else { 0 };
                check_all(
                    &k,
                    &[m, n, s],
                    &random_inputs(&k, &[m, n, s], 9, -1.0, 1.0),
                    0.0,
                );
            }
        }
    }
}

/// The last column holding a value above 0.5 per row (a max of selected
/// indices; -1 when none), in the unrolled vector reduction, and the sum
/// of the indices over two axes (exact in f64).
#[test]
fn index_in_reductions() {
    for ty in FLOATS {
        let mut kb = KernelBuilder::new("argmax", &["m", "n"], vec![sym("m"), sym("n")], 1);
        let x = kb.arg(ty, false);
        let out = kb.arg(ty, true);
        let a = kb.load(x, vec![sym("n"), c(1)]);
        let half = kb.konst(ty, 0.5);
        let none = kb.konst(ty, -1.0);
        let j = kb.index(ty, 1);
        let p = kb.cmp(CmpOp::Gt, a, half);
        let v = kb.select(p, j, none);
        kb.store(out, v);
        kb.reduce(Reduce::Max);
        let k = kb.build();
        for (m, n) in [(1, 1), (3, 5), (4, 16), (4, 17), (2, 1029), (5, 4099)] {
            check_all(&k, &[m, n], &random_inputs(&k, &[m, n], 5, 0.0, 1.0), 0.0);
        }
    }
    let mut kb = KernelBuilder::new("index_sum", &["m", "n"], vec![sym("m"), sym("n")], 2);
    let out = kb.arg(DType::F64, true);
    let i = kb.index(DType::F64, 0);
    let j = kb.index(DType::F64, 1);
    let big = kb.konst(DType::F64, 4096.0);
    let ib = kb.binary(BinaryOp::Mul, i, big);
    let v = kb.binary(BinaryOp::Add, ib, j);
    kb.store(out, v);
    let k = kb.build();
    for (m, n) in [(1, 1), (3, 5), (17, 1001), (1000, 3)] {
        check_all(&k, &[m, n], &[], 0.0);
    }
}

/// f32 coordinates above 2^24 are rounded like the interpreter rounds them
/// (once, from the exact integer), in the vector loop (lane offsets) and on
/// an outer axis (the loop counter).
#[test]
fn f32_index_rounds_once_above_2_pow_24() {
    let n = (1usize << 24) + 1001;
    let mut kb = KernelBuilder::new("iota_big", &["n"], vec![sym("n")], 0);
    let out = kb.arg(DType::F32, true);
    let j = kb.index(DType::F32, 0);
    kb.store(out, j);
    let inner = kb.build();
    let mut kb = KernelBuilder::new("iota_big_rows", &["n"], vec![sym("n"), c(1)], 0);
    let out = kb.arg(DType::F32, true);
    let i = kb.index(DType::F32, 0);
    kb.store(out, i);
    let outer = kb.build();
    for k in [&inner, &outer] {
        for (isa, jit) in compiled(k) {
            let mut bufs = with_outputs(k, &[n as i64], &[]);
            run_checked(jit.function(0), k, &mut bufs, &[n as i64]).unwrap();
            let Buffer::F32(v) = &bufs[0] else { panic!() };
            if let Some(j) = (0..n).find(|&j| v[j] != j as f32) {
                panic!(
                    "{isa} {}: element {j} is {}, expected {}",
                    k.name, v[j], j as f32
                );
            }
        }
    }
}

/// The same in the unrolled vector reduction, whose rows start at
/// multiples of 16 (exact in f32 up to 2^28): past 2^28 the count of
/// coordinates rounding to one f32 value must be that of correct rounding
/// (converting the row start first and adding lane offsets is not). No
/// memory is read; 2^28 + 2^20 iterations per ISA.
#[test]
fn f32_index_in_a_reduction_rounds_once_above_2_pow_28() {
    let n = (1i64 << 28) + (1 << 20);
    let target = ((1i64 << 28) + (1 << 19) + 5) as f32;
    let mut kb = KernelBuilder::new("count_iota", &["n"], vec![sym("n")], 1);
    let out = kb.arg(DType::F32, true);
    let j = kb.index(DType::F32, 0);
    let t = kb.konst(DType::F32, target as f64);
    let (one, zero) = (kb.konst(DType::F32, 1.0), kb.konst(DType::F32, 0.0));
    let hit = kb.cmp(CmpOp::Eq, j, t);
    let v = kb.select(hit, one, zero);
    kb.store(out, v);
    let k = kb.build();
    let around = target as i64;
    let want = (around - 64..around + 64)
        .filter(|j| *j as f32 == target)
        .count() as f64;
    assert!(want >= 16.0, "a target {target} that rounds many integers");
    for (isa, jit) in compiled(&k) {
        let mut bufs = with_outputs(&k, &[n], &[]);
        run_checked(jit.function(0), &k, &mut bufs, &[n]).unwrap();
        assert_eq!(bufs[0].get(0), want, "{isa}");
    }
}

/// A size alone (rank 0), sizes past 2^24 (rounded once to f32) and past
/// 2^53, and `mean = sum(x / n)`.
#[test]
fn size_values() {
    for ty in FLOATS {
        let mut kb = KernelBuilder::new("rank0", &["n"], vec![], 0);
        let out = kb.arg(ty, true);
        let s = kb.size(ty, sym("n"));
        let five = kb.size(ty, c(5));
        let y = kb.binary(BinaryOp::Mul, s, five);
        kb.store(out, y);
        let k = kb.build();
        for n in [0, 1, 7, (1 << 24) + 1, (1 << 53) + 1, i64::MAX] {
            check_all(&k, &[n], &[], 0.0);
        }
        let mut kb = KernelBuilder::new("mean", &["n"], vec![sym("n")], 1);
        let x = kb.arg(ty, false);
        let out = kb.arg(ty, true);
        let a = kb.load(x, vec![c(1)]);
        let len = kb.size(ty, sym("n"));
        let q = kb.binary(BinaryOp::Div, a, len);
        kb.store(out, q);
        let k = kb.build();
        for n in [0, 1, 5, 1001] {
            check_all(
                &k,
                &[n],
                &random_inputs(&k, &[n], 3, -1.0, 1.0),
                4.0 * tol(ty),
            );
        }
    }
}
