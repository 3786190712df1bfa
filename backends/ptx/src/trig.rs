//! `sin`/`cos` over the whole `f64` range (and `f32`, computed in `f64` and
//! rounded once).
//!
//! Each PTX emitter here is followed by its Rust model (`*_model`), which
//! performs the very same operations with the same constants, in the same
//! order: `fma` is `f64::mul_add`, `mul.hi.u64` is the top half of a `u128`
//! product, PTX shifts clamp the amount at 64 (`shl`/`shr` below). The models
//! are what the tests measure against Rust's `std` (see the tests at the end);
//! the PTX itself is only assembled, not run, by this crate's tests.
//!
//! Algorithm: `x = q·π/2 + r` with `r = rh + rl` a double-double,
//! |r| ≲ π/4, then `sin r` / `cos r` by Taylor polynomials with `rl` as a
//! first-order correction, picked and negated by `q mod 4`.
//! - |x| ≤ 2³⁰ (the fast path, branch-free): Cody–Waite with π/2 in three
//!   parts; `x - k·P1` is exact with `fma`, `k·P2` is split exactly with
//!   `fma` and the differences are carried as double-doubles.
//! - 2³⁰ < |x| < ∞ (taken on `@p bra` only by the threads that need it):
//!   Payne–Hanek. With `|x| = m·2^s` (`m` the 53-bit integer significand),
//!   192 bits of 2/π starting at bit `s - 1` (from [`TWO_OVER_PI_BITS`]) times
//!   `m` give `x·2/π mod 4` as a fixed-point number with 128 fraction bits;
//!   the dropped leading bits of 2/π contribute multiples of 4, the dropped
//!   trailing ones less than 2⁻¹³⁷.
//! - NaN and ±∞ stay on the fast path and come out NaN; `sin` returns `x`
//!   itself for |x| < 2⁻²⁶ (where `sin x` rounds to `x`), so `sin(±0) = ±0`.

use crate::func::{f64_imm, Class, Func};

/// π/2 as `P1 + P2 + P3` (the rest is below 2⁻¹⁶⁰).
const PIO2: [u64; 3] = [
    0x3FF9_21FB_5444_2D18,
    0x3C91_A626_3314_5C07,
    0xB91F_1976_B7ED_8FBC,
];
/// 2/π rounded to `f64`.
const TWO_OVER_PI: u64 = 0x3FE4_5F30_6DC9_C883;
/// Largest |x| reduced by the fast path.
pub(crate) const FAST_MAX: f64 = 1_073_741_824.0; // 2^30
/// Below this |x|, `sin x` rounds to `x`.
const SIN_IS_X: f64 = 1.0 / 67_108_864.0; // 2^-26

/// Name of the module-level table of [`TWO_OVER_PI_BITS`].
pub(crate) const TABLE: &str = "oxla_two_over_pi";

/// The bits of 2/π after the binary point, 64 per word, most significant
/// first, after one word of zeros (so windows may start before the point).
/// Generated with exact integer arithmetic (π by Machin's formula to 1564
/// bits, then ⌊2^1216·2/π⌋); the first word is 2/π·2⁶⁴ = 0xA2F9836E….
pub(crate) const TWO_OVER_PI_BITS: [u64; 20] = [
    0,
    0xA2F9_836E_4E44_1529,
    0xFC27_57D1_F534_DDC0,
    0xDB62_9599_3C43_9041,
    0xFE51_63AB_DEBB_C561,
    0xB724_6E3A_424D_D2E0,
    0x0649_2EEA_09D1_921C,
    0xFE1D_EB1C_B129_A73E,
    0xE882_35F5_2EBB_4484,
    0xE99C_7026_B45F_7E41,
    0x3991_D639_8353_39F4,
    0x9C84_5F8B_BDF9_283B,
    0x1FF8_97FF_DE05_980F,
    0xEF2F_118B_5A0A_6D1F,
    0x6D36_7ECF_27CB_09B7,
    0x4F46_3F66_9E5F_EA2D,
    0x7527_BAC7_EBE5_F17B,
    0x3D07_39F7_8A52_92EA,
    0x6BFB_5FB1_1F8D_5D08,
    0x5603_3046_FC7B_6BAB,
];

/// The `.const` declaration of the table, placed once in a module that uses
/// `sin` or `cos`.
pub(crate) fn table_decl() -> String {
    let words: Vec<String> = TWO_OVER_PI_BITS
        .iter()
        .map(|w| format!("0x{w:016X}"))
        .collect();
    format!(
        ".const .align 8 .u64 {TABLE}[{}] = {{{}}};\n",
        TWO_OVER_PI_BITS.len(),
        words.join(", ")
    )
}

fn d(bits: u64) -> String {
    f64_imm(f64::from_bits(bits))
}

fn p(i: usize) -> f64 {
    f64::from_bits(PIO2[i])
}

/// `sin x` (`shift = 0`) or `cos x` (`shift = 1`) of the f64 register `x`.
pub(crate) fn sincos_f64(f: &mut Func, x: &str, shift: u32) -> String {
    let (q, rh, rl) = fast_reduce(f, x);
    let a = f.reg(Class::F64);
    let (big, finite, small) = (f.reg(Class::Pred), f.reg(Class::Pred), f.reg(Class::Pred));
    f.ins(format!("abs.f64 {a}, {x}"));
    f.ins(format!("setp.gt.f64 {big}, {a}, {}", f64_imm(FAST_MAX)));
    f.ins(format!(
        "setp.lt.f64 {finite}, {a}, {}",
        f64_imm(f64::INFINITY)
    ));
    f.ins(format!("and.pred {big}, {big}, {finite}"));
    let join = f.new_label("trig_join");
    f.ins(format!("@!{big} bra {join}"));
    payne_hanek(f, x, &q, &rh, &rl);
    f.place_label(&join);
    let y = tail(f, &q, &rh, &rl, shift);
    if shift == 0 {
        f.ins(format!("setp.lt.f64 {small}, {a}, {}", f64_imm(SIN_IS_X)));
        f.ins(format!("selp.f64 {y}, {x}, {y}, {small}"));
    }
    y
}

/// Model of [`sincos_f64`].
#[cfg(test)]
pub(crate) fn sincos_f64_model(x: f64, shift: u32) -> f64 {
    let (mut q, mut rh, mut rl) = fast_reduce_model(x);
    let a = x.abs();
    let big = a > FAST_MAX && a < f64::INFINITY;
    if big {
        (q, rh, rl) = payne_hanek_model(x);
    }
    let mut y = tail_model(q, rh, rl, shift);
    if shift == 0 && a < SIN_IS_X {
        y = x;
    }
    y
}

/// `(a + b)` as `s + e` exactly (Knuth's TwoSum, any magnitudes).
fn two_sum(f: &mut Func, a: &str, b: &str) -> (String, String) {
    let (s, bb, t, e) = (
        f.reg(Class::F64),
        f.reg(Class::F64),
        f.reg(Class::F64),
        f.reg(Class::F64),
    );
    f.ins(format!("add.rn.f64 {s}, {a}, {b}"));
    f.ins(format!("sub.rn.f64 {bb}, {s}, {a}"));
    f.ins(format!("sub.rn.f64 {t}, {s}, {bb}"));
    f.ins(format!("sub.rn.f64 {t}, {a}, {t}"));
    f.ins(format!("sub.rn.f64 {e}, {b}, {bb}"));
    f.ins(format!("add.rn.f64 {e}, {t}, {e}"));
    (s, e)
}

#[cfg(test)]
fn two_sum_model(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let t = a - (s - bb);
    let e = b - bb;
    (s, t + e)
}

/// Cody–Waite: `k = rni(x·2/π)`, `r = x - k·(P1 + P2 + P3)` as `rh + rl`;
/// returns (`k` as s64, `rh`, `rl`).
fn fast_reduce(f: &mut Func, x: &str) -> (String, String, String) {
    let (k, nk, r1, t, nt, te) = (
        f.reg(Class::F64),
        f.reg(Class::F64),
        f.reg(Class::F64),
        f.reg(Class::F64),
        f.reg(Class::F64),
        f.reg(Class::F64),
    );
    f.ins(format!("mul.rn.f64 {k}, {x}, {}", d(TWO_OVER_PI)));
    f.ins(format!("cvt.rni.f64.f64 {k}, {k}"));
    f.ins(format!("neg.f64 {nk}, {k}"));
    // Exact: k·P1 and x are multiples of 2^-52 (|x| ≥ 1) and |r1| < 1.
    f.ins(format!("fma.rn.f64 {r1}, {nk}, {}, {x}", f64_imm(p(0))));
    // k·P2 = t + te exactly.
    f.ins(format!("mul.rn.f64 {t}, {k}, {}", f64_imm(p(1))));
    f.ins(format!("neg.f64 {nt}, {t}"));
    f.ins(format!("fma.rn.f64 {te}, {k}, {}, {nt}", f64_imm(p(1))));
    let (s, e) = two_sum(f, &r1, &nt);
    let lo = f.reg(Class::F64);
    f.ins(format!("sub.rn.f64 {lo}, {e}, {te}"));
    f.ins(format!("fma.rn.f64 {lo}, {nk}, {}, {lo}", f64_imm(p(2))));
    let (rh, rl) = two_sum(f, &s, &lo);
    let q = f.reg(Class::B64);
    f.ins(format!("cvt.rzi.s64.f64 {q}, {k}"));
    (q, rh, rl)
}

#[cfg(test)]
fn fast_reduce_model(x: f64) -> (i64, f64, f64) {
    let k = (x * f64::from_bits(TWO_OVER_PI)).round_ties_even();
    let nk = -k;
    let r1 = nk.mul_add(p(0), x);
    let t = k * p(1);
    let nt = -t;
    let te = k.mul_add(p(1), nt);
    let (s, e) = two_sum_model(r1, nt);
    let lo = e - te;
    let lo = nk.mul_add(p(2), lo);
    let (rh, rl) = two_sum_model(s, lo);
    // `cvt.rzi.s64.f64` saturates and gives 0 for NaN, like `as`.
    (k as i64, rh, rl)
}

/// PTX shifts clamp the amount: 64 or more gives 0.
#[cfg(test)]
fn shl(a: u64, n: u32) -> u64 {
    if n >= 64 {
        0
    } else {
        a << n
    }
}

#[cfg(test)]
fn shr(a: u64, n: u32) -> u64 {
    if n >= 64 {
        0
    } else {
        a >> n
    }
}

#[cfg(test)]
fn mul_hi(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) >> 64) as u64
}

/// Payne–Hanek for finite |x| > [`FAST_MAX`]: overwrites `q`, `rh`, `rl`.
fn payne_hanek(f: &mut Func, x: &str, q: &str, rh: &str, rl: &str) {
    let r64 = |f: &mut Func| f.reg(Class::B64);
    let (bits, ex, m, p0, j) = (r64(f), r64(f), r64(f), r64(f), r64(f));
    f.ins(format!("mov.b64 {bits}, {x}"));
    f.ins(format!("shr.u64 {ex}, {bits}, 52"));
    f.ins(format!("and.b64 {ex}, {ex}, 2047"));
    f.ins(format!("and.b64 {m}, {bits}, 4503599627370495"));
    f.ins(format!("or.b64 {m}, {m}, 4503599627370496"));
    // |x| = m·2^s, s = ex - 1075; the window starts at bit s - 1 of 2/π,
    // bit s + 62 of the padded table.
    f.ins(format!("sub.u64 {p0}, {ex}, 1013"));
    f.ins(format!("shr.u64 {j}, {p0}, 6"));
    let (sh, rsh) = (f.reg(Class::B32), f.reg(Class::B32));
    f.ins(format!("cvt.u32.u64 {sh}, {p0}"));
    f.ins(format!("and.b32 {sh}, {sh}, 63"));
    f.ins(format!("sub.u32 {rsh}, 64, {sh}"));
    let addr = r64(f);
    f.ins(format!("mov.u64 {addr}, {TABLE}"));
    f.ins(format!("mad.lo.u64 {addr}, {j}, 8, {addr}"));
    let t: Vec<String> = (0..4)
        .map(|i| {
            let r = r64(f);
            f.ins(format!("ld.const.u64 {r}, [{addr}+{}]", 8 * i));
            r
        })
        .collect();
    let w: Vec<String> = (0..3)
        .map(|i| {
            let (a, b) = (r64(f), r64(f));
            f.ins(format!("shl.b64 {a}, {}, {sh}", t[i]));
            f.ins(format!("shr.b64 {b}, {}, {rsh}", t[i + 1]));
            f.ins(format!("or.b64 {a}, {a}, {b}"));
            a
        })
        .collect();
    // m·W mod 2^192 as limbs l2:l1:l0; the binary point is at bit 190.
    let (l0, hi2, lo1, hi1, lo0) = (r64(f), r64(f), r64(f), r64(f), r64(f));
    f.ins(format!("mul.lo.u64 {l0}, {m}, {}", w[2]));
    f.ins(format!("mul.hi.u64 {hi2}, {m}, {}", w[2]));
    f.ins(format!("mul.lo.u64 {lo1}, {m}, {}", w[1]));
    f.ins(format!("mul.hi.u64 {hi1}, {m}, {}", w[1]));
    f.ins(format!("mul.lo.u64 {lo0}, {m}, {}", w[0]));
    let (l1, l2, c) = (r64(f), r64(f), r64(f));
    let pc = f.reg(Class::Pred);
    f.ins(format!("add.u64 {l1}, {hi2}, {lo1}"));
    f.ins(format!("setp.lt.u64 {pc}, {l1}, {lo1}"));
    f.ins(format!("selp.u64 {c}, 1, 0, {pc}"));
    f.ins(format!("add.u64 {l2}, {hi1}, {lo0}"));
    f.ins(format!("add.u64 {l2}, {l2}, {c}"));
    // Integer part mod 4 and 128 fraction bits fh:fl.
    let (fh, fl, tmp) = (r64(f), r64(f), r64(f));
    f.ins(format!("shl.b64 {fh}, {l2}, 2"));
    f.ins(format!("shr.b64 {tmp}, {l1}, 62"));
    f.ins(format!("or.b64 {fh}, {fh}, {tmp}"));
    f.ins(format!("shl.b64 {fl}, {l1}, 2"));
    f.ins(format!("shr.b64 {tmp}, {l0}, 62"));
    f.ins(format!("or.b64 {fl}, {fl}, {tmp}"));
    // A fraction ≥ ½ rounds the quadrant up and leaves f - 1 < 0, whose
    // magnitude is the ones' complement (within 2^-128).
    let (qa, mask) = (r64(f), r64(f));
    f.ins(format!("shr.u64 {qa}, {l2}, 62"));
    f.ins(format!("shr.u64 {tmp}, {fh}, 63"));
    f.ins(format!("add.u64 {qa}, {qa}, {tmp}"));
    f.ins(format!("shr.s64 {mask}, {fh}, 63"));
    f.ins(format!("xor.b64 {fh}, {fh}, {mask}"));
    f.ins(format!("xor.b64 {fl}, {fl}, {mask}"));
    // Normalize (fh = 0 gives lz = 64, and the clamped shifts move fl up).
    let (lz, rlz) = (f.reg(Class::B32), f.reg(Class::B32));
    f.ins(format!("clz.b64 {lz}, {fh}"));
    f.ins(format!("sub.u32 {rlz}, 64, {lz}"));
    let (nh, nl) = (r64(f), r64(f));
    f.ins(format!("shl.b64 {nh}, {fh}, {lz}"));
    f.ins(format!("shr.b64 {tmp}, {fl}, {rlz}"));
    f.ins(format!("or.b64 {nh}, {nh}, {tmp}"));
    f.ins(format!("shl.b64 {nl}, {fl}, {lz}"));
    // Top 53 bits (exact in f64) and the next 64 (rounded once).
    let (hi_int, lo_int) = (r64(f), r64(f));
    f.ins(format!("and.b64 {hi_int}, {nh}, -2048"));
    f.ins(format!("and.b64 {lo_int}, {nh}, 2047"));
    f.ins(format!("shl.b64 {lo_int}, {lo_int}, 53"));
    f.ins(format!("shr.b64 {tmp}, {nl}, 11"));
    f.ins(format!("or.b64 {lo_int}, {lo_int}, {tmp}"));
    // Scale 2^-(64+lz), built from its exponent bits.
    let (lz64, sbits) = (r64(f), r64(f));
    f.ins(format!("cvt.u64.u32 {lz64}, {lz}"));
    f.ins(format!("sub.u64 {sbits}, 959, {lz64}"));
    f.ins(format!("shl.b64 {sbits}, {sbits}, 52"));
    let rf = |f: &mut Func| f.reg(Class::F64);
    let (sc, gh, gl, ng) = (rf(f), rf(f), rf(f), rf(f));
    f.ins(format!("mov.b64 {sc}, {sbits}"));
    f.ins(format!("cvt.rn.f64.u64 {gh}, {hi_int}"));
    f.ins(format!("mul.rn.f64 {gh}, {gh}, {sc}"));
    f.ins(format!("cvt.rn.f64.u64 {gl}, {lo_int}"));
    f.ins(format!(
        "mul.rn.f64 {gl}, {gl}, {}",
        f64_imm(2f64.powi(-53))
    ));
    f.ins(format!("mul.rn.f64 {gl}, {gl}, {sc}"));
    let pn = f.reg(Class::Pred);
    f.ins(format!("setp.ne.u64 {pn}, {mask}, 0"));
    f.ins(format!("neg.f64 {ng}, {gh}"));
    f.ins(format!("selp.f64 {gh}, {ng}, {gh}, {pn}"));
    f.ins(format!("neg.f64 {ng}, {gl}"));
    f.ins(format!("selp.f64 {gl}, {ng}, {gl}, {pn}"));
    // r = (gh + gl)·(P1 + P2), as a double-double.
    let (ph, e, ah, al) = (rf(f), rf(f), rf(f), rf(f));
    f.ins(format!("mul.rn.f64 {ph}, {gh}, {}", f64_imm(p(0))));
    f.ins(format!("neg.f64 {ng}, {ph}"));
    f.ins(format!("fma.rn.f64 {e}, {gh}, {}, {ng}", f64_imm(p(0))));
    f.ins(format!("fma.rn.f64 {e}, {gh}, {}, {e}", f64_imm(p(1))));
    f.ins(format!("fma.rn.f64 {e}, {gl}, {}, {e}", f64_imm(p(0))));
    f.ins(format!("add.rn.f64 {ah}, {ph}, {e}"));
    f.ins(format!("sub.rn.f64 {al}, {ah}, {ph}"));
    f.ins(format!("sub.rn.f64 {al}, {e}, {al}"));
    // Negative x: x = -(q·π/2 + r).
    let xn = f.reg(Class::Pred);
    let nq = r64(f);
    f.ins(format!("setp.lt.f64 {xn}, {x}, 0d0000000000000000"));
    f.ins(format!("neg.s64 {nq}, {qa}"));
    f.ins(format!("selp.b64 {q}, {nq}, {qa}, {xn}"));
    f.ins(format!("neg.f64 {ng}, {ah}"));
    f.ins(format!("selp.f64 {rh}, {ng}, {ah}, {xn}"));
    f.ins(format!("neg.f64 {ng}, {al}"));
    f.ins(format!("selp.f64 {rl}, {ng}, {al}, {xn}"));
}

#[cfg(test)]
fn payne_hanek_model(x: f64) -> (i64, f64, f64) {
    let bits = x.to_bits();
    let ex = (bits >> 52) & 2047;
    let m = (bits & 4503599627370495) | 4503599627370496;
    let p0 = ex - 1013;
    let j = (p0 >> 6) as usize;
    let sh = (p0 as u32) & 63;
    let rsh = 64 - sh;
    let t = &TWO_OVER_PI_BITS[j..j + 4];
    let w: Vec<u64> = (0..3).map(|i| shl(t[i], sh) | shr(t[i + 1], rsh)).collect();
    let l0 = m.wrapping_mul(w[2]);
    let hi2 = mul_hi(m, w[2]);
    let lo1 = m.wrapping_mul(w[1]);
    let hi1 = mul_hi(m, w[1]);
    let lo0 = m.wrapping_mul(w[0]);
    let l1 = hi2.wrapping_add(lo1);
    let c = u64::from(l1 < lo1);
    let l2 = hi1.wrapping_add(lo0).wrapping_add(c);
    let mut fh = (l2 << 2) | (l1 >> 62);
    let mut fl = (l1 << 2) | (l0 >> 62);
    let qa = (l2 >> 62) + (fh >> 63);
    let mask = ((fh as i64) >> 63) as u64;
    fh ^= mask;
    fl ^= mask;
    let lz = fh.leading_zeros();
    let rlz = 64 - lz;
    let nh = shl(fh, lz) | shr(fl, rlz);
    let nl = shl(fl, lz);
    let hi_int = nh & (-2048i64 as u64);
    let lo_int = ((nh & 2047) << 53) | (nl >> 11);
    let sc = f64::from_bits((959 - lz as u64) << 52);
    let mut gh = hi_int as f64 * sc;
    let mut gl = lo_int as f64 * 2f64.powi(-53) * sc;
    if mask != 0 {
        gh = -gh;
        gl = -gl;
    }
    let ph = gh * p(0);
    let e = gh.mul_add(p(0), -ph);
    let e = gh.mul_add(p(1), e);
    let e = gl.mul_add(p(0), e);
    let ah = ph + e;
    let al = e - (ah - ph);
    if x < 0.0 {
        (-(qa as i64), -ah, -al)
    } else {
        (qa as i64, ah, al)
    }
}

/// `(-1)^i / (2i + 1)!` for i in `from..=to` (sine) or `(-1)^i / (2i)!`
/// (cosine).
fn taylor(odd: bool, from: usize, to: usize) -> Vec<f64> {
    let mut inv = vec![1.0f64];
    for k in 1..=2 * to + 1 {
        inv.push(inv[k - 1] / k as f64);
    }
    (from..=to)
        .map(|i| {
            let s = if i % 2 == 0 { 1.0 } else { -1.0 };
            s * inv[2 * i + usize::from(odd)]
        })
        .collect()
}

/// `c[0] + v·(c[1] + v·(c[2] + …))` with `fma`.
fn horner(f: &mut Func, v: &str, c: &[f64]) -> String {
    let acc = f.reg(Class::F64);
    f.ins(format!("mov.f64 {acc}, {}", f64_imm(c[c.len() - 1])));
    for coeff in c[..c.len() - 1].iter().rev() {
        f.ins(format!("fma.rn.f64 {acc}, {acc}, {v}, {}", f64_imm(*coeff)));
    }
    acc
}

#[cfg(test)]
fn horner_model(v: f64, c: &[f64]) -> f64 {
    let mut acc = c[c.len() - 1];
    for coeff in c[..c.len() - 1].iter().rev() {
        acc = acc.mul_add(v, *coeff);
    }
    acc
}

/// `sin(r)` and `cos(r)` for `r = rh + rl`, picked by `(q + shift) mod 4`:
/// sin r = rh + (rh·s·Q(s) + rl·(1 - s/2)), s = rh²;
/// cos r = w + ((1 - w - s/2) + s²·R(s) - rh·rl), w = 1 - s/2.
fn tail(f: &mut Func, q: &str, rh: &str, rl: &str, shift: u32) -> String {
    let rf = |f: &mut Func| f.reg(Class::F64);
    let (s, u, hs, nhs, c, t, sinr) = (rf(f), rf(f), rf(f), rf(f), rf(f), rf(f), rf(f));
    f.ins(format!("mul.rn.f64 {s}, {rh}, {rh}"));
    let sq = horner(f, &s, &taylor(true, 1, 8));
    f.ins(format!("mul.rn.f64 {u}, {rh}, {s}"));
    f.ins(format!("mul.rn.f64 {hs}, {s}, {}", f64_imm(0.5)));
    f.ins(format!("neg.f64 {nhs}, {hs}"));
    f.ins(format!("fma.rn.f64 {c}, {nhs}, {rl}, {rl}"));
    f.ins(format!("fma.rn.f64 {t}, {u}, {sq}, {c}"));
    f.ins(format!("add.rn.f64 {sinr}, {rh}, {t}"));
    let (w, corr, s2, nrh, v, cosr) = (rf(f), rf(f), rf(f), rf(f), rf(f), rf(f));
    let one = f64_imm(1.0);
    let cr = horner(f, &s, &taylor(false, 2, 9));
    f.ins(format!("sub.rn.f64 {w}, {one}, {hs}"));
    f.ins(format!("sub.rn.f64 {corr}, {one}, {w}"));
    f.ins(format!("sub.rn.f64 {corr}, {corr}, {hs}"));
    f.ins(format!("mul.rn.f64 {s2}, {s}, {s}"));
    f.ins(format!("neg.f64 {nrh}, {rh}"));
    f.ins(format!("fma.rn.f64 {v}, {nrh}, {rl}, {corr}"));
    f.ins(format!("fma.rn.f64 {v}, {s2}, {cr}, {v}"));
    f.ins(format!("add.rn.f64 {cosr}, {w}, {v}"));
    // Quadrant: odd → cosine, bit 1 → negate.
    let (qq, bit) = (f.reg(Class::B64), f.reg(Class::B64));
    let pp = f.reg(Class::Pred);
    let (y, ny) = (rf(f), rf(f));
    f.ins(format!("add.s64 {qq}, {q}, {shift}"));
    f.ins(format!("and.b64 {bit}, {qq}, 1"));
    f.ins(format!("setp.ne.u64 {pp}, {bit}, 0"));
    f.ins(format!("selp.f64 {y}, {cosr}, {sinr}, {pp}"));
    f.ins(format!("neg.f64 {ny}, {y}"));
    f.ins(format!("and.b64 {bit}, {qq}, 2"));
    f.ins(format!("setp.ne.u64 {pp}, {bit}, 0"));
    f.ins(format!("selp.f64 {y}, {ny}, {y}, {pp}"));
    y
}

#[cfg(test)]
fn tail_model(q: i64, rh: f64, rl: f64, shift: u32) -> f64 {
    let s = rh * rh;
    let sq = horner_model(s, &taylor(true, 1, 8));
    let u = rh * s;
    let hs = s * 0.5;
    let nhs = -hs;
    let c = nhs.mul_add(rl, rl);
    let t = u.mul_add(sq, c);
    let sinr = rh + t;
    let cr = horner_model(s, &taylor(false, 2, 9));
    let w = 1.0 - hs;
    let corr = (1.0 - w) - hs;
    let s2 = s * s;
    let v = (-rh).mul_add(rl, corr);
    let v = s2.mul_add(cr, v);
    let cosr = w + v;
    let qq = q.wrapping_add(shift as i64);
    let y = if qq & 1 != 0 { cosr } else { sinr };
    if qq & 2 != 0 {
        -y
    } else {
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in units of the last place between two finite f64 of the
    /// same sign (or a NaN check); counts representable values between.
    fn ulps64(a: f64, b: f64) -> u64 {
        if a.is_nan() || b.is_nan() {
            return if a.is_nan() && b.is_nan() {
                0
            } else {
                u64::MAX
            };
        }
        let key = |v: f64| {
            let b = v.to_bits() as i64;
            if b < 0 {
                i64::MIN - b
            } else {
                b
            }
        };
        key(a).abs_diff(key(b))
    }

    fn ulps32(a: f32, b: f32) -> u64 {
        if a.is_nan() || b.is_nan() {
            return if a.is_nan() && b.is_nan() {
                0
            } else {
                u64::MAX
            };
        }
        let key = |v: f32| {
            let b = v.to_bits() as i32 as i64;
            if b < 0 {
                i32::MIN as i64 - b
            } else {
                b
            }
        };
        key(a).abs_diff(key(b))
    }

    /// SplitMix64, for reproducible samples without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
    }

    /// Worst ulp error of the f64 model against std over `xs`: (sin, cos),
    /// each with its input.
    fn worst64(xs: impl Iterator<Item = f64>) -> [(u64, f64); 2] {
        let mut worst = [(0, 0.0); 2];
        for x in xs {
            for (i, (got, want)) in [
                (sincos_f64_model(x, 0), x.sin()),
                (sincos_f64_model(x, 1), x.cos()),
            ]
            .into_iter()
            .enumerate()
            {
                let e = ulps64(got, want);
                if e > worst[i].0 {
                    worst[i] = (e, x);
                }
            }
        }
        worst
    }

    /// The f32 path: widen, the f64 algorithm, round once.
    fn worst32(xs: impl Iterator<Item = f32>) -> [(u64, f32); 2] {
        let mut worst = [(0, 0.0); 2];
        for x in xs {
            let xd = x as f64;
            for (i, (got, want)) in [
                (sincos_f64_model(xd, 0) as f32, xd.sin() as f32),
                (sincos_f64_model(xd, 1) as f32, xd.cos() as f32),
            ]
            .into_iter()
            .enumerate()
            {
                let e = ulps32(got, want);
                if e > worst[i].0 {
                    worst[i] = (e, x);
                }
            }
        }
        worst
    }

    #[test]
    fn table_is_two_over_pi() {
        // The leading words against the f64 constant; the rest is pinned by
        // the huge-argument tests below, which use every word.
        let lead = TWO_OVER_PI_BITS[1] as f64 / 2f64.powi(64);
        assert_eq!(lead, std::f64::consts::FRAC_2_PI);
        assert_eq!(f64::from_bits(TWO_OVER_PI), std::f64::consts::FRAC_2_PI);
        let sum: f64 = PIO2.iter().map(|&b| f64::from_bits(b)).sum();
        assert_eq!(sum, std::f64::consts::FRAC_PI_2);
    }

    #[test]
    fn f64_special_values() {
        for shift in [0, 1] {
            assert!(sincos_f64_model(f64::NAN, shift).is_nan());
            assert!(sincos_f64_model(f64::INFINITY, shift).is_nan());
            assert!(sincos_f64_model(f64::NEG_INFINITY, shift).is_nan());
        }
        assert_eq!(sincos_f64_model(0.0, 0).to_bits(), 0.0f64.to_bits());
        assert_eq!(sincos_f64_model(-0.0, 0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(sincos_f64_model(0.0, 1), 1.0);
        assert_eq!(sincos_f64_model(-0.0, 1), 1.0);
        let tiny = f64::from_bits(1);
        assert_eq!(sincos_f64_model(-tiny, 0), -tiny);
    }

    /// Log-uniform |x| in [2^-30, 2^30], every fourth a rounded multiple
    /// of π/2 (where the reduction cancels most).
    fn fast_inputs(count: usize, seed: u64) -> Vec<f64> {
        let mut rng = Rng(seed);
        (0..count)
            .map(|i| {
                let e = (rng.next() % 60) as i32 - 30;
                let m = 1.0 + (rng.next() >> 11) as f64 / 2f64.powi(53);
                let x = m * 2f64.powi(e);
                let x = if i % 4 == 0 {
                    (x.round() * std::f64::consts::FRAC_PI_2).min(FAST_MAX)
                } else {
                    x
                };
                if rng.next() & 1 == 1 {
                    -x
                } else {
                    x
                }
            })
            .collect()
    }

    /// Random doubles above the threshold (uniform over the bit patterns,
    /// so every exponent and every table word), both signs, plus the ends.
    fn huge_inputs(count: usize, seed: u64) -> Vec<f64> {
        let mut rng = Rng(seed);
        let lo = FAST_MAX.to_bits();
        let hi = f64::MAX.to_bits();
        let mut xs: Vec<f64> = (0..count)
            .map(|_| {
                let x = f64::from_bits(lo + 1 + rng.next() % (hi - lo));
                if rng.next() & 1 == 1 {
                    -x
                } else {
                    x
                }
            })
            .collect();
        xs.extend([
            f64::MAX,
            -f64::MAX,
            f64::from_bits(lo + 1),
            1e20,
            -1e20,
            1e300,
            f32::MAX as f64,
        ]);
        xs
    }

    #[test]
    fn f64_fast_path_within_1_ulp_of_std() {
        let w = worst64(fast_inputs(20_000, 1).into_iter());
        println!("f64 fast path worst: sin {:?}, cos {:?}", w[0], w[1]);
        assert!(w[0].0 <= 1 && w[1].0 <= 1, "{w:?}");
    }

    /// The double closest to a multiple of π/2: x = 6381956970095103·2^797,
    /// x mod π/2 = 4.6871659242546276111…e-19 in quadrant 1 (Muller,
    /// "Elementary Functions", table of worst cases for range reduction;
    /// re-derived with exact rational arithmetic). std's `cos` is 8 ulp off
    /// here, so this one is checked against the exact value.
    #[test]
    fn f64_worst_case_for_reduction() {
        let x = 6381956970095103.0 * 2f64.powi(797);
        let r = 4.687_165_924_254_628e-19_f64;
        // sin(x) = cos(r) = 1 (r² is far below 2^-53); cos(x) = -sin(r) = -r.
        assert_eq!(sincos_f64_model(x, 0), 1.0);
        assert_eq!(sincos_f64_model(x, 1), -r);
        assert_eq!(sincos_f64_model(-x, 0), -1.0);
        assert_eq!(sincos_f64_model(-x, 1), -r);
    }

    #[test]
    fn f64_payne_hanek_within_1_ulp_of_std() {
        let w = worst64(huge_inputs(20_000, 2).into_iter());
        println!("f64 Payne–Hanek worst: sin {:?}, cos {:?}", w[0], w[1]);
        assert!(w[0].0 <= 1 && w[1].0 <= 1, "{w:?}");
    }

    /// Every `step`-th f32 bit pattern from `from` to `to` (both signs).
    fn f32_range(from: f32, to: f32, step: u32) -> impl Iterator<Item = f32> {
        (from.to_bits()..=to.to_bits())
            .step_by(step as usize)
            .flat_map(|b| [f32::from_bits(b), -f32::from_bits(b)])
    }

    /// f32 inputs: |x| ≤ 2^30, |x| > 2^30, and the top binade, each every
    /// `step[i]`-th bit pattern; then NaN and ±∞.
    fn check_f32(step: [u32; 3]) {
        let w = worst32(f32_range(0.0, FAST_MAX as f32, step[0]));
        println!(
            "f32 |x| ≤ 2^30, every {}th: sin {:?}, cos {:?}",
            step[0], w[0], w[1]
        );
        assert!(w[0].0 <= 1 && w[1].0 <= 1, "{w:?}");
        let w = worst32(f32_range(FAST_MAX as f32, 2f32.powi(127), step[1]));
        println!(
            "f32 |x| > 2^30, every {}th: sin {:?}, cos {:?}",
            step[1], w[0], w[1]
        );
        assert!(w[0].0 <= 1 && w[1].0 <= 1, "{w:?}");
        let w = worst32(f32_range(2f32.powi(127), f32::MAX, step[2]));
        println!(
            "f32 top binade, every {}th: sin {:?}, cos {:?}",
            step[2], w[0], w[1]
        );
        assert!(w[0].0 <= 1 && w[1].0 <= 1, "{w:?}");
        let special = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
        assert_eq!(worst32(special.into_iter()), [(0, 0.0); 2], "NaN out");
    }

    #[test]
    fn f32_within_1_ulp_of_std_sampled() {
        check_f32([40_009, 20_011, 1_009]);
    }

    /// The full runs (minutes; run them optimized):
    /// `cargo test -p oxla-ptx --release --lib -- --ignored trig`.
    #[test]
    #[ignore]
    fn f64_full_10e6_huge_and_fast() {
        let w = worst64(huge_inputs(1_000_000, 3).into_iter());
        println!(
            "f64 Payne–Hanek, 10^6 inputs: sin {:?}, cos {:?}",
            w[0], w[1]
        );
        assert!(w[0].0 <= 1 && w[1].0 <= 1, "{w:?}");
        let w = worst64(fast_inputs(1_000_000, 4).into_iter());
        println!("f64 fast path, 10^6 inputs: sin {:?}, cos {:?}", w[0], w[1]);
        assert!(w[0].0 <= 1 && w[1].0 <= 1, "{w:?}");
    }

    #[test]
    #[ignore]
    fn f32_full_dense() {
        check_f32([61, 7, 1]);
    }
}
