"""NKI quantize_mx (OCP MX, fp8e4m3): for each block of 32 consecutive
elements of a partition, amax = max |x|, the E8M0 scale is
s = floor(log2(amax)) - 8 + 127 (8 = e4m3's largest exponent), clamped to
[0, 254], and 0 for an all-zero block; the data are x * 2^(127 - s) clamped
to +-448 then rounded to fp8e4m3 (RNE; lowp.round_to).  Blocks span
magnitudes from 1e-3 to 1e3, one is all zeros and one holds a value just
under the next power of two (the clamp to 448 matters there)."""
import numpy as np

from lowp import round_to


def make_inputs(rng):
    x = rng.standard_normal((16, 128))
    mags = 10.0 ** rng.uniform(-3, 3, (16, 4))
    x *= np.repeat(mags, 32, axis=1)
    x[3, 32:64] = 0.0
    x[5, 0:32] = rng.uniform(-1.0, 1.0, 32)
    x[5, 7] = 511.9                       # amax just below 512: s = 127, data clamp at 448
    return {"x": x}


def reference(x):
    x = x.astype(np.float32).astype(np.float64)
    blocks = x.reshape(16, 4, 32)
    amax = np.abs(blocks).max(axis=2)
    e = np.floor(np.log2(np.where(amax > 0, amax, 1.0)))
    s = np.clip(e - 8 + 127, 0, 254)
    s = np.where(amax > 0, s, 0)
    data = blocks * np.exp2(127.0 - s)[:, :, None]
    data = np.clip(data, -448.0, 448.0)
    return {"q": round_to(data.reshape(16, 128), "float8_e4m3fn"), "s": s.astype(np.uint8)}
