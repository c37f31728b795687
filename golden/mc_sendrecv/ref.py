"""Each core subtracts the other core's block (received with sendrecv)."""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((256, 64)).astype(np.float32)}


def reference(x):
    x = x.astype(np.float32)
    return {"out": np.concatenate([x[:128] - x[128:], x[128:] - x[:128]]).astype(np.float32)}
