"""inline assembly: a structured TensorTensor add (c = a + b on DVE) and a
raw TensorScalar bundle (c *= 2 on Activation, sync type barrier, so it
runs after the add and before the store)."""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((128, 64)), "y": rng.standard_normal((128, 64))}


def reference(x, y):
    return {"out": (x.astype(np.float32) + y.astype(np.float32)) * np.float32(2)}
