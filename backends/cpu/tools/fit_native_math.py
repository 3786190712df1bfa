#!/usr/bin/env python3
"""Fit the polynomial coefficients of the native kernels' f32 math
(`backends/cpu/src/native/prelude.rs`) and print them as Rust constants:
f32 coefficients for the functions computed in f32 lanes, f64 ones for f32
erf, which is computed in f64.

Each fit minimizes the maximum relative error of the function on its
interval: a weighted least-squares fit on a dense grid whose weights are
multiplied by the residual at each step (Lawson's iteration, which converges
to the minimax fit), against mpmath at 40 digits. Coefficients are rounded
to f32 one at a time, lowest degree first, refitting the rest each time, so
the rounding costs almost nothing. Needs numpy and mpmath.
Run: python3 backends/cpu/tools/fit_native_math.py
"""
import struct

import mpmath as mp
import numpy as np

mp.mp.dps = 40


def to_f32(v):
    return struct.unpack("f", struct.pack("f", float(v)))[0]


def lawson(a, b, scale, steps=100):
    """Coefficients c minimizing max |a c - b| * scale, and that maximum."""
    w = np.ones(len(b))
    for _ in range(steps):
        sw = np.sqrt(w) * scale
        c, *_ = np.linalg.lstsq(a * sw[:, None], b * sw, rcond=None)
        r = (a @ c - b) * scale
        w = w * np.abs(r)
        w /= w.sum()
    return c, np.abs(r).max()


def fit_rounded(a, g, scale):
    """As `lawson`, rounding each coefficient to f32 in turn."""
    fixed = []
    for i in range(a.shape[1]):
        rest = g - (a[:, :i] @ np.array(fixed) if fixed else 0)
        c, _ = lawson(a[:, i:], rest, scale)
        fixed.append(to_f32(c[0]))
    err = np.abs((a @ np.array(fixed) - g) * scale).max()
    return fixed, err


def exp_coefficients(degree):
    """e^r = 1 + r + r²·(c₂ + c₃r + …) on |r| ≤ ln2/2, relative error."""
    half = float(mp.log(2)) / 2
    r = np.linspace(-half, half, 20001)
    r = r[np.abs(r) > 1e-12]
    e = np.array([float(mp.exp(mp.mpf(x))) for x in r])
    g = (e - 1 - r) / (r * r)
    a = np.vander(r, degree - 1, increasing=True)
    c, err = fit_rounded(a, g, r * r / e)
    return [1.0, 1.0] + c, err


def tanh_odd_coefficients(degree, top=1.0):
    """tanh a = a + a·t·S(t), t = a², on 0 < a ≤ top, relative error."""
    x = np.linspace(1e-4, top, 20000)
    t = x * x
    th = np.array([float(mp.tanh(mp.mpf(v))) for v in x])
    g = (th - x) / (x * t)
    a = np.vander(t, degree + 1, increasing=True)
    return fit_rounded(a, g, x * t / th)


def erf_small_coefficients():
    """erf(a)/a as a polynomial in a² on (0, 1], relative error; f64."""
    a = np.linspace(1e-6, 1.0, 8001)
    g = np.array([float(mp.erf(mp.mpf(v)) / mp.mpf(v)) for v in a])
    c, err = lawson(np.vander(a * a, 8, increasing=True), g, 1 / g)
    return [float(v) for v in c], err


def erfcx_coefficients():
    """erfc(a)·e^{a²} as a polynomial in a − 2.5 on [1, 4], relative; f64."""
    a = np.linspace(1.0, 4.0, 12001)
    g = np.array([float(mp.erfc(mp.mpf(v)) * mp.exp(mp.mpf(v) ** 2)) for v in a])
    c, err = lawson(np.vander(a - 2.5, 16, increasing=True), g, 1 / g)
    return [float(v) for v in c], err


def show(name, coefficients, err, what, ty="f32"):
    print(f"/// {what}: relative error {err:.2e}.")
    print(f"const {name}: [{ty}; {len(coefficients)}] = [")
    for c in coefficients:
        print(f"    {c!r},")
    print("];")


if __name__ == "__main__":
    show("EXP_F32_DEG6", *exp_coefficients(6), "e^r, |r| <= ln2/2")
    show("EXP_F32_DEG5", *exp_coefficients(5), "e^r, |r| <= ln2/2")
    show("TANH_F32_ODD", *tanh_odd_coefficients(6), "S(t) of tanh a = a + a t S(t), a <= 1")
    show("ERF_F32_SMALL", *erf_small_coefficients(), "erf(a)/a in a², 0 < a <= 1", "f64")
    show("ERFCX_F32", *erfcx_coefficients(), "erfc(a) e^(a²) in a - 2.5, 1 <= a <= 4", "f64")
