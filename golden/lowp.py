"""Low-precision float emulation for golden references (NumPy only).

The golden references compute in float32/float64 NumPy and round to the
kernel's storage dtype where the kernel stores in it.  The rounding rules
are those of common/numeric.h (docs/semantics.md), re-implemented here
independently by bit manipulation and exact power-of-two arithmetic:

  * round to nearest, ties to even;
  * bfloat16 and float16 overflow to +-inf; float8_e5m2 overflows to +-inf;
  * float8_e4m3 (NKI's legacy IEEE-style e4m3: max 240) overflows to +-inf;
  * float8_e4m3fn (no infinities, max 448) overflows to NaN: a value whose
    rounded magnitude exceeds 448 becomes NaN (464 rounds to 448 by
    ties-to-even, anything above 464 is NaN), and +-inf becomes NaN;
  * subnormals are kept (gradual underflow); NaN stays NaN.

Values travel as float32 arrays holding exactly representable values (the
.npy convention of docs/artifacts.md).  `python3 golden/lowp.py` runs the
self-check against hand-computed bit patterns.
"""
import sys

import numpy as np

# name: (exponent bits, mantissa bits, what overflow becomes)
FORMATS = {
    "bfloat16": (8, 7, "inf"),
    "float16": (5, 10, "inf"),
    "float8_e4m3fn": (4, 3, "nan"),
    "float8_e5m2": (5, 2, "inf"),
    "float8_e4m3": (4, 3, "inf"),
}
ALIASES = {"bf16": "bfloat16", "fp16": "float16", "fp8e4m3ieee": "float8_e4m3",
           "fp8e4m3": "float8_e4m3fn", "fp8e5m2": "float8_e5m2", "fp32": "float32"}


def _fmt(name):
    name = ALIASES.get(name, name)
    if name not in FORMATS:
        raise ValueError("unknown low-precision format %r" % name)
    return name, FORMATS[name]


def _max_finite(ebits, mbits, overflow):
    bias = (1 << (ebits - 1)) - 1
    if overflow == "nan":
        # e4m3fn: all-ones exponent is a normal binade except mantissa 111 (NaN)
        emax = (1 << ebits) - 1 - bias
        return (2.0 - 2.0 ** (1 - mbits)) * 2.0 ** emax
    emax = (1 << ebits) - 2 - bias
    return (2.0 - 2.0 ** (-mbits)) * 2.0 ** emax


def round_to(x, dtype):
    """Round float values to `dtype` (RNE) and return them as float32."""
    if dtype in ("float32", "fp32"):
        return np.asarray(x, dtype=np.float32)
    name, (ebits, mbits, overflow) = _fmt(dtype)
    x = np.asarray(x, dtype=np.float64)
    if name == "bfloat16":
        return _round_bf16_bits(x.astype(np.float32))
    bias = (1 << (ebits - 1)) - 1
    emin = 1 - bias                       # exponent of the smallest normal
    ax = np.abs(x)
    finite = np.isfinite(x)
    safe = np.where(finite & (ax > 0), ax, 1.0)
    _, e = np.frexp(safe)                 # safe = m * 2**e, m in [0.5, 1)
    e = np.maximum(e - 1, emin)           # exponent of the leading bit, clamped
    quantum = np.ldexp(1.0, e - mbits)    # spacing of representable values there
    r = np.round(safe / quantum) * quantum   # np.round: ties to even, exact here
    r = np.where(finite & (ax > 0), r, ax)
    over = finite & (r > _max_finite(ebits, mbits, overflow))
    r = np.where(over, np.inf if overflow == "inf" else np.nan, r)
    if overflow == "nan":
        r = np.where(np.isinf(x), np.nan, r)   # no infinities: +-inf becomes NaN
    r = np.where(np.isnan(x), np.nan, r)
    return np.copysign(r, x).astype(np.float32)


def _round_bf16_bits(x32):
    """bfloat16 RNE by integer arithmetic on the float32 bit pattern."""
    b = x32.view(np.uint32).astype(np.uint64)
    lsb = (b >> 16) & 1
    rounded = ((b + 0x7FFF + lsb) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x32), np.float32(np.nan), out).astype(np.float32)


def to_bits(x, dtype):
    """Encode values (rounded first) to the format's bit patterns (uint)."""
    name, (ebits, mbits, overflow) = _fmt(dtype)
    if name == "bfloat16":
        r = round_to(x, name)
        return (r.view(np.uint32) >> 16).astype(np.uint16)
    if name == "float16":
        with np.errstate(over="ignore"):
            return np.asarray(x, dtype=np.float32).astype(np.float16).view(np.uint16)
    r = round_to(x, name).astype(np.float64)
    bias = (1 << (ebits - 1)) - 1
    sign = np.signbit(r).astype(np.uint8) << 7
    ar = np.abs(r)
    out = np.zeros(r.shape, dtype=np.uint8)
    for idx in np.ndindex(r.shape):
        v = ar[idx]
        if np.isnan(v):
            code = 0x7F if overflow == "nan" else ((1 << ebits) - 1) << mbits | 1 << (mbits - 1)
        elif np.isinf(v):
            code = ((1 << ebits) - 1) << mbits
        elif v == 0:
            code = 0
        else:
            _, e = np.frexp(v)
            e = e - 1
            if e < 1 - bias:               # subnormal
                code = int(round(v / 2.0 ** (1 - bias - mbits)))
            else:
                man = int(round((v / 2.0 ** e - 1.0) * (1 << mbits)))
                code = (e + bias) << mbits | man
        out[idx] = code
    return out | sign


def from_bits(bits, dtype):
    """Decode bit patterns of a low-precision format to float32."""
    name, (ebits, mbits, overflow) = _fmt(dtype)
    bits = np.asarray(bits)
    if name == "bfloat16":
        return (bits.astype(np.uint32) << 16).view(np.float32)
    if name == "float16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float32)
    bias = (1 << (ebits - 1)) - 1
    b = bits.astype(np.int64)
    sign = np.where(b & 0x80, -1.0, 1.0)
    e = (b >> mbits) & ((1 << ebits) - 1)
    m = b & ((1 << mbits) - 1)
    val = np.where(e == 0, m * 2.0 ** (1 - bias - mbits),
                   (1.0 + m / float(1 << mbits)) * np.power(2.0, (e - bias).astype(np.float64)))
    if overflow == "nan":
        val = np.where((e == (1 << ebits) - 1) & (m == (1 << mbits) - 1), np.nan, val)
    else:
        top = e == (1 << ebits) - 1
        val = np.where(top & (m == 0), np.inf, np.where(top, np.nan, val))
    return (sign * val).astype(np.float32)


# ---- self check ---------------------------------------------------------

def _expect(cond, what, failures):
    if not cond:
        failures.append(what)


def _check_bits(dtype, value, want, failures):
    got = int(to_bits(np.array([value], dtype=np.float64), dtype)[0])
    _expect(got == want, "%s(%r): bits 0x%X, want 0x%X" % (dtype, value, got, want), failures)


def self_check():
    """Rounding against hand-computed bit patterns; returns a list of failures."""
    f = []
    # bfloat16: 1 sign, 8 exponent, 7 mantissa bits
    _check_bits("bfloat16", 1.0, 0x3F80, f)
    _check_bits("bfloat16", -2.0, 0xC000, f)
    _check_bits("bfloat16", 1.0 + 2.0 ** -8, 0x3F80, f)        # tie -> even (down)
    _check_bits("bfloat16", 1.0 + 3 * 2.0 ** -8, 0x3F82, f)    # tie -> even (up)
    _check_bits("bfloat16", 1.0 + 2.0 ** -8 + 2.0 ** -20, 0x3F81, f)  # above tie
    _check_bits("bfloat16", 3.0e38, 0x7F62, f)
    _check_bits("bfloat16", 3.4e38, 0x7F80, f)                 # overflow -> +inf
    _check_bits("bfloat16", 2.0 ** -133, 0x0001, f)            # smallest subnormal
    # float16 (NumPy native): 1-5-10
    _check_bits("float16", 1.0, 0x3C00, f)
    _check_bits("float16", 65504.0, 0x7BFF, f)
    _check_bits("float16", 65520.0, 0x7C00, f)                 # tie -> inf (even)
    _check_bits("float16", 2.0 ** -24, 0x0001, f)
    # float8_e4m3fn: 1-4-3, bias 7, max 448, no inf, NaN = S.1111.111
    _check_bits("float8_e4m3fn", 1.0, 0x38, f)
    _check_bits("float8_e4m3fn", -2.0, 0xC0, f)
    _check_bits("float8_e4m3fn", 448.0, 0x7E, f)
    _check_bits("float8_e4m3fn", 464.0, 0x7E, f)               # tie -> 448 (even mantissa)
    _check_bits("float8_e4m3fn", 470.0, 0x7F, f)               # overflow -> NaN
    _check_bits("float8_e4m3fn", 1.0625, 0x38, f)              # tie 1.0 / 1.125 -> 1.0
    _check_bits("float8_e4m3fn", 1.1875, 0x3A, f)              # tie 1.125 / 1.25 -> 1.25
    _check_bits("float8_e4m3fn", 2.0 ** -9, 0x01, f)           # smallest subnormal
    _check_bits("float8_e4m3fn", 2.0 ** -10, 0x00, f)          # tie -> 0 (even)
    _check_bits("float8_e4m3fn", 3 * 2.0 ** -10, 0x02, f)      # tie -> 2^-8 (even)
    _check_bits("float8_e4m3fn", 0.015625, 0x08, f)            # 2^-6 smallest normal
    # float8_e5m2: 1-5-2, bias 15, max 57344, has inf
    _check_bits("float8_e5m2", 1.0, 0x3C, f)
    _check_bits("float8_e5m2", 57344.0, 0x7B, f)
    _check_bits("float8_e5m2", 61440.0, 0x7C, f)               # tie -> inf (even)
    _check_bits("float8_e5m2", 2.0 ** -16, 0x01, f)
    _check_bits("float8_e5m2", -1.25, 0xBD, f)
    _check_bits("float8_e4m3fn", np.inf, 0x7F, f)              # no inf in e4m3fn: NaN
    # float8_e4m3 (NKI legacy, IEEE style): 1-4-3, bias 7, max 240, inf = S.1111.000
    _check_bits("float8_e4m3", 240.0, 0x77, f)
    _check_bits("float8_e4m3", 247.0, 0x77, f)
    _check_bits("float8_e4m3", 248.0, 0x78, f)                 # tie -> inf (even)
    _check_bits("float8_e4m3", -np.inf, 0xF8, f)
    _check_bits("float8_e4m3", 2.0 ** -9, 0x01, f)
    _check_bits("float8_e5m2", -np.inf, 0xFC, f)
    _check_bits("bfloat16", np.inf, 0x7F80, f)
    # NaN stays NaN, decode of NaN/inf codes
    for dt in FORMATS:
        r = round_to(np.array([np.nan]), dt)
        _expect(np.isnan(r[0]), "%s: NaN not preserved" % dt, f)
    _expect(np.isnan(from_bits(np.array([0x7F], dtype=np.uint8), "float8_e4m3fn")[0]),
            "e4m3fn 0x7F must decode to NaN", f)
    _expect(from_bits(np.array([0x7E], dtype=np.uint8), "float8_e4m3fn")[0] == 448.0,
            "e4m3fn 0x7E must decode to 448", f)
    _expect(np.isinf(from_bits(np.array([0x7C], dtype=np.uint8), "float8_e5m2")[0]),
            "e5m2 0x7C must decode to inf", f)
    # every code round-trips through decode -> round (finite codes)
    for dt in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3"):
        codes = np.arange(256, dtype=np.uint8)
        vals = from_bits(codes, dt)
        ok = np.isfinite(vals)
        back = to_bits(vals[ok], dt)
        bad = np.nonzero((back != codes[ok]) & (vals[ok] != 0))[0]
        _expect(len(bad) == 0, "%s: %d codes do not round-trip" % (dt, len(bad)), f)
        _expect(np.array_equal(round_to(vals[ok], dt), vals[ok]),
                "%s: representable values must be fixed points" % dt, f)
    return f


if __name__ == "__main__":
    failures = self_check()
    for msg in failures:
        print("FAIL", msg)
    print("lowp self-check: %s (%s)" % ("FAIL" if failures else "PASS",
                                         "%d failures" % len(failures) if failures else "all bit patterns match"))
    sys.exit(1 if failures else 0)
