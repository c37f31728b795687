"""Dtype views: every expected output is NumPy's own .view() of the input
bytes; the fp8 / bf16 ones decoded from those bytes (lowp.from_bits, the
golden decoder).  x's bytes are valid fp8 e4m3 (no inf / NaN pattern);
w holds the bits of bf16 values, so its views as bf16, fp32 and int32 are
all finite numbers."""
import numpy as np

import lowp

_FP8_OK = np.array([b for b in range(256) if (b & 0x78) != 0x78], np.uint8)


def make_inputs(rng):
    x = rng.choice(_FP8_OK, (128, 64)).view(np.float32)
    b = lowp.round_to(rng.standard_normal((64, 16)), "bfloat16")
    w = lowp.to_bits(b, "bfloat16").astype("<u2").view(np.uint8)
    return {"x": x, "w": w}


def reference(x, w):
    xb = np.ascontiguousarray(x, "<f4").view(np.uint8)
    w = np.ascontiguousarray(w, np.uint8)
    pk = np.concatenate([xb[:, 0:16], xb[:, 20:24]], axis=1)
    return {"u8": xb,
            "pk": lowp.from_bits(pk, "float8_e4m3"),
            "wb": lowp.from_bits(w.view("<u2"), "bfloat16"),
            "wf": w.view("<f4"),
            "wi": w.view("<i4")}
