"""every rank gets the add over ranks (in rank order) of its x[rank]"""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((4, 128, 64)).astype(np.float32)}


def reference(x):
    r = x[0].astype(np.float32)
    for k in range(1, 4):
        r = np.add(r, x[k])
    return {"out": np.stack([r] * 4).astype(np.float32)}
