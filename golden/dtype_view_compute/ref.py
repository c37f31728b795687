"""Dtype views as compute operands.  x and y are float32 tensors whose bytes
are pairs of bfloat16 values k / 8 (k in -16..16, little-endian: the pair's
first value is the low half), so every bf16 product and sum below is exact
in float32 and the matmul needs no tolerance.  Each expected output comes
from NumPy's .view() of those bytes: xb the bf16 values themselves, mm the
matmul of the two [128, 128] bf16 views (stationary.T @ moving), sum their
bf16 sum stored back as the float32 whose bytes it fills, hi each float32's
bits shifted right by 16 (the logical shift of the int32 view)."""
import numpy as np

import lowp


def _pairs(rng):
    v = rng.integers(-16, 17, (128, 128)) / 8.0
    bits = lowp.to_bits(lowp.round_to(v, "bfloat16"), "bfloat16").astype("<u2")
    return v, np.ascontiguousarray(bits).view("<f4")


def make_inputs(rng):
    return {"x": _pairs(rng)[1], "y": _pairs(rng)[1]}


def _halves(t):
    """The [128, 128] bf16 view of a [128, 64] float32 tensor, as float64."""
    return lowp.from_bits(np.ascontiguousarray(t, "<f4").view("<u2"), "bfloat16").astype(np.float64)


def reference(x, y):
    xv, yv = _halves(x), _halves(y)
    s = lowp.round_to(xv + yv, "bfloat16")
    sbits = lowp.to_bits(s, "bfloat16").astype("<u2")
    return {"xb": xv,
            "mm": (xv.T @ yv).astype(np.float32),
            "sum": np.ascontiguousarray(sbits).view("<f4"),
            "hi": (np.ascontiguousarray(x, "<f4").view("<u4") >> 16).astype(np.int32)}
