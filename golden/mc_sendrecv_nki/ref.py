"""Each core sends its block to the other (NKI ring on two ranks), doubles
what it received and sends it back: out = 2 * x - x = x, through two
exchanges (the second over the gpsimd DMA)."""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((256, 64)).astype(np.float32)}


def reference(x):
    x = x.astype(np.float32)
    return {"out": (np.float32(2.0) * x - x).astype(np.float32)}
