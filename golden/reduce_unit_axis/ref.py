"""tensor_reduce over axes of one element each: every result is its one
element (NKI), negated for negate.  The ALU computes the add through fp32,
so an int32 past 2^24 rounds as the reduction would round it; a bitwise op
keeps the integer's bits."""
import numpy as np


def make_inputs(rng):
    # odd int32 values between 2^24 and 2^30: float32 cannot hold most of them
    i = (rng.integers(1 << 23, 1 << 29, size=(128, 6, 1)) * 2 + 1).astype(np.int32)
    i[:, 0, 0] = -i[:, 0, 0]
    return {"x": rng.standard_normal((128, 4, 1)).astype(np.float32), "i": i}


def reference(x, i):
    return {"sum": x[:, :, 0], "negmax": -x[:, :, 0],
            "isum": i[:, :, 0].astype(np.float32).astype(np.int32),
            "ior": i[:, :, 0], "sum_axes": x[:, 0, 0]}
