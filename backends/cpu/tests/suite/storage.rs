//! Exact f16/bf16 conversions: every half bit pattern widens exactly, and
//! f32 values (halfway cases, subnormals, overflow, NaN) round to nearest even
//! exactly as the `half` crate does, in both the vector and the scalar loop.

use crate::common;
use common::*;
use oxla_core::{Buffer, DType};
use oxla_cpu::{run_checked, IsaLevel, JitModule};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// `out[i] = x[i]`, converting between the buffers' storage types.
fn copy_kernel(from: DType, to: DType) -> oxla_core::Kernel {
    let mut kb = KernelBuilder::new(&format!("copy_{from}_{to}"), &["n"], vec![sym("n")], 0);
    let (x, out) = (kb.arg(from, false), kb.arg(to, true));
    let v = kb.load(x, vec![c(1)]);
    kb.store(out, v);
    kb.build()
}

#[test]
fn every_half_pattern_widens_exactly() {
    let bits: Vec<u16> = (0..=u16::MAX).collect();
    let f16s = Buffer::F16(bits.iter().map(|b| half::f16::from_bits(*b)).collect());
    let bf16s = Buffer::BF16(bits.iter().map(|b| half::bf16::from_bits(*b)).collect());
    for input in [f16s, bf16s] {
        let k = copy_kernel(input.dtype(), DType::F32);
        check_with(&k, &[bits.len() as i64], &[input], 0.0);
    }
}

#[test]
fn f32_rounds_to_half_exactly() {
    let mut rng = StdRng::seed_from_u64(11);
    let mut vals: Vec<f32> = Vec::new();
    for b in 0..=u16::MAX {
        // Exact halves, the halfway points above them, and just off them.
        let h = half::f16::from_bits(b).to_f32().to_bits();
        let bh = (b as u32) << 16;
        for base in [h, bh] {
            for d in [0u32, 0x1000, 0x0fff, 0x1001, 0x8000, 0x7fff, 0x8001] {
                vals.push(f32::from_bits(base.wrapping_add(d)));
            }
        }
    }
    vals.extend((0..20000).map(|_| f32::from_bits(rng.gen())));
    vals.extend([
        65504.0,
        65519.99,
        65520.0,
        1e9,
        -1e9,
        5.96e-8,
        2.98e-8,
        2.99e-8,
        f32::NAN,
        f32::INFINITY,
    ]);
    // Compared with `half`'s f32 conversions, not the interpreter: its
    // `bf16::from_f64` drops the low 32 mantissa bits before rounding, so it
    // double-rounds values with sticky bits there.
    let n = vals.len() as i64;
    let want_f16: Vec<u16> = vals
        .iter()
        .map(|v| half::f16::from_f32(*v).to_bits())
        .collect();
    let want_bf16: Vec<u16> = vals
        .iter()
        .map(|v| half::bf16::from_f32(*v).to_bits())
        .collect();
    for level in [None, Some(IsaLevel::Baseline)] {
        for (to, want) in [(DType::F16, &want_f16), (DType::BF16, &want_bf16)] {
            let k = copy_kernel(DType::F32, to);
            let jit = match level {
                None => JitModule::compile(std::slice::from_ref(&k)),
                Some(l) => JitModule::compile_at(std::slice::from_ref(&k), l),
            }
            .unwrap();
            let mut bufs = vec![Buffer::F32(vals.clone()), Buffer::zeros(to, vals.len())];
            run_checked(jit.function(0), &k, &mut bufs, &[n]).unwrap();
            let got: Vec<u16> = match &bufs[1] {
                Buffer::F16(v) => v.iter().map(|h| h.to_bits()).collect(),
                Buffer::BF16(v) => v.iter().map(|h| h.to_bits()).collect(),
                _ => unreachable!(),
            };
            for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
                let nan_out = if to == DType::F16 {
                    g & 0x7c00 == 0x7c00 && g & 0x3ff != 0
                } else {
                    g & 0x7f80 == 0x7f80 && g & 0x7f != 0
                };
                if vals[i].is_nan() && nan_out {
                    continue; // any NaN payload will do
                }
                assert_eq!(
                    g,
                    w,
                    "{level:?} {to}: {:e} ({:#x}) -> {g:#x}, expected {w:#x}",
                    vals[i],
                    vals[i].to_bits()
                );
            }
        }
    }
}
