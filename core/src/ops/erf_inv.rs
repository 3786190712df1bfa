//! The inverse error function, as JAX computes it: XLA expands `erf_inv`
//! into Giles' polynomial approximations ("Approximating the erfinv
//! function", GPU Computing Gems, 2011) of `w = −log1p(−x²)`, the
//! single-precision one for f32 (two ranges of `w`) and the
//! double-precision one for f64 (three ranges). The kernels run that
//! expansion in the operand's dtype (`expand`); the reference (`reference`)
//! is the double-precision polynomial refined by Newton steps on `erf` and
//! `erfc`, an independent check of the kernels' values within a few ulp.

use crate::dtype::DType;
use crate::ir::{Function, Var};
use crate::ops::elementwise::{CmpOp, UnaryOp};

// The coefficients as Giles printed them (and XLA declares them).

/// Giles' single-precision coefficients, highest degree first: `w < 5`
/// (in `w − 2.5`), then `w ≥ 5` (in `√w − 3`).
#[allow(clippy::excessive_precision)]
const F32_CENTRAL: [f32; 9] = [
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
];
#[allow(clippy::excessive_precision)]
const F32_TAIL: [f32; 9] = [
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
];

/// Giles' double-precision coefficients, highest degree first: `w < 6.25`
/// (in `w − 3.125`), `w < 16` (in `√w − 3.25`), else (in `√w − 5`).
#[allow(clippy::excessive_precision)]
const F64_CENTRAL: [f64; 23] = [
    -3.6444120640178196996e-21,
    -1.685059138182016589e-19,
    1.2858480715256400167e-18,
    1.115787767802518096e-17,
    -1.333171662854620906e-16,
    2.0972767875968561637e-17,
    6.6376381343583238325e-15,
    -4.0545662729752068639e-14,
    -8.1519341976054721522e-14,
    2.6335093153082322977e-12,
    -1.2975133253453532498e-11,
    -5.4154120542946279317e-11,
    1.051212273321532285e-09,
    -4.1126339803469836976e-09,
    -2.9070369957882005086e-08,
    4.2347877827932403518e-07,
    -1.3654692000834678645e-06,
    -1.3882523362786468719e-05,
    0.0001867342080340571352,
    -0.00074070253416626697512,
    -0.0060336708714301490533,
    0.24015818242558961693,
    1.6536545626831027356,
];
#[allow(clippy::excessive_precision)]
const F64_MIDDLE: [f64; 19] = [
    2.2137376921775787049e-09,
    9.0756561938885390979e-08,
    -2.7517406297064545428e-07,
    1.8239629214389227755e-08,
    1.5027403968909827627e-06,
    -4.013867526981545969e-06,
    2.9234449089955446044e-06,
    1.2475304481671778723e-05,
    -4.7318229009055733981e-05,
    6.8284851459573175448e-05,
    2.4031110387097893999e-05,
    -0.0003550375203628474796,
    0.00095328937973738049703,
    -0.0016882755560235047313,
    0.0024914420961078508066,
    -0.0037512085075692412107,
    0.005370914553590063617,
    1.0052589676941592334,
    3.0838856104922207635,
];
#[allow(clippy::excessive_precision)]
const F64_TAIL: [f64; 17] = [
    -2.7109920616438573243e-11,
    -2.5556418169965252055e-10,
    1.5076572693500548083e-09,
    -3.7894654401267369937e-09,
    7.6157012080783393804e-09,
    -1.4960026627149240478e-08,
    2.9147953450901080826e-08,
    -6.7711997758452339498e-08,
    2.2900482228026654717e-07,
    -9.9298272942317002539e-07,
    4.5260625972231537039e-06,
    -1.9681778105531670567e-05,
    7.5995277030017761139e-05,
    -0.00021503011930044477347,
    -0.00013871931833623122026,
    1.0103004648645343977,
    4.8499064014085844221,
];

fn horner(c: &[f64], w: f64) -> f64 {
    c[1..].iter().fold(c[0], |p, k| k + p * w)
}

/// `erf_inv(x)` in f64, within a few ulp: Giles' double-precision value
/// refined by two Newton steps, on `erf(y) = x` in the middle and on
/// `erfc(y) = 1 − |x|` (exact for `|x| ≥ ½`) in the tails, where `erf` has
/// no digits left to compare.
pub fn reference(x: f64) -> f64 {
    let a = x.abs();
    if a.is_nan() || a > 1.0 {
        return f64::NAN;
    }
    if a == 1.0 {
        return f64::INFINITY.copysign(x);
    }
    // −log(1 − a²), with 1 − a² = (1 − a)(1 + a) exact to an ulp.
    let w = if a < 0.5 {
        -(-a * a).ln_1p()
    } else {
        -((1.0 - a) * (1.0 + a)).ln()
    };
    let mut y = a * if w < 6.25 {
        horner(&F64_CENTRAL, w - 3.125)
    } else if w < 16.0 {
        horner(&F64_MIDDLE, w.sqrt() - 3.25)
    } else {
        horner(&F64_TAIL, w.sqrt() - 5.0)
    };
    for _ in 0..2 {
        let slope = std::f64::consts::FRAC_2_SQRT_PI * (-y * y).exp();
        let miss = if a < 0.5 {
            libm::erf(y) - a
        } else {
            (1.0 - a) - libm::erfc(y)
        };
        if slope > 0.0 && miss.is_finite() {
            y -= miss / slope;
        }
    }
    y.copysign(x)
}

/// `erf_inv(x)` as primitive ops in the dtype of `x`: XLA's expansion
/// (`w = −log1p(−x²)` by Kahan's formula, the polynomial of `w`'s range,
/// times `x`; ±inf at ±1, NaN beyond, where `log` is NaN).
pub fn expand(f: &mut Function, x: Var) -> Var {
    let x2 = f.mul(x, x);
    let u = f.neg(x2);
    let one = f.full_like(1.0, x);
    let v = f.add(one, u);
    let ln_v = f.unary(UnaryOp::Log, v);
    let v_1 = f.sub(v, one);
    let ratio = f.div(u, v_1);
    let kahan = f.mul(ln_v, ratio);
    let tiny = f.cmp(CmpOp::Eq, v, one);
    let log1p = f.select(tiny, u, kahan);
    let w = f.neg(log1p);
    let sqrt_w = f.unary(UnaryOp::Sqrt, w);
    let p = if f.dtype(x) == DType::F64 {
        let central = poly(f, &F64_CENTRAL, w, 3.125);
        let middle = poly(f, &F64_MIDDLE, sqrt_w, 3.25);
        let tail = poly(f, &F64_TAIL, sqrt_w, 5.0);
        let below_16 = below(f, w, 16.0);
        let outer = f.select(below_16, middle, tail);
        let below_6 = below(f, w, 6.25);
        f.select(below_6, central, outer)
    } else {
        let central = F32_CENTRAL.map(f64::from);
        let tail = F32_TAIL.map(f64::from);
        let central = poly(f, &central, w, 2.5);
        let tail = poly(f, &tail, sqrt_w, 3.0);
        let below_5 = below(f, w, 5.0);
        f.select(below_5, central, tail)
    };
    let y = f.mul(p, x);
    let inf = f.full_like(f64::INFINITY, x);
    let minus_inf = f.full_like(f64::NEG_INFINITY, x);
    let minus_one = f.full_like(-1.0, x);
    let at_one = f.cmp(CmpOp::Eq, x, one);
    let at_minus_one = f.cmp(CmpOp::Eq, x, minus_one);
    let y = f.select(at_minus_one, minus_inf, y);
    f.select(at_one, inf, y)
}

/// XLA's expansion on one f32 (for host code that needs JAX's values, such
/// as `normal` samples): `w = −log1p(−x²)` (the platform's `log1p`, where
/// XLA has its own: they may differ in the last bit), Giles' polynomial by
/// Horner's rule with fused multiply-adds (as XLA's CPU code contracts
/// them).
pub fn erf_inv_f32(x: f32) -> f32 {
    let w = -(-(x * x)).ln_1p();
    let fma_horner = |c: &[f32], t: f32| c[1..].iter().fold(c[0], |p, k| p.mul_add(t, *k));
    let p = if w < 5.0 {
        fma_horner(&F32_CENTRAL, w - 2.5)
    } else {
        fma_horner(&F32_TAIL, w.sqrt() - 3.0)
    };
    if x == 1.0 {
        f32::INFINITY
    } else if x == -1.0 {
        f32::NEG_INFINITY
    } else {
        p * x
    }
}

/// XLA's expansion on one f64, as `erf_inv_f32` on one f32.
pub fn erf_inv_f64(x: f64) -> f64 {
    let w = -(-(x * x)).ln_1p();
    let fma_horner = |c: &[f64], t: f64| c[1..].iter().fold(c[0], |p, k| p.mul_add(t, *k));
    let p = if w < 6.25 {
        fma_horner(&F64_CENTRAL, w - 3.125)
    } else if w < 16.0 {
        fma_horner(&F64_MIDDLE, w.sqrt() - 3.25)
    } else {
        fma_horner(&F64_TAIL, w.sqrt() - 5.0)
    };
    if x == 1.0 {
        f64::INFINITY
    } else if x == -1.0 {
        f64::NEG_INFINITY
    } else {
        p * x
    }
}

/// `c` (highest degree first) at `t − shift`, by Horner's rule.
fn poly(f: &mut Function, c: &[f64], t: Var, shift: f64) -> Var {
    let s = f.full_like(shift, t);
    let t = f.sub(t, s);
    let mut p = f.full_like(c[0], t);
    for k in &c[1..] {
        let pt = f.mul(p, t);
        let k = f.full_like(*k, t);
        p = f.add(k, pt);
    }
    p
}

fn below(f: &mut Function, w: Var, bound: f64) -> Var {
    let b = f.full_like(bound, w);
    f.cmp(CmpOp::Lt, w, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference inverts `erf` within the ulp of its result: `erf(y)
    /// = x` in the middle and `erfc(|y|) = 1 − |x|` in the tail, each up to
    /// two ulp of `y` times the slope (the conditioning: one ulp of `y`
    /// moves `erfc` by up to 34 ulp of `1 − x` near 1) plus the functions'
    /// own rounding, on a grid that reaches the last doubles below 1.
    #[test]
    fn reference_inverts_erf_and_erfc() {
        let mut xs: Vec<f64> = (-999..=999).map(|i| i as f64 / 1000.0).collect();
        xs.extend((1..=52).map(|k| 1.0 - 2f64.powi(-k)));
        for x in xs {
            let y = reference(x);
            let ulp_y = f64::EPSILON * y.abs().max(f64::MIN_POSITIVE);
            let slope = std::f64::consts::FRAC_2_SQRT_PI * (-y * y).exp();
            let (back, want) = if x.abs() < 0.5 {
                (libm::erf(y), x)
            } else {
                (libm::erfc(y.abs()), 1.0 - x.abs())
            };
            let bound = 2.0 * slope * ulp_y + 4.0 * f64::EPSILON * want.abs();
            assert!(
                (back - want).abs() <= bound,
                "erf_inv({x}) = {y}: {back} against {want}, bound {bound}"
            );
            assert_eq!(reference(-x), -y, "odd at {x}");
        }
    }

    #[test]
    fn reference_edges() {
        assert_eq!(reference(1.0), f64::INFINITY);
        assert_eq!(reference(-1.0), f64::NEG_INFINITY);
        assert!(reference(1.5).is_nan());
        assert!(reference(f64::NAN).is_nan());
        assert_eq!(reference(0.0), 0.0);
        assert!(reference(-0.0).is_sign_negative());
    }
}
