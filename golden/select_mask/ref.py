"""out = np.where(pred != 0, x, -5)"""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((128, 64)), "pred": rng.integers(0, 2, (128, 64))}


def reference(x, pred):
    return {"out": np.where(pred != 0, x, -5.0)}
