//! Rounding and sign kernels, bit for bit against Rust std (and the kernel
//! interpreter) at both ISA levels: every special value — ±0, ±inf, NaN,
//! halfway cases, the largest value below ½, values at and above 2^p where
//! the magic-number rounding stops applying — at every position of the
//! buffer, so each one goes through every vector lane and the scalar tail.

use crate::common;
use common::*;
use oxla_core::kernel::interp;
use oxla_core::ops::elementwise::{Rounding, UnaryOp};
use oxla_core::{Buffer, DType, Kernel};
use oxla_cpu::{run_checked, IsaLevel, JitModule};

fn ops() -> Vec<UnaryOp> {
    let mut ops: Vec<UnaryOp> = Rounding::ALL.into_iter().map(UnaryOp::Round).collect();
    ops.extend([UnaryOp::Sign, UnaryOp::Signum]);
    ops
}

/// What Rust (or, for `sign`, `lax.sign`'s definition) gives in f64.
fn std_f64(op: UnaryOp, x: f64) -> f64 {
    match op {
        UnaryOp::Round(Rounding::Floor) => x.floor(),
        UnaryOp::Round(Rounding::Ceil) => x.ceil(),
        UnaryOp::Round(Rounding::Trunc) => x.trunc(),
        UnaryOp::Round(Rounding::HalfAway) => x.round(),
        UnaryOp::Round(Rounding::HalfEven) => x.round_ties_even(),
        UnaryOp::Signum => x.signum(),
        UnaryOp::Sign if x.is_nan() || x == 0.0 => x,
        UnaryOp::Sign => x.signum(),
        _ => unreachable!(),
    }
}

/// The same in f32 arithmetic.
fn std_f32(op: UnaryOp, x: f32) -> f32 {
    match op {
        UnaryOp::Round(Rounding::Floor) => x.floor(),
        UnaryOp::Round(Rounding::Ceil) => x.ceil(),
        UnaryOp::Round(Rounding::Trunc) => x.trunc(),
        UnaryOp::Round(Rounding::HalfAway) => x.round(),
        UnaryOp::Round(Rounding::HalfEven) => x.round_ties_even(),
        UnaryOp::Signum => x.signum(),
        UnaryOp::Sign if x.is_nan() || x == 0.0 => x,
        UnaryOp::Sign => x.signum(),
        _ => unreachable!(),
    }
}

fn specials_f64() -> Vec<f64> {
    let p52 = 2f64.powi(52);
    let mut v = vec![
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.3,
        -0.3,
        0.7,
        -0.7,
        0.5f64.next_down(),
        -0.5f64.next_down(),
        1.0,
        -1.0,
        p52 - 0.5,
        -(p52 - 0.5),
        p52 - 1.5,
        p52,
        -p52,
        p52 + 1.0,
        2.0 * p52 + 2.0,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        -5e-324,
        5e-324,
        123456.5,
        -123456.5,
        -7.25,
    ];
    v.extend(v.clone().into_iter().map(|x| x * 0.75));
    v
}

fn specials_f32() -> Vec<f64> {
    let p23 = 2f32.powi(23);
    let mut v: Vec<f32> = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.3,
        -0.3,
        0.5f32.next_down(),
        -0.5f32.next_down(),
        p23 - 0.5,
        -(p23 - 0.5),
        p23 - 1.5,
        p23,
        -p23,
        p23 + 1.0,
        2.0 * p23 + 2.0,
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        -1e-45,
        1e-45,
        1234.5,
        -1234.5,
        -7.25,
    ];
    v.extend(v.clone().into_iter().map(|x| x * 0.75));
    v.into_iter().map(f64::from).collect()
}

fn unary_kernel(op: UnaryOp, ty: DType) -> Kernel {
    let mut kb = KernelBuilder::new(
        &format!("unary_{}_{ty}", op.name()),
        &["n"],
        vec![sym("n")],
        0,
    );
    let x = kb.arg(ty, false);
    let out = kb.arg(ty, true);
    let v = kb.load(x, vec![c(1)]);
    let r = kb.unary(op, v);
    kb.store(out, r);
    kb.build()
}

/// Equal bits, or both NaN.
fn same(got: u64, want: u64, ty: DType) -> bool {
    let nan = |b: u64| match ty {
        DType::F32 => f32::from_bits(b as u32).is_nan(),
        _ => f64::from_bits(b).is_nan(),
    };
    got == want || (nan(got) && nan(want))
}

#[test]
fn rounding_and_sign_are_exact_at_every_position() {
    for ty in [DType::F32, DType::F64] {
        let specials = if ty == DType::F32 {
            specials_f32()
        } else {
            specials_f64()
        };
        for op in ops() {
            let k = unary_kernel(op, ty);
            let jits = [
                (
                    "host",
                    JitModule::compile(std::slice::from_ref(&k)).unwrap(),
                ),
                (
                    "baseline",
                    JitModule::compile_at(std::slice::from_ref(&k), IsaLevel::Baseline).unwrap(),
                ),
            ];
            // Every rotation of the list: each value visits every lane of
            // the f32x4/f64x2 loop and the tail.
            for shift in 0..8 {
                let mut xs = specials.clone();
                xs.rotate_left(shift);
                let n = xs.len() - shift; // also varies the tail length
                let xs = &xs[..n];
                let input = Buffer::from_f64(ty, xs);
                let sizes = [n as i64];
                let mut want = with_outputs(&k, &sizes, std::slice::from_ref(&input));
                interp::run(&k, &mut want, &sizes).unwrap();
                for (isa, jit) in &jits {
                    let mut got = with_outputs(&k, &sizes, std::slice::from_ref(&input));
                    run_checked(jit.function(0), &k, &mut got, &sizes).unwrap();
                    for (j, &x) in xs.iter().enumerate() {
                        let reference = match ty {
                            DType::F32 => std_f32(op, x as f32).to_bits() as u64,
                            _ => std_f64(op, x).to_bits(),
                        };
                        let g = bits(&got[1], j);
                        assert!(
                            same(g, reference, ty),
                            "{isa} {ty} {}({x:e}) at {j} of {n}: got bits {g:#x}, want {reference:#x}",
                            op.name(),
                        );
                        assert!(
                            same(bits(&want[1], j), reference, ty),
                            "interpreter {ty} {}({x:e})",
                            op.name()
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn rounding_matches_std_on_random_values() {
    // Uniform bit patterns (every magnitude) and values with small
    // fractions near the halfway points.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for ty in [DType::F32, DType::F64] {
        let xs: Vec<f64> = (0..4001)
            .map(|i| {
                let r = next();
                match (i % 3, ty) {
                    (0, DType::F32) => f64::from(f32::from_bits(r as u32)),
                    (0, _) => f64::from_bits(r),
                    _ => ((r % 2001) as f64 - 1000.0) / 4.0 + (i % 2) as f64 * 1e-3,
                }
            })
            .collect();
        for op in ops() {
            let k = unary_kernel(op, ty);
            let input = Buffer::from_f64(ty, &xs);
            let sizes = [xs.len() as i64];
            for level in [IsaLevel::Baseline, IsaLevel::X86_64V3] {
                if level == IsaLevel::X86_64V3 && !oxla_cpu::host_supports_v3() {
                    continue;
                }
                let jit = JitModule::compile_at(std::slice::from_ref(&k), level).unwrap();
                let mut got = with_outputs(&k, &sizes, std::slice::from_ref(&input));
                run_checked(jit.function(0), &k, &mut got, &sizes).unwrap();
                for (j, &x) in xs.iter().enumerate() {
                    let reference = match ty {
                        DType::F32 => std_f32(op, x as f32).to_bits() as u64,
                        _ => std_f64(op, x).to_bits(),
                    };
                    assert!(
                        same(bits(&got[1], j), reference, ty),
                        "{level:?} {ty} {}({x:e})",
                        op.name()
                    );
                }
            }
        }
    }
}
