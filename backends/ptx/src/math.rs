//! Transcendental functions as straight-line PTX (no branches, so warps
//! never diverge), each returning the register holding the result.
//!
//! f32 `exp` uses the hardware `ex2.approx` after a range reduction (its
//! bound is relative, see [`exp_f32`]); f32 `log` is fdlibm's polynomial in
//! f32 with IEEE division and `fma` (`lg2.approx` is not accurate near 1);
//! f32 `tanh` is a Taylor polynomial below ½ and `exp_f32` above; f32
//! `sin`, `cos`, `expm1`, `erf` compute in f64 and round once. `f64` has no
//! hardware approximations, so it uses range reduction plus polynomials
//! evaluated with `fma` (accuracy: see the crate docs; `gpu_check` of
//! `oxla-cuda` measures every one on a device). `sin`/`cos` of both types
//! live in [`crate::trig`], with Rust models of every step: they are the
//! exception to "straight-line", with a branch for huge arguments.
//! NaN and infinities follow Rust's `f64` functions.

use crate::func::{f32_imm, f64_imm, Class, Func};
use crate::trig;

// --- f32 -------------------------------------------------------------------

/// `exp(x)`: `x = n·ln2 + r` (Cody–Waite, |r| ≤ ln2/2), `ex2.approx(r·log2e)`
/// then scaling by `2^n` in two halves so results reaching the subnormal
/// range and overflow to infinity are both right.
///
/// `ex2.approx` is safe here, unlike `lg2.approx` for `log`: its error bound
/// is relative (~2 ulp, PTX ISA manual), its argument is in [-½, ½] and its
/// result in [√½, √2], never near zero or subnormal (so `.ftz` changes
/// nothing: a flushed subnormal argument gives 1, the rounded 2^t anyway),
/// and the exact scaling keeps the relative error. Measured on an H200:
/// 2 ulp over 2²² inputs (`gpu_check`).
pub(crate) fn exp_f32(f: &mut Func, x: &str) -> String {
    // Clamp without losing NaN: beyond these exp is inf / 0 anyway.
    let xc = clamp(f, Class::F32, "f32", x, f32_imm(-104.0), f32_imm(89.0));
    let t = f.reg(Class::F32);
    let nf = f.reg(Class::F32);
    let r = f.reg(Class::F32);
    f.ins(format!(
        "mul.rn.f32 {t}, {xc}, {}",
        f32_imm(std::f32::consts::LOG2_E)
    ));
    f.ins(format!("cvt.rni.f32.f32 {nf}, {t}"));
    f.ins(format!(
        "fma.rn.f32 {r}, {nf}, {}, {xc}",
        f32_imm(-f32::from_bits(0x3F31_7200))
    ));
    f.ins(format!(
        "fma.rn.f32 {r}, {nf}, {}, {r}",
        f32_imm(-f32::from_bits(0x35BF_BE8E))
    ));
    let p = f.reg(Class::F32);
    f.ins(format!(
        "mul.rn.f32 {t}, {r}, {}",
        f32_imm(std::f32::consts::LOG2_E)
    ));
    f.ins(format!("ex2.approx.ftz.f32 {p}, {t}"));
    let n = f.reg(Class::B32);
    f.ins(format!("cvt.rzi.s32.f32 {n}, {nf}"));
    scale_pow2(f, Pow2::F32, &p, &n)
}

/// The constants of the f32 `log`, in one place: its emitter (`log_f32` in
/// `math.rs`) writes them as immediates and the host model of the emitted
/// sequence (`tests/suite/math_model.rs`) reads them from here, so the two
/// cannot drift apart. They are the CPU backend's (`oxla-cpu`'s
/// `math::log` for f32), so both backends compute the same value.
pub mod log_f32_consts {
    /// `ln 2 = LN2_HI + LN2_LO`; `LN2_HI` = 0.693359375 = 710/1024 has 10
    /// significant bits, so `e·LN2_HI` is exact for every exponent `e`
    /// (|e| ≤ 150).
    pub const LN2_HI: f32 = 710.0 / 1024.0;
    /// The rest of ln 2, rounded to f32.
    pub const LN2_LO: f32 = -2.121_944_4e-4_f64 as f32;
    /// `2/3, 2/5, 2/7, 2/9`: the series of `(2·atanh(s) − 2s)/s³` in `z = s²`.
    pub const SERIES: [f32; 4] = [
        (2.0 / 3.0_f64) as f32,
        (2.0 / 5.0_f64) as f32,
        (2.0 / 7.0_f64) as f32,
        (2.0 / 9.0_f64) as f32,
    ];
    /// Bits of the f32 nearest √½ (just below it): mantissas are reduced
    /// into `[SQRT_HALF, 2·SQRT_HALF)` ≈ [√½, √2).
    pub const SQRT_HALF_BITS: u32 = 0x3f35_04f3;
    /// Bits of 1.0.
    pub const ONE_BITS: u32 = 0x3f80_0000;
    /// Subnormal inputs are multiplied by 2²³ first (exact) …
    pub const SUBNORMAL_SCALE: f32 = 8_388_608.0;
    /// … and their exponent lowered by 23.
    pub const SUBNORMAL_SHIFT: i32 = 23;
}

/// `log(x)`, all in f32 with IEEE `div.rn`/`fma.rn` (no hardware
/// approximation: `lg2.approx` has only an absolute error bound near 1, and
/// measured 24·10⁶ ulp at x = 0.99999994 on an H200). fdlibm's method, the
/// same steps as the CPU backend's f32 `log`: `x = m·2^e` with m in
/// [√½, √2) (subnormals scaled by 2²³ first), `f = m − 1` (exact),
/// `s = f/(2+f)`, `ln m = f − (f²/2 − s·(f²/2 + R(s²)))` with
/// `R = z·(2/3 + z·(2/5 + z·(2/7 + z·2/9)))`, then
/// `e·ln2_hi + (ln m + e·ln2_lo)`. The rounding of `s` only touches the
/// small correction terms, so the relative error stays ≤ 1 ulp near 1 (the
/// host model in `tests/suite/math_model.rs` performs these exact
/// operations; the CPU measures 0.854 ulp over all 2³² inputs). Specials by
/// selects: +inf → +inf, ±0 → -inf, negative → NaN, NaN → itself.
pub(crate) fn log_f32(f: &mut Func, x: &str) -> String {
    use log_f32_consts as c;
    // Subnormals: scale into the normal range, lower the exponent to match.
    let tiny = f.reg(Class::Pred);
    let xs = f.reg(Class::F32);
    let eadj = f.reg(Class::B32);
    f.ins(format!(
        "setp.lt.f32 {tiny}, {x}, {}",
        f32_imm(f32::MIN_POSITIVE)
    ));
    f.ins(format!(
        "mul.rn.f32 {xs}, {x}, {}",
        f32_imm(c::SUBNORMAL_SCALE)
    ));
    f.ins(format!("selp.f32 {xs}, {xs}, {x}, {tiny}"));
    f.ins(format!(
        "selp.s32 {eadj}, {}, -127, {tiny}",
        -127 - c::SUBNORMAL_SHIFT
    ));
    // Offset the bits so that the exponent field rounds m into [√½, √2).
    let ix = f.reg(Class::B32);
    let e = f.reg(Class::B32);
    let mb = f.reg(Class::B32);
    f.ins(format!("mov.b32 {ix}, {xs}"));
    f.ins(format!(
        "add.s32 {ix}, {ix}, {}",
        c::ONE_BITS - c::SQRT_HALF_BITS
    ));
    f.ins(format!("shr.u32 {e}, {ix}, 23"));
    f.ins(format!("add.s32 {e}, {e}, {eadj}"));
    f.ins(format!("and.b32 {mb}, {ix}, {}", (1u32 << 23) - 1));
    f.ins(format!("add.s32 {mb}, {mb}, {}", c::SQRT_HALF_BITS));
    let m = f.reg(Class::F32);
    let ef = f.reg(Class::F32);
    f.ins(format!("mov.b32 {m}, {mb}"));
    f.ins(format!("cvt.rn.f32.s32 {ef}, {e}"));
    // f = m − 1 (exact), s = f/(2+f), z = s².
    let fm = f.reg(Class::F32);
    let den = f.reg(Class::F32);
    let s = f.reg(Class::F32);
    let z = f.reg(Class::F32);
    f.ins(format!("sub.rn.f32 {fm}, {m}, {}", f32_imm(1.0)));
    f.ins(format!("add.rn.f32 {den}, {fm}, {}", f32_imm(2.0)));
    f.ins(format!("div.rn.f32 {s}, {fm}, {den}"));
    f.ins(format!("mul.rn.f32 {z}, {s}, {s}"));
    let series: Vec<f64> = c::SERIES.iter().map(|&k| f64::from(k)).collect();
    let p = horner(f, Class::F32, "f32", &z, &series, |k| f32_imm(k as f32));
    // ln m = f − (hfsq − s·(hfsq + R) − e·ln2_lo), hfsq = f·f/2.
    let r = f.reg(Class::F32);
    let hf = f.reg(Class::F32);
    let hfsq = f.reg(Class::F32);
    let hr = f.reg(Class::F32);
    let lo = f.reg(Class::F32);
    let t = f.reg(Class::F32);
    let corr = f.reg(Class::F32);
    let lm = f.reg(Class::F32);
    let y = f.reg(Class::F32);
    f.ins(format!("mul.rn.f32 {r}, {z}, {p}"));
    f.ins(format!("mul.rn.f32 {hf}, {fm}, {}", f32_imm(0.5)));
    f.ins(format!("mul.rn.f32 {hfsq}, {hf}, {fm}"));
    f.ins(format!("add.rn.f32 {hr}, {hfsq}, {r}"));
    f.ins(format!("mul.rn.f32 {lo}, {ef}, {}", f32_imm(c::LN2_LO)));
    f.ins(format!("fma.rn.f32 {t}, {s}, {hr}, {lo}"));
    f.ins(format!("sub.rn.f32 {corr}, {hfsq}, {t}"));
    f.ins(format!("sub.rn.f32 {lm}, {fm}, {corr}"));
    f.ins(format!(
        "fma.rn.f32 {y}, {ef}, {}, {lm}",
        f32_imm(c::LN2_HI)
    ));
    // Special cases, last one wins: +inf, ±0 → -inf, negative → NaN, NaN.
    let q = f.reg(Class::Pred);
    f.ins(format!("setp.eq.f32 {q}, {x}, {}", f32_imm(f32::INFINITY)));
    f.ins(format!("selp.f32 {y}, {x}, {y}, {q}"));
    f.ins(format!("setp.eq.f32 {q}, {x}, {}", f32_imm(0.0)));
    f.ins(format!(
        "selp.f32 {y}, {}, {y}, {q}",
        f32_imm(f32::NEG_INFINITY)
    ));
    f.ins(format!("setp.lt.f32 {q}, {x}, {}", f32_imm(0.0)));
    f.ins(format!("selp.f32 {y}, {}, {y}, {q}", f32_imm(f32::NAN)));
    f.ins(format!("setp.nan.f32 {q}, {x}, {x}"));
    f.ins(format!("selp.f32 {y}, {x}, {y}, {q}"));
    y
}

/// `sin`/`cos` in f64 (see [`crate::trig`]), rounded once to f32: the
/// f64 result is within ~1 f64 ulp, so the f32 one is the correctly rounded
/// value except within ~2⁻²⁹ ulp of a rounding boundary.
fn trig_f32(f: &mut Func, x: &str, shift: u32) -> String {
    let xd = f.reg(Class::F64);
    f.ins(format!("cvt.f64.f32 {xd}, {x}"));
    let yd = trig::sincos_f64(f, &xd, shift);
    let y = f.reg(Class::F32);
    f.ins(format!("cvt.rn.f32.f64 {y}, {yd}"));
    y
}

pub(crate) fn sin_f32(f: &mut Func, x: &str) -> String {
    trig_f32(f, x, 0)
}

pub(crate) fn cos_f32(f: &mut Func, x: &str) -> String {
    trig_f32(f, x, 1)
}

/// `tanh`: Taylor series for |x| < 0.5 (relative error < 1e-8 there), else
/// `1 - 2/(exp(2|x|)+1)` with the sign restored. (`tanh.approx.f32` is only
/// good to ~5e-4, too coarse.)
pub(crate) fn tanh_f32(f: &mut Func, x: &str) -> String {
    const TAYLOR: [f64; 8] = [
        1.0,
        -1.0 / 3.0,
        2.0 / 15.0,
        -17.0 / 315.0,
        62.0 / 2835.0,
        -1382.0 / 155925.0,
        21844.0 / 6081075.0,
        -929569.0 / 638512875.0,
    ];
    let a = f.reg(Class::F32);
    f.ins(format!("abs.f32 {a}, {x}"));
    // Small: x·P(x²).
    let s = f.reg(Class::F32);
    f.ins(format!("mul.rn.f32 {s}, {x}, {x}"));
    let p = horner(f, Class::F32, "f32", &s, &TAYLOR, |c| f32_imm(c as f32));
    let small = f.reg(Class::F32);
    f.ins(format!("mul.rn.f32 {small}, {p}, {x}"));
    // Large: 1 - 2/(e^{2|x|}+1), exact 1 once e^{2|x|} overflows.
    let a2 = f.reg(Class::F32);
    f.ins(format!("add.rn.f32 {a2}, {a}, {a}"));
    let e = exp_f32(f, &a2);
    let large = f.reg(Class::F32);
    f.ins(format!("add.rn.f32 {large}, {e}, {}", f32_imm(1.0)));
    f.ins(format!("div.rn.f32 {large}, {}, {large}", f32_imm(2.0)));
    f.ins(format!("sub.rn.f32 {large}, {}, {large}", f32_imm(1.0)));
    f.ins(format!("copysign.f32 {large}, {x}, {large}"));
    let is_small = f.reg(Class::Pred);
    let y = f.reg(Class::F32);
    f.ins(format!("setp.lt.f32 {is_small}, {a}, {}", f32_imm(0.5)));
    f.ins(format!("selp.f32 {y}, {small}, {large}, {is_small}"));
    y
}

// --- f64 -------------------------------------------------------------------

pub(crate) const LN2_HI: u64 = 0x3FE6_2E42_FEE0_0000;
pub(crate) const LN2_LO: u64 = 0x3DEA_39EF_3579_3C76;

fn d(bits: u64) -> String {
    f64_imm(f64::from_bits(bits))
}

/// 1/k! for k = 0..=n.
fn inv_factorials(n: usize) -> Vec<f64> {
    let mut out = vec![1.0];
    for k in 1..=n {
        out.push(out[k - 1] / k as f64);
    }
    out
}

/// Reduce `x = n·ln2 + r`, |r| ≤ ln2/2; returns (`n` as s32, `r`,
/// `expm1(r)` by its Taylor series to r¹³ (truncation < 1e-17)).
fn expm1_reduced_f64(f: &mut Func, x: &str) -> (String, String) {
    let nf = f.reg(Class::F64);
    let r = f.reg(Class::F64);
    f.ins(format!(
        "mul.rn.f64 {nf}, {x}, {}",
        f64_imm(std::f64::consts::LOG2_E)
    ));
    f.ins(format!("cvt.rni.f64.f64 {nf}, {nf}"));
    f.ins(format!(
        "fma.rn.f64 {r}, {nf}, {}, {x}",
        f64_imm(-f64::from_bits(LN2_HI))
    ));
    f.ins(format!(
        "fma.rn.f64 {r}, {nf}, {}, {r}",
        f64_imm(-f64::from_bits(LN2_LO))
    ));
    // expm1(r) = r·(1 + r/2! + r²/3! + …)
    let coeffs: Vec<f64> = inv_factorials(13)[1..].to_vec();
    let p = horner(f, Class::F64, "f64", &r, &coeffs, f64_imm);
    let q = f.reg(Class::F64);
    f.ins(format!("mul.rn.f64 {q}, {p}, {r}"));
    let n = f.reg(Class::B32);
    f.ins(format!("cvt.rzi.s32.f64 {n}, {nf}"));
    (n, q)
}

/// `exp(x) = 2^n·(1 + expm1(r))`; relative error ~2 ulp.
pub(crate) fn exp_f64(f: &mut Func, x: &str) -> String {
    let xc = clamp(f, Class::F64, "f64", x, f64_imm(-746.0), f64_imm(710.0));
    let (n, q) = expm1_reduced_f64(f, &xc);
    let p = f.reg(Class::F64);
    f.ins(format!("add.rn.f64 {p}, {q}, {}", f64_imm(1.0)));
    scale_pow2(f, Pow2::F64, &p, &n)
}

/// `expm1(x)`, as the CPU's (`oxla-cpu`'s `math::expm1`): the argument
/// clamped to [-45, 40] (NaN kept), `2^n·expm1(r) + (2^n − 1)` with
/// n in [-65, 58] (2^n − 1 exact for n ≥ -53, else it rounds to -1 as the
/// result does), `exp(x)` above 40 (where e^x − 1 rounds to e^x) and `x` itself for |x| < 2⁻⁵⁴ (which
/// keeps -0.0 and subnormals).
pub(crate) fn expm1_f64(f: &mut Func, x: &str) -> String {
    let xc = clamp(f, Class::F64, "f64", x, f64_imm(-45.0), f64_imm(40.0));
    let (n, q) = expm1_reduced_f64(f, &xc);
    let sbits = f.reg(Class::B64);
    f.ins(format!("cvt.s64.s32 {sbits}, {n}"));
    f.ins(format!("add.s64 {sbits}, {sbits}, 1023"));
    f.ins(format!("shl.b64 {sbits}, {sbits}, 52"));
    let sc = f.reg(Class::F64);
    let sm1 = f.reg(Class::F64);
    let y = f.reg(Class::F64);
    f.ins(format!("mov.b64 {sc}, {sbits}"));
    f.ins(format!("sub.rn.f64 {sm1}, {sc}, {}", f64_imm(1.0)));
    f.ins(format!("fma.rn.f64 {y}, {sc}, {q}, {sm1}"));
    let e = exp_f64(f, x);
    let p = f.reg(Class::Pred);
    f.ins(format!("setp.gt.f64 {p}, {x}, {}", f64_imm(40.0)));
    f.ins(format!("selp.f64 {y}, {e}, {y}, {p}"));
    let a = f.reg(Class::F64);
    f.ins(format!("abs.f64 {a}, {x}"));
    f.ins(format!("setp.lt.f64 {p}, {a}, {}", f64_imm(2f64.powi(-54))));
    f.ins(format!("selp.f64 {y}, {x}, {y}, {p}"));
    y
}

/// `expm1` of an f32, computed in f64 and rounded once.
pub(crate) fn expm1_f32(f: &mut Func, x: &str) -> String {
    let xd = f.reg(Class::F64);
    f.ins(format!("cvt.f64.f32 {xd}, {x}"));
    let yd = expm1_f64(f, &xd);
    let y = f.reg(Class::F32);
    f.ins(format!("cvt.rn.f32.f64 {y}, {yd}"));
    y
}

/// `erf(x)` as the CPU's (`oxla-cpu`'s `math::erf`): fdlibm's ranges and
/// coefficients (`oxla_core::ops::erf`), all evaluated, one selected.
pub(crate) fn erf_f64(f: &mut Func, x: &str) -> String {
    use oxla_core::ops::erf as c;
    let poly = |f: &mut Func, v: &str, k: &[f64]| horner(f, Class::F64, "f64", v, k, f64_imm);
    let a = f.reg(Class::F64);
    f.ins(format!("abs.f64 {a}, {x}"));
    // |x| < 0.84375
    let z = f.reg(Class::F64);
    f.ins(format!("mul.rn.f64 {z}, {x}, {x}"));
    let p = poly(f, &z, &c::PP);
    let q = poly(f, &z, &c::QQ);
    let small = f.reg(Class::F64);
    f.ins(format!("div.rn.f64 {small}, {p}, {q}"));
    f.ins(format!("fma.rn.f64 {small}, {x}, {small}, {x}"));
    // |x| < 1.25
    let s = f.reg(Class::F64);
    f.ins(format!("sub.rn.f64 {s}, {a}, {}", f64_imm(1.0)));
    let p = poly(f, &s, &c::PA);
    let q = poly(f, &s, &c::QA);
    let mid = f.reg(Class::F64);
    f.ins(format!("div.rn.f64 {mid}, {p}, {q}"));
    f.ins(format!("add.rn.f64 {mid}, {mid}, {}", f64_imm(c::ERX)));
    // |x| < 6
    let s = f.reg(Class::F64);
    f.ins(format!("mul.rn.f64 {s}, {a}, {a}"));
    f.ins(format!("div.rn.f64 {s}, {}, {s}", f64_imm(1.0)));
    let near = f.reg(Class::Pred);
    f.ins(format!("setp.lt.f64 {near}, {a}, {}", d(c::NEAR_FAR)));
    let (ra, rb) = (poly(f, &s, &c::RA), poly(f, &s, &c::RB));
    let (sa, sb) = (poly(f, &s, &c::SA), poly(f, &s, &c::SB));
    let (r, q) = (f.reg(Class::F64), f.reg(Class::F64));
    f.ins(format!("selp.f64 {r}, {ra}, {rb}, {near}"));
    f.ins(format!("selp.f64 {q}, {sa}, {sb}, {near}"));
    let bits = f.reg(Class::B64);
    f.ins(format!("mov.b64 {bits}, {a}"));
    f.ins(format!(
        "and.b64 {bits}, {bits}, {}",
        0xffff_ffff_0000_0000_u64
    ));
    let zh = f.reg(Class::F64);
    f.ins(format!("mov.b64 {zh}, {bits}"));
    let t = f.reg(Class::F64);
    f.ins(format!("mul.rn.f64 {t}, {zh}, {zh}"));
    f.ins(format!("add.rn.f64 {t}, {t}, {}", f64_imm(0.5625)));
    f.ins(format!("neg.f64 {t}, {t}"));
    let e1 = exp_f64(f, &t);
    let (u, v, w) = (f.reg(Class::F64), f.reg(Class::F64), f.reg(Class::F64));
    f.ins(format!("sub.rn.f64 {u}, {zh}, {a}"));
    f.ins(format!("add.rn.f64 {v}, {zh}, {a}"));
    f.ins(format!("mul.rn.f64 {u}, {u}, {v}"));
    f.ins(format!("div.rn.f64 {w}, {r}, {q}"));
    f.ins(format!("add.rn.f64 {u}, {u}, {w}"));
    let e2 = exp_f64(f, &u);
    let far = f.reg(Class::F64);
    f.ins(format!("mul.rn.f64 {far}, {e1}, {e2}"));
    f.ins(format!("div.rn.f64 {far}, {far}, {a}"));
    f.ins(format!("sub.rn.f64 {far}, {}, {far}", f64_imm(1.0)));
    // Pick the range.
    let p = f.reg(Class::Pred);
    let y = f.reg(Class::F64);
    f.ins(format!("setp.lt.f64 {p}, {a}, {}", f64_imm(6.0)));
    f.ins(format!("selp.f64 {y}, {far}, {}, {p}", f64_imm(1.0)));
    f.ins(format!("setp.lt.f64 {p}, {a}, {}", f64_imm(1.25)));
    f.ins(format!("selp.f64 {y}, {mid}, {y}, {p}"));
    f.ins(format!("copysign.f64 {y}, {x}, {y}"));
    f.ins(format!("setp.lt.f64 {p}, {a}, {}", f64_imm(0.84375)));
    f.ins(format!("selp.f64 {y}, {small}, {y}, {p}"));
    f.ins(format!("setp.nan.f64 {p}, {x}, {x}"));
    f.ins(format!("selp.f64 {y}, {x}, {y}, {p}"));
    y
}

/// `erf` of an f32, computed in f64 and rounded once.
pub(crate) fn erf_f32(f: &mut Func, x: &str) -> String {
    let xd = f.reg(Class::F64);
    f.ins(format!("cvt.f64.f32 {xd}, {x}"));
    let yd = erf_f64(f, &xd);
    let y = f.reg(Class::F32);
    f.ins(format!("cvt.rn.f32.f64 {y}, {yd}"));
    y
}

/// `log(x)`: `x = m·2^e` with m in [√½, √2), then
/// `log m = 2·atanh((m-1)/(m+1))` by its series (f² ≤ 0.03, 12 terms).
pub(crate) fn log_f64(f: &mut Func, x: &str) -> String {
    // Scale subnormals into the normal range first.
    let tiny = f.reg(Class::Pred);
    let xs = f.reg(Class::F64);
    let eadj = f.reg(Class::B64);
    f.ins(format!(
        "setp.lt.f64 {tiny}, {x}, {}",
        f64_imm(f64::MIN_POSITIVE)
    ));
    f.ins(format!("mul.rn.f64 {xs}, {x}, {}", f64_imm(2f64.powi(54))));
    f.ins(format!("selp.f64 {xs}, {xs}, {x}, {tiny}"));
    f.ins(format!("selp.s64 {eadj}, -54, 0, {tiny}"));
    let bits = f.reg(Class::B64);
    let e = f.reg(Class::B64);
    f.ins(format!("mov.b64 {bits}, {xs}"));
    f.ins(format!("shr.u64 {e}, {bits}, 52"));
    f.ins(format!("and.b64 {e}, {e}, 2047"));
    f.ins(format!("add.s64 {e}, {e}, -1023"));
    f.ins(format!("add.s64 {e}, {e}, {eadj}"));
    f.ins(format!("and.b64 {bits}, {bits}, 4503599627370495"));
    f.ins(format!("or.b64 {bits}, {bits}, 4607182418800017408"));
    let m = f.reg(Class::F64);
    f.ins(format!("mov.b64 {m}, {bits}"));
    // m in [1, 2): halve it above √2 so |m-1| stays small.
    let big = f.reg(Class::Pred);
    let mh = f.reg(Class::F64);
    let e1 = f.reg(Class::B64);
    f.ins(format!(
        "setp.gt.f64 {big}, {m}, {}",
        f64_imm(std::f64::consts::SQRT_2)
    ));
    f.ins(format!("mul.rn.f64 {mh}, {m}, {}", f64_imm(0.5)));
    f.ins(format!("selp.f64 {m}, {mh}, {m}, {big}"));
    f.ins(format!("add.s64 {e1}, {e}, 1"));
    f.ins(format!("selp.b64 {e}, {e1}, {e}, {big}"));
    let ef = f.reg(Class::F64);
    f.ins(format!("cvt.rn.f64.s64 {ef}, {e}"));
    // z = (m-1)/(m+1); log m = z·(2 + s·(2/3 + s·(2/5 + …))), s = z².
    let num = f.reg(Class::F64);
    let den = f.reg(Class::F64);
    let z = f.reg(Class::F64);
    let s = f.reg(Class::F64);
    f.ins(format!("sub.rn.f64 {num}, {m}, {}", f64_imm(1.0)));
    f.ins(format!("add.rn.f64 {den}, {m}, {}", f64_imm(1.0)));
    f.ins(format!("div.rn.f64 {z}, {num}, {den}"));
    f.ins(format!("mul.rn.f64 {s}, {z}, {z}"));
    let coeffs: Vec<f64> = (0..12).map(|k| 2.0 / (2 * k + 1) as f64).collect();
    let p = horner(f, Class::F64, "f64", &s, &coeffs, f64_imm);
    let lm = f.reg(Class::F64);
    f.ins(format!("mul.rn.f64 {lm}, {p}, {z}"));
    // y = e·ln2_hi + (log m + e·ln2_lo); e·ln2_hi is exact.
    let y = f.reg(Class::F64);
    f.ins(format!("fma.rn.f64 {lm}, {ef}, {}, {lm}", d(LN2_LO)));
    f.ins(format!("fma.rn.f64 {y}, {ef}, {}, {lm}", d(LN2_HI)));
    // Special cases, last one wins: +inf, ±0 → -inf, negative → NaN, NaN.
    let p = f.reg(Class::Pred);
    f.ins(format!("setp.eq.f64 {p}, {x}, {}", f64_imm(f64::INFINITY)));
    f.ins(format!("selp.f64 {y}, {x}, {y}, {p}"));
    f.ins(format!("setp.eq.f64 {p}, {x}, {}", f64_imm(0.0)));
    f.ins(format!(
        "selp.f64 {y}, {}, {y}, {p}",
        f64_imm(f64::NEG_INFINITY)
    ));
    f.ins(format!("setp.lt.f64 {p}, {x}, {}", f64_imm(0.0)));
    f.ins(format!("selp.f64 {y}, {}, {y}, {p}", f64_imm(f64::NAN)));
    f.ins(format!("setp.nan.f64 {p}, {x}, {x}"));
    f.ins(format!("selp.f64 {y}, {x}, {y}, {p}"));
    y
}

/// `sin(x)` (`shift = 0`) or `cos(x)` (`shift = 1`): [`crate::trig`].
pub(crate) fn sincos_f64(f: &mut Func, x: &str, shift: u32) -> String {
    trig::sincos_f64(f, x, shift)
}

/// `tanh(x) = t/(t+2)` with `t = expm1(2|x|)`, sign restored; exactly ±1
/// for |x| > 20 (where tanh rounds to 1 in f64).
pub(crate) fn tanh_f64(f: &mut Func, x: &str) -> String {
    let a = f.reg(Class::F64);
    let big = f.reg(Class::Pred);
    f.ins(format!("abs.f64 {a}, {x}"));
    f.ins(format!("setp.gt.f64 {big}, {a}, {}", f64_imm(20.0)));
    f.ins(format!("selp.f64 {a}, {}, {a}, {big}", f64_imm(20.0)));
    f.ins(format!("add.rn.f64 {a}, {a}, {a}"));
    let (n, q) = expm1_reduced_f64(f, &a);
    // expm1(2|x|) = 2^n·q + (2^n - 1); n is in [0, 58] here.
    let sbits = f.reg(Class::B64);
    let n64 = f.reg(Class::B64);
    f.ins(format!("cvt.s64.s32 {n64}, {n}"));
    f.ins(format!("add.s64 {sbits}, {n64}, 1023"));
    f.ins(format!("shl.b64 {sbits}, {sbits}, 52"));
    let sc = f.reg(Class::F64);
    let sm1 = f.reg(Class::F64);
    let t = f.reg(Class::F64);
    f.ins(format!("mov.b64 {sc}, {sbits}"));
    f.ins(format!("sub.rn.f64 {sm1}, {sc}, {}", f64_imm(1.0)));
    f.ins(format!("fma.rn.f64 {t}, {sc}, {q}, {sm1}"));
    let den = f.reg(Class::F64);
    let y = f.reg(Class::F64);
    f.ins(format!("add.rn.f64 {den}, {t}, {}", f64_imm(2.0)));
    f.ins(format!("div.rn.f64 {y}, {t}, {den}"));
    f.ins(format!("selp.f64 {y}, {}, {y}, {big}", f64_imm(1.0)));
    f.ins(format!("copysign.f64 {y}, {x}, {y}"));
    y
}

// --- shared pieces -----------------------------------------------------------

/// `c[0] + v·(c[1] + v·(c[2] + …))` with `fma`.
pub(crate) fn horner(
    f: &mut Func,
    class: Class,
    ty: &str,
    v: &str,
    c: &[f64],
    imm: impl Fn(f64) -> String,
) -> String {
    let acc = f.reg(class);
    f.ins(format!("mov.{ty} {acc}, {}", imm(c[c.len() - 1])));
    for coeff in c[..c.len() - 1].iter().rev() {
        f.ins(format!("fma.rn.{ty} {acc}, {acc}, {v}, {}", imm(*coeff)));
    }
    acc
}

/// `x` clamped to [lo, hi] with comparisons, so NaN stays NaN.
fn clamp(f: &mut Func, class: Class, ty: &str, x: &str, lo: String, hi: String) -> String {
    let p = f.reg(Class::Pred);
    let y = f.reg(class);
    f.ins(format!("setp.gt.{ty} {p}, {x}, {hi}"));
    f.ins(format!("selp.{ty} {y}, {hi}, {x}, {p}"));
    f.ins(format!("setp.lt.{ty} {p}, {y}, {lo}"));
    f.ins(format!("selp.{ty} {y}, {lo}, {y}, {p}"));
    y
}

#[derive(Clone, Copy)]
pub(crate) enum Pow2 {
    F32,
    F64,
}

/// `p · 2^n` as `p · 2^(n>>1) · 2^(n - n>>1)`: each factor is a normal
/// float for the clamped ranges used above, and only the last multiply
/// rounds into the subnormal range.
pub(crate) fn scale_pow2(f: &mut Func, kind: Pow2, p: &str, n: &str) -> String {
    let n1 = f.reg(Class::B32);
    let n2 = f.reg(Class::B32);
    f.ins(format!("shr.s32 {n1}, {n}, 1"));
    f.ins(format!("sub.s32 {n2}, {n}, {n1}"));
    let mut y = p.to_string();
    for half in [n1, n2] {
        let s = match kind {
            Pow2::F32 => {
                let b = f.reg(Class::B32);
                let s = f.reg(Class::F32);
                f.ins(format!("add.s32 {b}, {half}, 127"));
                f.ins(format!("shl.b32 {b}, {b}, 23"));
                f.ins(format!("mov.b32 {s}, {b}"));
                s
            }
            Pow2::F64 => {
                let b = f.reg(Class::B64);
                let s = f.reg(Class::F64);
                f.ins(format!("cvt.s64.s32 {b}, {half}"));
                f.ins(format!("add.s64 {b}, {b}, 1023"));
                f.ins(format!("shl.b64 {b}, {b}, 52"));
                f.ins(format!("mov.b64 {s}, {b}"));
                s
            }
        };
        let (class, ty) = match kind {
            Pow2::F32 => (Class::F32, "f32"),
            Pow2::F64 => (Class::F64, "f64"),
        };
        let d = f.reg(class);
        f.ins(format!("mul.rn.{ty} {d}, {y}, {s}"));
        y = d;
    }
    y
}
