"""Error in ulp, against mpmath at 200 bits, of the pow results that differ
from Rust std, as written by `OXLA_POW_DUMP=file cargo test -p oxla-cpu
--test suite pow::error_in_ulp` (one line per result: the type, then the f64 bits
of x, y and the result, in hex). Prints the worst error per type, apart for
subnormal results.

    python3 pow_mpmath.py file
"""
import math
import struct
import sys

import mpmath

mpmath.mp.prec = 200


def from_bits(h):
    return struct.unpack("<d", struct.pack("<Q", int(h, 16)))[0]


def ulp(v, ty):
    """The gap above |v| in its binade (the accuracy module's definition)."""
    bits, min_normal, min_gap = (53, 2.0**-1022, 2.0**-1074) if ty == "f64" else (24, 2.0**-126, 2.0**-149)
    v = abs(v)
    if v < min_normal:
        return min_gap
    return 2.0 ** (math.frexp(v)[1] - bits)


def round_to(v, ty):
    return v if ty == "f64" else struct.unpack("<f", struct.pack("<f", v))[0]


worst = {}
for line in open(sys.argv[1]):
    ty, xb, yb, gb = line.split()
    x, y, got = from_bits(xb), from_bits(yb), from_bits(gb)
    if math.isnan(got) or math.isinf(got):
        print("special:", ty, x, y, got)
        continue
    exact = mpmath.power(abs(mpmath.mpf(x)), mpmath.mpf(y))
    if x < 0 and int(y) % 2:
        exact = -exact
    rounded = round_to(float(exact), ty)
    key = ty + (" subnormal" if abs(rounded) < (2.0**-1022 if ty == "f64" else 2.0**-126) else "")
    err = float(abs(mpmath.mpf(got) - exact) / ulp(rounded, ty))
    if key not in worst or err > worst[key][0]:
        worst[key] = (err, x, y, got)
for key, (err, x, y, got) in sorted(worst.items()):
    print(f"{key}: {err:.3f} ulp at pow({x!r}, {y!r}) = {got!r}")
