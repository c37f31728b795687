"""integer bit operations (right_shift is logical: the ISA has no arithmetic
right shift) and float element-wise ops"""
import numpy as np


def make_inputs(rng):
    return {"xi": rng.integers(-2**20, 2**20, (128, 64)), "yi": rng.integers(-2**30, 2**30, (128, 64)),
            "a": rng.standard_normal((128, 64)), "b": rng.standard_normal((128, 64)) + 0.1}


def reference(xi, yi, a, b):
    xi32, yi32 = xi.astype(np.int32), yi.astype(np.int32)
    shr = (xi32.view(np.uint32) >> 4).astype(np.int64)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return {"and_shl": (xi32 & 255) << 3, "xor": xi32 ^ yi32, "shr": shr,
            "fmax": np.maximum(a, b),
            "absmax": np.maximum(np.abs(a), np.abs(b)),
            "ge": (a >= b).astype(np.float64),
            "div": a64 / b64}
